// Request manager: while Issuing=True, keeps exactly one CertificateRequest for the next
// revision, built from the spec and the next private key. A request that failed or was denied
// in an earlier attempt is replaced, never reused (upstream reuses denied ones and never recovers).
import { createHash } from 'node:crypto';
import { getCondition, isTrue } from '../../../api/conditions.ts';
import { publicKeyFingerprint } from '../../../pki/keys.ts';
import { ANN, failedAttemptsOf, isDeleting, type CertificateObj, type CertificateRequestObj, type Secret } from '../objects.ts';
import { decodeBase64, parseKeyMemo, requestCSR } from '../parsed.ts';
import { requestMismatches } from '../policies.ts';

export interface RequestManagerInput {
  certificate: CertificateObj;
  nextKeySecret?: Secret;
  /** requests controlled by the Certificate */
  requests: CertificateRequestObj[];
}

/** Why a request is deleted; only `mismatch` replacements can repeat without a new failure. */
export type DeleteCause = 'invalid-revision' | 'mismatch' | 'earlier-attempt';

export type RequestAction =
  | { kind: 'delete'; name: string; why: string; cause: DeleteCause }
  | { kind: 'create'; name: string; revision: number; attempt: number; keySecretName: string };

export function nextRevision(crt: CertificateObj): number {
  return (crt.status?.revision ?? 0) + 1;
}

export function revisionOf(cr: CertificateRequestObj): number | undefined {
  const v = cr.metadata.annotations?.[ANN.revision];
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** Whether a request belongs to an attempt that has already been recorded as failed. */
export function isFromEarlierAttempt(crt: CertificateObj, cr: CertificateRequestObj): boolean {
  const attempt = cr.metadata.annotations?.[ANN.issuanceAttempt];
  if (attempt !== undefined) return Number(attempt) < failedAttemptsOf(crt.status);
  // A request made by another controller: fall back to upstream's rule on failure time.
  const since = getCondition(crt.status?.conditions, 'Issuing')?.lastTransitionTime;
  const failed = cr.status?.failureTime;
  return !!since && !!failed && isFinished(cr) && Date.parse(failed) < Date.parse(since);
}

export function isFinished(cr: CertificateRequestObj): boolean {
  const ready = getCondition(cr.status?.conditions, 'Ready');
  return isTrue(cr.status?.conditions, 'Denied') || isTrue(cr.status?.conditions, 'InvalidRequest') || ready?.reason === 'Failed' || ready?.reason === 'Denied';
}

/** cert-manager's stable request name: the Certificate name (hashed when long) and the revision. */
export function requestName(crtName: string, revision: number): string {
  let base = crtName;
  if (crtName.length > 233) {
    base = crtName.slice(0, 168).replace(/[^a-z0-9]+$/, '') + '-' + createHash('sha256').update(crtName).digest('hex');
  }
  return `${base}-${revision}`;
}

export function decideRequestManager(input: RequestManagerInput): RequestAction[] {
  const crt = input.certificate;
  if (isDeleting(crt) || !isTrue(crt.status?.conditions, 'Issuing')) return [];
  const keyName = crt.status?.nextPrivateKeySecretName;
  const keyPem = decodeBase64(input.nextKeySecret?.data?.['tls.key']);
  if (!keyName || !keyPem) return [];
  const key = parseKeyMemo(keyPem);
  if (!key.value) return [];
  const fingerprint = publicKeyFingerprint(key.value);

  const actions: RequestAction[] = [];
  const rev = nextRevision(crt);
  const keep: CertificateRequestObj[] = [];
  for (const cr of input.requests) {
    const r = revisionOf(cr);
    const name = cr.metadata.name!;
    if (r === undefined) {
      actions.push({ kind: 'delete', name, why: 'revision annotation missing or invalid', cause: 'invalid-revision' });
    } else if (r !== rev) {
      continue; // other revisions are the revision manager's
    } else if (requestMismatches(crt, cr)?.length !== 0 || requestCSR(cr).value?.publicKeyFingerprint !== fingerprint) {
      actions.push({ kind: 'delete', name, why: 'request does not match the spec or the next private key', cause: 'mismatch' });
    } else if (isFromEarlierAttempt(crt, cr)) {
      actions.push({ kind: 'delete', name, why: 'request failed in an earlier attempt', cause: 'earlier-attempt' });
    } else {
      keep.push(cr);
    }
  }
  if (keep.length === 0 && !actions.some((a) => a.kind === 'delete' && a.name === requestName(crt.metadata.name!, rev))) {
    actions.push({ kind: 'create', name: requestName(crt.metadata.name!, rev), revision: rev, attempt: failedAttemptsOf(crt.status), keySecretName: keyName });
  }
  return actions;
}

// ---------------------------------------------------------------------------------------------
// Replacement backoff (issue 12, finding 2). A request that does not match its Certificate is
// deleted and made again; if the new one cannot match either (a spec that encodes differently
// from what it says, a bug, an object that reached the store without admission), that cycle
// would repeat as fast as the store can write (~1,150 writes/s was measured). So replacements
// of one Certificate are spaced exponentially: the first is immediate (a user edited the spec),
// the next waits initialMs, then twice that, up to maxMs. A request that matches, or nothing
// left to do, ends the sequence. The history is in memory: a restart allows one immediate
// replacement again, which keeps the rate bounded all the same.

export interface ReplacementHistory {
  /** replacements in the current sequence */
  count: number;
  /** when the last one was made, ms since the epoch */
  lastAt: number;
}

export interface ReplacementBackoff {
  initialMs: number;
  maxMs: number;
}

export const defaultReplacementBackoff: ReplacementBackoff = Object.freeze({ initialMs: 5_000, maxMs: 5 * 60_000 });

export interface GatedActions {
  actions: RequestAction[];
  /** look again then: a replacement is held back until this much time has passed */
  requeueAfterMs?: number;
  /** the history to keep for the Certificate; undefined forgets it */
  history?: ReplacementHistory;
}

/** The wait before replacement number count+1, after `count` replacements in a row. */
export function replacementDelay(count: number, cfg: ReplacementBackoff = defaultReplacementBackoff): number {
  if (count < 1) return 0;
  return Math.min(cfg.initialMs * 2 ** Math.min(count - 1, 40), cfg.maxMs);
}

/** Applies the replacement backoff to the request manager's actions. Pure: the caller keeps the history. */
export function gateReplacements(actions: RequestAction[], history: ReplacementHistory | undefined, now: Date, cfg: ReplacementBackoff = defaultReplacementBackoff): GatedActions {
  const replacing = actions.some((a) => a.kind === 'delete' && a.cause === 'mismatch');
  if (!replacing) return { actions, history: actions.length === 0 ? undefined : history };
  if (history) {
    const left = history.lastAt + replacementDelay(history.count, cfg) - now.getTime();
    // Everything waits, the create too: it would collide with the request not yet deleted.
    if (left > 0) return { actions: [], requeueAfterMs: left, history };
  }
  return { actions, history: { count: (history?.count ?? 0) + 1, lastAt: now.getTime() } };
}
