// The ACME Issuer/ClusterIssuer controller: account key, registration (once), Ready condition.
import { ClusterIssuer, Issuer, SecretType } from '../../../api/resources.ts';
import type { KubeObject, Secret } from '../../../api/meta.ts';
import { AcmeError, generateAccountKey } from '../../../acme/client.ts';
import { rateLimitWaitMs } from '../../../acme/errors.ts';
import { rfc3339 } from '../../../api/time.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { forController, componentNameOf } from '../../context.ts';
import { splitKey } from '../../../runtime/controller.ts';
import { issuerResourceNamespace } from '../../../shared/issuer-lookup.ts';
import { decodeBase64, parseKeyMemo } from '../../../shared/parse-memo.ts';
import { secretCache } from '../../../shared/secret-cache.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { accountConfigOf } from '../issuer-account.ts';
import { acmeAction, accountKeyHash } from './registry.ts';
import {
  canReuseAccount, isRetryable, knownAccountUrl, notReadyStatus, profileProblem, REASON, registeredEmail, registeredStatus, statusChanged, type AcmeIssuerObj,
} from './account.ts';
import { retryBackoff } from '../../../runtime/workqueue.ts';
import { getCondition } from '../../../api/conditions.ts';
import { brokenSolver } from '../solvers/preflight.ts';

type IssuerObj = AcmeIssuerObj & KubeObject;

class IssuerSetupError extends Error {
  constructor(readonly reason: string, message: string, readonly retry: boolean, readonly clearUri = false) {
    super(message);
  }
}

/** The wait a 429 from the ACME server asked for (RFC 8555 §6.6), when the error is one. */
function rateLimitWaitOf(e: unknown): number | undefined {
  return e instanceof AcmeError && e.shortType === 'rateLimited' ? rateLimitWaitMs(e.retryAfterMs) : undefined;
}

interface AccountKey {
  pem: string;
  generated: boolean;
}

async function accountKey(ctx: ControllerContext, issuer: IssuerObj): Promise<AccountKey> {
  const acme = issuer.spec!.acme!;
  const ref = acme.privateKeySecretRef;
  const field = ref.key || 'tls.key';
  const namespace = issuerResourceNamespace(ctx, issuer);
  const secret = await ctx.store.get<Secret>(SecretType, namespace, ref.name);
  // A deactivated account can never be used again, and RFC 8555 ties an account to its key: only a
  // new key gets a new account. Done only where certsmith may generate keys at all.
  if (secret && getCondition(issuer.status?.conditions, 'Ready')?.reason === 'AccountDeactivated' && !acme.disableAccountKeyGeneration) {
    const pem = generateAccountKey();
    await ctx.store.update<Secret>(SecretType, { ...secret, data: { ...(secret.data ?? {}), [field]: Buffer.from(pem).toString('base64') } }, { fieldManager: componentNameOf('issuers-acme') });
    ctx.recorder.event(issuer, 'Normal', 'AccountKeyReplaced', `Generated a new ACME account key in secret "${namespace}/${ref.name}": the account of the old key was deactivated`);
    return { pem, generated: true };
  }
  if (!secret) {
    if (acme.disableAccountKeyGeneration) {
      throw new IssuerSetupError(REASON.verifyFailed, `Failed to verify ACME account: secret "${namespace}/${ref.name}" not found and account key generation is disabled`, true);
    }
    const pem = generateAccountKey();
    await ctx.store.create<Secret>(SecretType, {
      apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
      metadata: { name: ref.name, namespace, labels: { 'app.kubernetes.io/managed-by': 'cert-manager' } },
      data: { [field]: Buffer.from(pem).toString('base64') },
    }, { fieldManager: componentNameOf('issuers-acme') });
    return { pem, generated: true };
  }
  const pem = decodeBase64(secret.data?.[field]);
  // Never put the key material itself in a message: name the Secret and the field only.
  if (!pem || !parseKeyMemo(pem).value) {
    throw new IssuerSetupError(REASON.verifyFailed, `Failed to verify ACME account: field "${field}" of secret "${namespace}/${ref.name}" does not hold a PEM private key`, false);
  }
  return { pem, generated: false };
}

async function eabOf(ctx: ControllerContext, issuer: IssuerObj): Promise<{ keyId: string; hmacKeyBase64: string } | undefined> {
  const eab = issuer.spec!.acme!.externalAccountBinding;
  if (!eab) return undefined;
  const namespace = issuerResourceNamespace(ctx, issuer);
  const ref = eab.keySecretRef;
  const secret = await ctx.store.get<Secret>(SecretType, namespace, ref.name);
  return { keyId: eab.keyID, hmacKeyBase64: eabKeyOf(secret, ref) };
}

/** The EAB MAC key a Secret holds, or why not, in cert-manager's words (pkg/issuer/acme/setup.go). */
export function eabKeyOf(secret: Secret | undefined, ref: { name: string; key?: string }): string {
  const fail = (why: string) => new IssuerSetupError(REASON.registerFailed, `Failed to register ACME account: ${why}`, false);
  if (!secret) throw fail(`secrets "${ref.name}" not found`);
  const key = ref.key || 'secret';
  if (secret.data?.[key] === undefined) throw fail(`failed to find external account binding key data in Secret "${ref.name}" at index "${key}"`);
  const value = decodeBase64(secret.data[key]).trim();
  if (!value) throw fail(`the external account binding key data in Secret "${ref.name}" at index "${key}" is empty`);
  return value;
}

export function acmeIssuerController(shared: ControllerContext, rt: AcmeRuntime, cluster: boolean): ControllerSpec {
  const ctx = forController(shared, cluster ? 'clusterissuers' : 'issuers');
  const type = cluster ? ClusterIssuer : Issuer;
  const issuers = ctx.informers.informerFor<IssuerObj>(type);
  const secrets = secretCache(ctx.informers);
  const manager = cluster ? 'clusterissuers-acme' : 'issuers-acme';
  /** per Issuer and server: no newAccount before this time (ms), after a 429 */
  const heldUntil = new Map<string, number>();

  async function writeStatus(issuer: IssuerObj, status: NonNullable<IssuerObj['status']>): Promise<void> {
    if (!statusChanged(issuer.status, status)) return;
    await ctx.store.updateStatus(type, { ...issuer, status } as KubeObject, { fieldManager: componentNameOf(manager) });
  }

  return {
    name: manager,
    workers: 2,
    retry: retryBackoff.requestsAndIssuers,
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : `${o.metadata.name}`);
      issuers.onAdd(key);
      issuers.onUpdate((_, n) => key(n));
      issuers.onDelete((o) => rt.registry.forget(o.metadata.uid ?? ''));
      // cert-manager re-runs an issuer's setup when its account key Secret changes: deleting the
      // Secret is how a key is rotated (a new key, a new account), and a replaced key is used at once
      const bySecret = (s: KubeObject) => {
        for (const i of issuers.list()) {
          if (i.spec?.acme?.privateKeySecretRef?.name === s.metadata.name && issuerResourceNamespace(ctx, i) === s.metadata.namespace) key(i);
        }
      };
      secrets.onAdd(bySecret);
      secrets.onUpdate((_, n) => bySecret(n));
      secrets.onDelete(bySecret);
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const issuer = cluster ? issuers.get(undefined, key) : issuers.get(namespace, name);
      if (!issuer?.spec?.acme || issuer.metadata.deletionTimestamp) return;
      const acme = issuer.spec.acme;
      const now = ctx.clock.now();
      const uid = issuer.metadata.uid ?? key;
      // a 429 on registering is waited out, whatever wakes the Issuer meanwhile (its own status write does)
      const holdKey = `${uid} ${acme.server}`;
      const held = (heldUntil.get(holdKey) ?? 0) - now.getTime();
      if (held > 0) return { requeueAfterMs: held };
      heldUntil.delete(holdKey);
      try {
        try {
          new URL(acme.server);
        } catch {
          throw new IssuerSetupError(REASON.invalidUrl, `Failed to parse existing ACME server URI "${acme.server}"`, false);
        }
        // a solver that cannot work makes the Issuer not Ready now, not at its first Challenge
        const broken = await brokenSolver(ctx, issuer);
        if (broken) throw new IssuerSetupError(broken.reason, broken.message, true);
        const k = await accountKey(ctx, issuer);
        const keyHash = accountKeyHash(k.pem);
        const client = rt.registry.clientFor(uid, accountConfigOf(issuer, k.pem, k.generated ? undefined : knownAccountUrl(issuer)));
        if (acme.profile) {
          // Checked before anything is ordered: a profile the CA does not offer fails every order.
          let profiles: Record<string, string> | undefined;
          try {
            profiles = (await acmeAction('get_directory', () => client.getDirectory())).meta?.profiles;
          } catch (e) {
            throw new IssuerSetupError(REASON.registerFailed, `Failed to fetch the ACME directory to check spec.acme.profile: ${(e as Error).message}`, true);
          }
          const problem = profileProblem(acme.profile, acme.server, profiles);
          if (problem) throw new IssuerSetupError(REASON.invalidProfile, problem, false);
        }
        if (!k.generated && canReuseAccount(issuer, keyHash)) return;
        const eab = await eabOf(ctx, issuer);
        let account;
        try {
          account = await acmeAction('register_account', () => client.registerAccount({
            termsOfServiceAgreed: true, ...(acme.email ? { email: acme.email.toLowerCase() } : {}), ...(eab ? { eab } : {}),
          }));
        } catch (e) {
          const wait = rateLimitWaitOf(e);
          if (wait !== undefined) heldUntil.set(holdKey, now.getTime() + wait);
          const until = wait !== undefined ? `; not asked again before ${rfc3339(new Date(now.getTime() + wait))} (its Retry-After)` : '';
          throw new IssuerSetupError(REASON.registerFailed, `Failed to register ACME account: ${(e as Error).message}${until}`, isRetryable(e), k.generated);
        }
        // newAccount on a key the CA knows returns that account as it is (RFC 8555 §7.3.1): a
        // changed email reaches the CA only as an update, before the status may say it was registered
        const email = acme.email?.toLowerCase() ?? '';
        if (registeredEmail(account.contact) !== email) {
          try {
            await acmeAction('update_account', () => client.updateAccountContact(email ? [`mailto:${email}`] : []));
          } catch (e) {
            throw new IssuerSetupError(REASON.updateFailed, `Failed to update ACME account: ${(e as Error).message}`, isRetryable(e));
          }
        }
        await writeStatus(issuer, registeredStatus(issuer, { uri: account.url, keyHash }, now));
      } catch (e) {
        if (!(e instanceof IssuerSetupError)) throw e;
        rt.registry.forget(uid);
        await writeStatus(issuer, notReadyStatus(issuer, e.reason, e.message, now, { clearUri: e.clearUri }));
        ctx.recorder.event(issuer, 'Warning', 'ErrInitIssuer', `Error initializing issuer: ${e.message}`);
        const wait = (heldUntil.get(holdKey) ?? 0) - now.getTime();
        if (wait > 0) return { requeueAfterMs: wait };
        if (e.retry) throw e;
      }
    },
  };
}
