// The files controller (certsmith server --secrets-dir): mirrors each Certificate's TLS Secret to
// DIR/<namespace>/<secretName>/ and runs the --deploy-hook when new files go live. Keys are
// "namespace/secretName": one lineage per Secret, whichever Certificate it belongs to.
import { SecretType } from '../../api/resources.ts';
import type { ControllerContext, ControllerSpec, ReconcileResult } from '../context.ts';
import { splitKey } from '../../runtime/controller.ts';
import { certificateCaches, withRequests, type CertificateCaches } from '../certificates/gather.ts';
import { firstViolation, issuanceCompleting, secretCertificate, secretPolicies, type CertificateInput } from '../certificates/policies.ts';
import { CERTIFICATES_BY_SECRET } from '../../shared/certificate-index.ts';
import { DEPLOY_HOOK_FAILED, DEPLOY_HOOK_SUCCEEDED, deployHookMessage } from '../../shared/deploy-hook-events.ts';
import { type Certificate as CertificateObj } from '../../api/types.ts';
import { type Secret } from '../../api/meta.ts';
import { filesOwnerTag, lineageFiles, lineageHash, rollbackOf } from './lineage-files.ts';
import { isSafeLineageName, lineageExists, listLineages, liveCertificates, livePath, publishLineage, removeLineage, UnsafePathError, type LineageRef } from './lineage.ts';
import { parseFileOwner, type FileOwner } from '../../shared/file-owner.ts';
import { HookLedger } from './hook-ledger.ts';
import { DEFAULT_HOOK_TIMEOUT_MS, hookEnvironment, hookNames, hookRetryDelayMs, runDeployHook } from './deploy-hook.ts';
import { formatDuration } from '../../api/duration.ts';
import { isoTime } from '../../api/time.ts';
import { getCondition, removeCondition, setCondition } from '../../api/conditions.ts';
import { withCertificate, writeCertificateStatus } from '../certificates/shell.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';

const NAME = 'files';
/**
 * On a Certificate whose files cannot be written or removed, status False, until they can:
 * then it is removed rather than set True, so Certificates whose files are fine carry nothing
 * (and cost no status write). Readiness keeps conditions of other types as they are.
 */
export const FILES_CONDITION = 'FilesMirrored';
const HOOKS = 'files-deploy-hook';
const TLS = 'kubernetes.io/tls';
/** Event reason: the files now serve an older certificate than before (see rollbackOf) */
const FILES_ROLLED_BACK = 'FilesRolledBack';
/** deploy hooks running at once; they wait for each other, never for the files */
const HOOK_WORKERS = 2;

export interface FilesControllerOptions {
  /** first delay after a failed hook (default 1m); doubles per failure up to hookRetryMaxMs (1h) */
  hookRetryBaseMs?: number;
  hookRetryMaxMs?: number;
  /** versions kept per lineage, the live one included */
  keepVersions?: number;
  /** SIGTERM to SIGKILL for a hook's process group when it times out or certsmith stops */
  hookKillGraceMs?: number;
}

interface HookFailure {
  hash: string;
  failures: number;
  nextAttemptAt: number;
}

/** A deploy hook the files controller asks for: the files with this hash are live. */
interface HookJob {
  hash: string;
  certificate: CertificateObj;
  revision?: number;
  env: Record<string, string>;
  /** the private key in the files the hook is run for: lines of output showing it are redacted from the Event */
  keys: string[];
}

/**
 * Whether a Certificate's Secret is mirrored: unless its certsmith.io/mirror-files annotation
 * says "false". A CA's key signs for everything its issuer issues, so a CA is mirrored only
 * when the annotation says "true": the web server's account must not get it by default.
 */
export function mirrorsFiles(crt: CertificateObj): boolean {
  // stored objects may still carry a non-string value (issue 12, finding 4): that is no answer
  const raw: unknown = crt.metadata.annotations?.[CertificateAnnotation.mirrorFiles];
  const v = typeof raw === 'string' ? raw.toLowerCase() : undefined;
  if (v === 'false') return false;
  if (v === 'true') return true;
  return !crt.spec.isCA;
}

/**
 * What went wrong under the secrets dir, for an Event a person can act on: the path as they
 * know it (not the /proc/self/fd one the call used) and the errno. fs errors carry paths and
 * codes only, never file contents, so no key can end up here.
 */
function describeFilesError(e: unknown, ref: LineageRef): string {
  if (e instanceof UnsafePathError) return e.message;
  const err = e as NodeJS.ErrnoException;
  if (!err?.code) return err instanceof Error ? err.message : String(err);
  const hint = err.code === 'ENAMETOOLONG'
    ? ' (the Secret name is too long for a file name here: with the ".versions" suffix it must fit in the file system\'s 255 bytes, so at most 245 characters)'
    : err.code === 'EACCES' || err.code === 'EPERM' ? ' (permission denied: check the owner and mode of --secrets-dir and --files-owner)'
      : err.code === 'ENOSPC' ? ' (no space left on the device)' : '';
  return `${err.code} on ${err.syscall ?? 'a file operation'} for ${livePath(ref)}${hint}`;
}

/**
 * The files controller and its deploy-hook runner. Hooks run in a controller of their own,
 * with HOOK_WORKERS workers and the hook timeout, so slow hooks hold back other hooks at
 * most, never another Certificate's files; stopping certsmith kills the running hooks'
 * process groups instead of waiting for them.
 */
export function filesControllers(ctx: ControllerContext, o: FilesControllerOptions = {}): ControllerSpec[] {
  const root = ctx.options.secretsDir;
  if (!root) throw new Error('files controller needs options.secretsDir');
  const owner: FileOwner | undefined = ctx.options.filesOwner ? parseFileOwner(ctx.options.filesOwner) : undefined;
  const hook = ctx.options.deployHook;
  const log = ctx.logger.child({ controller: NAME });
  const filesEvents = ctx.recorderFor(NAME);
  const hookEvents = ctx.recorderFor(HOOKS);
  const c = certificateCaches(ctx);
  const ledger = HookLedger.in(root);
  const failures = new Map<string, HookFailure>();
  const pending = new Map<string, HookJob>();
  /**
   * Lineages a Certificate claimed while this process ran. Only those are removed when no
   * Certificate claims them any more: the files found at start that the store knows nothing of
   * are kept, since a store that knows nothing (another --data-dir, a 0-byte state.db, a copy
   * without its WAL, an older backup) would otherwise take every key a web server uses.
   */
  const claimedHere = new Set<string>();
  const keptUnclaimed = new Set<string>();
  const stopping = new AbortController();
  let enqueueHook: (key: string) => void = () => {};

  const files: ControllerSpec = {
    name: NAME,
    // publishing is quick now that hooks run elsewhere; a few workers keep one slow disk write from holding the rest
    workers: 4,
    // failures under the secrets dir mostly need a person (permissions, names): no need to hammer
    retry: { baseDelayMs: 5000, maxDelayMs: 5 * 60_000 },
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
      listLineages(root).then((found) => { for (const l of found) enqueue(`${l.namespace}/${l.name}`); })
        .catch((e: Error) => log.warn({ dir: root, err: e.message }, 'cannot list the files under the secrets dir'));
    },
    reconcile: async (key) => {
      const { namespace, name } = splitKey(key);
      if (!namespace || !isSafeLineageName(namespace, name)) return;
      const ref: LineageRef = { root, namespace, name };
      let secret = c.secrets.get(namespace, name);
      const crt = claimant(c, namespace, name, secret);
      if (!crt && !claimedHere.has(key)) {
        if (!keptUnclaimed.has(key) && await lineageExists(ref)) {
          keptUnclaimed.add(key);
          log.warn({ lineage: key, path: livePath(ref) }, 'files no Certificate in the store claims: kept (a Certificate deleted while certsmith was stopped, or a data dir that is not the one these files came from); remove the folder and its .versions folder by hand if they are not needed');
        }
        return;
      }
      if (crt) claimedHere.add(key);
      if (!crt || !mirrorsFiles(crt)) {
        pending.delete(key);
        failures.delete(key);
        // A Secret outlives its Certificate (deleted, or its secretName changed), as with
        // cert-manager, and a web server may still name its files: removing them would break
        // the server's next reload for any site. They go with the Secret.
        // The hook's record goes with the Certificate: revisions start over for a new one.
        if (!crt && secret) {
          if (!keptUnclaimed.has(key)) {
            keptUnclaimed.add(key);
            log.info({ lineage: key, path: livePath(ref) }, 'files kept while their Secret is: no Certificate names it any more; deleting the Secret removes them');
          }
          await ledger.delete(key);
          return;
        }
        keptUnclaimed.delete(key);
        if (!ctx.options.keepFiles) {
          const removed = await guarded(crt, ref, 'FilesRemoveFailed', 'Files under --secrets-dir not removed', () => removeLineage(ref));
          if (removed) log.info({ lineage: key }, crt ? 'removed files of a Certificate that is not mirrored' : 'removed files of a Secret no Certificate names (deleted, or its secretName changed)');
        }
        if (crt) await filesCondition(crt, undefined);
        await ledger.delete(key);
        return;
      }
      // the cache holds only metadata (no type, no data) of Secrets without certsmith's label
      if (secret && !secret.data) secret = await ctx.store.get<Secret>(SecretType, namespace, name);
      // a Certificate waiting for (re-)issuance keeps serving the files it has
      if (!secret || secret.type !== TLS) return;
      const lf = lineageFiles(secret.data);
      if (!lf) return;
      // a Secret about to be issued anew (it no longer fits the spec, the key or the current
      // request: a Certificate re-applied with other names, a secretName switched back to an old
      // Secret) keeps the files serving what they have, and no hook runs for a certificate that
      // is being replaced
      const input = withRequests(c, crt, secret);
      if (firstViolation(secretPolicies, input)) return;
      const hash = lineageHash(lf, filesOwnerTag(owner));
      // what is live now, read only when these files are not the ones last published
      const before = ledger.get(key)?.hash === hash ? undefined : await liveCertificates(ref).catch(() => undefined);
      const published = await guarded(crt, ref, 'FilesPublishFailed', 'Files under --secrets-dir not written', () => publishLineage(ref, lf, hash, { owner, keep: o.keepVersions }));
      if (published.changed) log.info({ lineage: key, version: published.version }, 'files updated');
      const back = published.changed && before ? rollbackOf(before.tls, lf.find((f) => f.name === 'cert.pem')!.content.toString('utf8')) : undefined;
      if (back) {
        const message = `The files went back to an older certificate: serial ${back.next.serialNumber} (issued ${isoTime(back.next.notBefore)}) replaced serial ${back.live.serialNumber} (issued ${isoTime(back.live.notBefore)}), because the Secret holds the older one (a data dir restored from a backup, or the Secret put back by hand). \`certsmith renew -n ${crt.metadata.namespace} ${crt.metadata.name}\` issues a new certificate`;
        log.warn({ lineage: key, version: published.version }, message);
        filesEvents.event(crt, 'Warning', FILES_ROLLED_BACK, message);
      }
      await filesCondition(crt, undefined);
      const served = (name: string) => lf.find((f) => f.name === name)?.content.toString('utf8');
      await deployWhenDue(input, key, ref, hash, before !== undefined && before.tls === served('tls.crt') && before.ca === served('ca.crt'));
    },
  };

  const hooks: ControllerSpec = {
    name: HOOKS,
    workers: HOOK_WORKERS,
    watch(enqueue) {
      enqueueHook = enqueue;
    },
    reconcile: runHook,
    interrupt() {
      stopping.abort();
    },
  };
  return hook ? [files, hooks] : [files];

  /**
   * Runs fn; a failure becomes a Warning Event on the Certificate and a log line (the
   * Certificate may well stay Ready, its Secret is fine, but the files are not), then is
   * thrown on so that the key is retried with backoff.
   */
  async function guarded<T>(crt: CertificateObj | undefined, ref: LineageRef, reason: string, what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const why = describeFilesError(e, ref);
      log.warn({ lineage: `${ref.namespace}/${ref.name}`, err: why }, what);
      if (crt) {
        filesEvents.event(crt, 'Warning', reason, `${what}: ${why}`);
        // the Event may scroll away; someone has to act, so the Certificate says it until fixed
        await filesCondition(crt, { reason, message: `${what}: ${why}` })
          .catch((err: Error) => log.warn({ lineage: `${ref.namespace}/${ref.name}`, err: err.message }, 'cannot set the FilesMirrored condition'));
      }
      throw new Error(`${what}: ${why}`);
    }
  }

  /** Sets the FilesMirrored=False condition for a failure, or removes it (undefined); writes only a change. */
  async function filesCondition(crt: CertificateObj, failure: { reason: string; message: string } | undefined): Promise<void> {
    // the common case, files fine and no condition, reads nothing and writes nothing
    if (!failure && !getCondition(crt.status?.conditions, FILES_CONDITION)) return;
    await withCertificate(ctx, c, `${crt.metadata.namespace}/${crt.metadata.name}`, async (cur) => {
      const had = getCondition(cur.status?.conditions, FILES_CONDITION);
      let conditions;
      if (failure) {
        if (had?.status === 'False' && had.reason === failure.reason && had.message === failure.message) return;
        conditions = setCondition(cur.status?.conditions, {
          type: FILES_CONDITION, status: 'False', reason: failure.reason, message: failure.message, observedGeneration: cur.metadata.generation,
        }, ctx.clock.now());
      } else {
        if (!had) return;
        conditions = removeCondition(cur.status?.conditions, FILES_CONDITION);
      }
      await writeCertificateStatus(ctx, cur, { ...(cur.status ?? {}), conditions }, NAME);
    });
  }

  /** sameAsLive: the certificates these files hold (tls.crt, ca.crt) are the ones live before they were written */
  async function deployWhenDue(input: CertificateInput & { secret: Secret }, key: string, ref: LineageRef, hash: string, sameAsLive: boolean): Promise<void> {
    const { certificate: crt, secret } = input;
    const record = ledger.get(key);
    if (record?.hash === hash) {
      pending.delete(key);
      return;
    }
    // Files written anew for the certificate the hook already ran for (a newer certsmith adds a
    // file, --files-owner changed): the hook is for a new certificate, not a new layout, so the
    // web servers of a fleet are not reloaded by an upgrade. The ledger's revision tells a hook
    // already run from one a crash interrupted after the files went live.
    if (sameAsLive && record && record.revision === crt.status?.revision) {
      pending.delete(key);
      await ledger.set(key, { ...record, hash });
      return;
    }
    // the status still describes the previous certificate; its update wakes us again
    if (issuanceCompleting(input)) return;
    const revision = crt.status?.revision;
    if (!hook) {
      await ledger.set(key, { hash, revision, at: ctx.clock.now().toISOString() });
      return;
    }
    const queued = pending.get(key);
    if (queued?.hash === hash) {
      // the same files: the hook queued (or running) for them is the one; only the object the Events go to is fresher
      queued.certificate = crt;
      enqueueHook(key);
      return;
    }
    pending.set(key, {
      hash, certificate: crt, revision,
      env: hookEnvironment({
        certificateName: crt.metadata.name!, namespace: ref.namespace, secretName: ref.name, revision,
        liveDir: livePath(ref), hasCA: !!secret.data?.['ca.crt'], names: hookNames(secretCertificate(secret)?.template ?? {}),
      }),
      keys: secret.data?.['tls.key'] ? [Buffer.from(secret.data['tls.key'], 'base64').toString('utf8')] : [],
    });
    enqueueHook(key);
  }

  async function runHook(key: string): Promise<ReconcileResult | void> {
    const job = pending.get(key);
    if (!job || !hook || stopping.signal.aborted) return;
    if (ledger.get(key)?.hash === job.hash) {
      pending.delete(key);
      return;
    }
    const now = ctx.clock.now().getTime();
    const failed = failures.get(key);
    if (failed?.hash === job.hash && failed.nextAttemptAt > now) return { requeueAfterMs: failed.nextAttemptAt - now };

    const { certificate: crt, revision, hash } = job;
    const out = await runDeployHook(hook, {
      cwd: root, env: job.env, keys: job.keys, outputLimit: 512, signal: stopping.signal,
      timeoutMs: ctx.options.deployHookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, killGraceMs: o.hookKillGraceMs,
    });
    // killed because certsmith stops: not a failure of the hook; the ledger does not have it, so it runs again at the next start
    if (out.interrupted) {
      log.info({ lineage: key, revision }, 'deploy hook stopped with certsmith; it runs again at the next start');
      return;
    }
    // the files changed or the Certificate went while the hook ran: what is pending now decides
    const current = pending.get(key)?.hash === hash;
    const status = out.timedOut ? 'timed out' : out.exitCode !== null ? `exited with status ${out.exitCode}` : out.signal ? `was killed by ${out.signal}` : 'did not run';
    const tail = out.output ? `: ${out.output}` : '';
    if (out.ok) {
      failures.delete(key);
      if (current) {
        pending.delete(key);
        await ledger.set(key, { hash, revision, at: ctx.clock.now().toISOString() });
      }
      log.info({ lineage: key, revision, durationMs: out.durationMs }, 'deploy hook succeeded');
      hookEvents.event(crt, 'Normal', DEPLOY_HOOK_SUCCEEDED, deployHookMessage(revision, status, tail));
      return;
    }
    const n = (failed?.hash === hash ? failed.failures : 0) + 1;
    const delay = hookRetryDelayMs(n, { baseMs: o.hookRetryBaseMs, maxMs: o.hookRetryMaxMs });
    failures.set(key, { hash, failures: n, nextAttemptAt: now + delay });
    // output stays out of the log (it may name anything the hook touched); the Event has it redacted
    log.warn({ lineage: key, revision, exitCode: out.exitCode, timedOut: out.timedOut, attempt: n, retryInMs: delay }, 'deploy hook failed');
    hookEvents.event(crt, 'Warning', DEPLOY_HOOK_FAILED, deployHookMessage(revision, status, ` (attempt ${n}, retrying in ${formatDuration(delay)})${tail}`));
    return current ? { requeueAfterMs: delay } : undefined;
  }
}

/**
 * The Certificate this Secret's files belong to: its controlling owner, or the Certificate
 * naming it in spec.secretName whose name the Secret's certificate-name annotation carries.
 * With no Secret, any Certificate naming it keeps the lineage (the Secret is being re-made).
 */
function claimant(c: CertificateCaches, namespace: string, name: string, secret: Secret | undefined): CertificateObj | undefined {
  const named = c.certificates.byIndex(CERTIFICATES_BY_SECRET, `${namespace}/${name}`).filter((crt) => crt.spec.secretName === name);
  if (!secret) return named[0];
  const ref = secret.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Certificate');
  if (ref) {
    // the owner reference stays on a Secret its Certificate no longer names (secretName changed), as upstream leaves it
    const owner = c.certificates.get(namespace, ref.name);
    if (owner && owner.metadata.uid === ref.uid && owner.spec.secretName === name) return owner;
  }
  const annotated = secret.metadata.annotations?.[CertificateAnnotation.certificateName];
  return named.find((crt) => crt.metadata.name === annotated);
}

