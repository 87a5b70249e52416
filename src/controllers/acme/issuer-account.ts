// The ACME account of an Issuer as every controller that talks to the CA gets it (orders,
// challenges, revocation, ARI renewal checks), and the one way they report that the CA no
// longer knows it. Shared by those controllers, so it lives beside runtime.ts, not in the
// account controller's folder.
import { ClusterIssuer, Issuer, SecretType } from '../../api/resources.ts';
import type { KubeObject, Secret } from '../../api/meta.ts';
import type { IssuerStatus } from '../../api/types.ts';
import type { AcmeClient } from '../../acme/client.ts';
import type { ControllerContext } from '../context.ts';
import { issuerResourceNamespace } from '../../shared/issuer-lookup.ts';
import { decodeBase64 } from '../../shared/parse-memo.ts';
import { isConflict } from '../../store/store.ts';
import type { AcmeRuntime } from './runtime.ts';
import type { AccountConfig } from './account/registry.ts';
import { accountGoneStatus, knownAccountUrl, type AcmeIssuerObj } from './account/account.ts';

type IssuerObj = AcmeIssuerObj & KubeObject;

/** The client settings of an issuer's account: its server, the trust for it, and the account key. */
export function accountConfigOf(issuer: AcmeIssuerObj, accountKeyPem: string, accountUrl: string | undefined): AccountConfig {
  const acme = issuer.spec!.acme!;
  const caPem = acme.caBundle ? Buffer.from(acme.caBundle, 'base64').toString('utf8') : undefined;
  return { server: acme.server, accountKeyPem, accountUrl, caPem, skipTLSVerify: acme.skipTLSVerify };
}

/**
 * The client of an issuer's account. After a restart the registry is empty; a Ready issuer's
 * status already names the account, so no registration is needed to rebuild it.
 */
export async function clientForIssuer(ctx: ControllerContext, rt: AcmeRuntime, issuer: IssuerObj): Promise<AcmeClient> {
  const uid = issuer.metadata.uid ?? `${issuer.kind}/${issuer.metadata.namespace}/${issuer.metadata.name}`;
  const known = rt.registry.forIssuer(uid);
  if (known) return known;
  const ref = issuer.spec!.acme!.privateKeySecretRef;
  const secret = await ctx.store.get<Secret>(SecretType, issuerResourceNamespace(ctx, issuer), ref.name);
  const pem = decodeBase64(secret?.data?.[ref.key || 'tls.key']);
  if (!pem) throw new Error(`ACME client for issuer ${issuer.metadata.name} not initialised/available: account key secret "${ref.name}" missing`);
  return rt.registry.clientFor(uid, accountConfigOf(issuer, pem, knownAccountUrl(issuer)));
}

/**
 * Writes an ACME issuer's status from its freshest stored copy, as the Order and Challenge
 * controllers report what they learnt about the issuer's account or server: `statusOf` decides
 * from that copy (undefined: nothing to change), and a conflict reads again (three tries at most).
 * Returns the issuer and the status written, or undefined when nothing was.
 */
export async function updateIssuerStatus(
  ctx: ControllerContext, issuer: IssuerObj, statusOf: (fresh: IssuerObj, now: Date) => IssuerStatus | undefined,
): Promise<{ issuer: IssuerObj; status: IssuerStatus } | undefined> {
  const type = issuer.kind === 'ClusterIssuer' ? ClusterIssuer : Issuer;
  for (let attempt = 0; attempt < 3; attempt++) {
    const fresh = await ctx.store.get<IssuerObj>(type, issuer.metadata.namespace, issuer.metadata.name!);
    if (!fresh) return undefined;
    const status = statusOf(fresh, ctx.clock.now());
    if (!status) return undefined;
    try {
      await ctx.store.updateStatus(type, { ...fresh, status } as KubeObject, { fieldManager: issuer.kind === 'ClusterIssuer' ? 'clusterissuers-acme' : 'issuers-acme' });
    } catch (e) {
      if (isConflict(e)) continue;
      throw e;
    }
    return { issuer: fresh, status };
  }
  return undefined;
}

/** The Ready condition's message of a status just written, for the Event that says the same. */
export function readyMessage(status: IssuerStatus): string | undefined {
  return status.conditions?.find((c) => c.type === 'Ready')?.message;
}

/**
 * Called by the Order and Challenge controllers when the ACME server says the account is gone:
 * the Issuer becomes Ready=False with the reason, and its own controller registers again.
 */
export async function reportAccountGone(ctx: ControllerContext, issuer: IssuerObj, failedAccountUrl: string | undefined, problem: { reason: string; message: string }): Promise<void> {
  const written = await updateIssuerStatus(ctx, issuer, (fresh, now) => accountGoneStatus(fresh, failedAccountUrl, problem, now));
  if (written) ctx.recorder.event(written.issuer, 'Warning', problem.reason, readyMessage(written.status) ?? problem.message);
}
