// The files controller (certsmith server --secrets-dir): mirrors each Certificate's TLS Secret to
// DIR/<namespace>/<secretName>/ and runs the --deploy-hook when new files go live. Keys are
// "namespace/secretName": one lineage per Secret, whichever Certificate it belongs to.
import { SecretType } from '../../api/resources.ts';
import type { ControllerContext, ControllerSpec, ReconcileResult } from '../context.ts';
import { splitKey } from '../../runtime/controller.ts';
import { BY_SECRET, certificateCaches, ownedRequests, requestForRevision, type CertificateCaches } from '../certificates/gather.ts';
import { issuanceCompleting, secretCertificate } from '../certificates/policies.ts';
import { nextRevision } from '../certificates/requestmanager/requestmanager.ts';
import { ANN, type CertificateObj, type Secret } from '../certificates/objects.ts';
import { lineageFiles, lineageHash } from './lineage-files.ts';
import { isSafeLineageName, listLineages, livePath, publishLineage, removeLineage, type LineageRef } from './lineage.ts';
import { parseFileOwner, type FileOwner } from './owner.ts';
import { HookLedger } from './hook-ledger.ts';
import { DEFAULT_HOOK_TIMEOUT_MS, hookEnvironment, hookRetryDelayMs, runDeployHook } from './deploy-hook.ts';
import { formatDuration } from '../../api/duration.ts';

const NAME = 'files';
const TLS = 'kubernetes.io/tls';

export interface FilesControllerOptions {
  hookTimeoutMs?: number;
  /** first delay after a failed hook (default 1m); doubles per failure up to hookRetryMaxMs (1h) */
  hookRetryBaseMs?: number;
  hookRetryMaxMs?: number;
  /** versions kept per lineage, the live one included */
  keepVersions?: number;
}

interface HookFailure {
  hash: string;
  failures: number;
  nextAttemptAt: number;
}

export function filesController(ctx: ControllerContext, o: FilesControllerOptions = {}): ControllerSpec {
  const root = ctx.options.secretsDir;
  if (!root) throw new Error('files controller needs options.secretsDir');
  const owner: FileOwner | undefined = ctx.options.filesOwner ? parseFileOwner(ctx.options.filesOwner) : undefined;
  const hook = ctx.options.deployHook;
  const log = ctx.logger.child({ controller: NAME });
  const c = certificateCaches(ctx);
  const ledger = HookLedger.in(root);
  const failures = new Map<string, HookFailure>();

  return {
    name: NAME,
    // hooks run per lineage; a slow reload for one must not hold the others back
    workers: 4,
    watch(enqueue) {
      // metadata-only cached Secrets carry no type: those are looked at too
      const bySecret = (s: Secret) => {
        if (s.type === undefined || s.type === TLS) enqueue(`${s.metadata.namespace}/${s.metadata.name}`);
      };
      c.secrets.onAdd(bySecret);
      c.secrets.onUpdate((_, n) => bySecret(n));
      c.secrets.onDelete((s) => enqueue(`${s.metadata.namespace}/${s.metadata.name}`));
      const byCertificate = (crt: CertificateObj) => {
        if (crt.spec?.secretName) enqueue(`${crt.metadata.namespace}/${crt.spec.secretName}`);
      };
      c.certificates.onAdd(byCertificate);
      c.certificates.onUpdate((old, n) => { byCertificate(old); byCertificate(n); });
      c.certificates.onDelete(byCertificate);
      // lineages whose Certificate went away while certsmith was not running
      for (const k of ledger.keys()) enqueue(k);
      void listLineages(root).then((found) => { for (const l of found) enqueue(`${l.namespace}/${l.name}`); });
    },
    reconcile: async (key) => {
      const { namespace, name } = splitKey(key);
      if (!namespace || !isSafeLineageName(namespace, name)) return;
      const ref: LineageRef = { root, namespace, name };
      let secret = c.secrets.get(namespace, name);
      const crt = claimant(c, namespace, name, secret);
      if (!crt) {
        if (!ctx.options.keepFiles && (await removeLineage(ref))) log.info({ lineage: key }, 'removed files of a deleted Certificate');
        failures.delete(key);
        await ledger.delete(key);
        return;
      }
      // the cache holds only metadata (no type, no data) of Secrets without certsmith's label
      if (secret && !secret.data) secret = await ctx.store.get<Secret>(SecretType, namespace, name);
      // a Certificate waiting for (re-)issuance keeps serving the files it has
      if (!secret || secret.type !== TLS) return;
      const files = lineageFiles(secret.data);
      if (!files) return;
      const hash = lineageHash(files, owner?.text);
      const published = await publishLineage(ref, files, hash, { owner, keep: o.keepVersions });
      if (published.changed) log.info({ lineage: key, version: published.version }, 'files updated');
      return deployIfDue(crt, key, ref, secret, hash);
    },
  };

  async function deployIfDue(crt: CertificateObj, key: string, ref: LineageRef, secret: Secret, hash: string): Promise<ReconcileResult | void> {
    if (ledger.get(key)?.hash === hash) return;
    // the status still describes the previous certificate; its update wakes us again
    if (issuanceCompleting({ certificate: crt, secret, nextCR: requestForRevision(ownedRequests(c, crt), nextRevision(crt)) })) return;
    const revision = crt.status?.revision;
    if (!hook) {
      await ledger.set(key, { hash, revision, at: ctx.clock.now().toISOString() });
      return;
    }
    const now = ctx.clock.now().getTime();
    const failed = failures.get(key);
    if (failed?.hash === hash && failed.nextAttemptAt > now) return { requeueAfterMs: failed.nextAttemptAt - now };

    const out = await runDeployHook(hook, {
      cwd: root,
      timeoutMs: o.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
      outputLimit: 512,
      env: hookEnvironment({
        certificateName: crt.metadata.name!, namespace: ref.namespace, secretName: ref.name, revision,
        liveDir: livePath(ref), hasCA: !!secret.data?.['ca.crt'], dnsNames: secretCertificate(secret)?.template.dnsNames ?? [],
      }),
    });
    const status = out.timedOut ? 'timed out' : out.exitCode !== null ? `exited with status ${out.exitCode}` : `was killed by ${out.signal ?? 'a signal'}`;
    const tail = out.output ? `: ${out.output}` : '';
    if (out.ok) {
      failures.delete(key);
      await ledger.set(key, { hash, revision, at: ctx.clock.now().toISOString() });
      log.info({ lineage: key, revision, durationMs: out.durationMs }, 'deploy hook succeeded');
      ctx.recorder.event(crt, 'Normal', 'DeployHookSucceeded', `Deploy hook for revision ${revision ?? '?'} ${status}${tail}`);
      return;
    }
    const n = (failed?.hash === hash ? failed.failures : 0) + 1;
    const delay = hookRetryDelayMs(n, { baseMs: o.hookRetryBaseMs, maxMs: o.hookRetryMaxMs });
    failures.set(key, { hash, failures: n, nextAttemptAt: now + delay });
    // output stays out of the log (it may name anything the hook touched); the Event has it redacted
    log.warn({ lineage: key, revision, exitCode: out.exitCode, timedOut: out.timedOut, attempt: n, retryInMs: delay }, 'deploy hook failed');
    ctx.recorder.event(crt, 'Warning', 'DeployHookFailed',
      `Deploy hook for revision ${revision ?? '?'} ${status} (attempt ${n}, retrying in ${formatDuration(delay)})${tail}`);
    return { requeueAfterMs: delay };
  }
}

/**
 * The Certificate this Secret's files belong to: its controlling owner, or the Certificate
 * naming it in spec.secretName whose name the Secret's certificate-name annotation carries.
 * With no Secret, any Certificate naming it keeps the lineage (the Secret is being re-made).
 */
function claimant(c: CertificateCaches, namespace: string, name: string, secret: Secret | undefined): CertificateObj | undefined {
  const named = c.certificates.byIndex(BY_SECRET, `${namespace}/${name}`).filter((crt) => crt.spec.secretName === name);
  if (!secret) return named[0];
  const ref = secret.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Certificate');
  if (ref) {
    const owner = c.certificates.get(namespace, ref.name);
    if (owner && owner.metadata.uid === ref.uid) return owner;
  }
  const annotated = secret.metadata.annotations?.[ANN.certificateName];
  return named.find((crt) => crt.metadata.name === annotated);
}


/**
 * Whether status.revision is the revision of these files. The issuing controller writes the
 * Secret first and the status after; until then the status still describes the previous
 * certificate, and the hook would be told the wrong revision.
 */
