// Request manager: while Issuing=True, keeps exactly one CertificateRequest for the next
// revision, built from the spec and the next private key. A request that failed or was denied
// in an earlier attempt is replaced, never reused (upstream reuses denied ones and never recovers).
import { getCondition, isTrue } from '../../../api/conditions.ts';
import { publicKeyFingerprint } from '../../../pki/keys.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { failedAttemptsOf } from '../../../shared/backoff.ts';
import { isDeleting } from '../../../shared/ownership.ts';
import { nextRevision, requestName, revisionOf } from '../../../shared/revisions.ts';
import { decodeBase64, parseKeyMemo, requestCSR } from '../../../shared/parse-memo.ts';
import { requestMismatches } from '../policies.ts';
import { defaultReplacementBackoff, gateReplacement, type ReplacementBackoff, type ReplacementHistory } from '../replacement-backoff.ts';

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

/** Whether a request belongs to an attempt that has already been recorded as failed. */
export function isFromEarlierAttempt(crt: CertificateObj, cr: CertificateRequestObj): boolean {
  const attempt = cr.metadata.annotations?.[CertificateAnnotation.issuanceAttempt];
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
// Replacement backoff: see ../replacement-backoff.ts. Only `mismatch` deletes count: a request
// from a failed attempt is replaced once per attempt, and the trigger backs attempts off.

export interface GatedActions {
  actions: RequestAction[];
  /** look again then: a replacement is held back until this much time has passed */
  requeueAfterMs?: number;
  /** the history to keep for the Certificate; undefined forgets it */
  history?: ReplacementHistory;
}

/** Applies the replacement backoff to the request manager's actions. Pure: the caller keeps the history. */
export function gateReplacements(actions: RequestAction[], history: ReplacementHistory | undefined, now: Date, cfg: ReplacementBackoff = defaultReplacementBackoff): GatedActions {
  const g = gateReplacement({ replacing: actions.some((a) => a.kind === 'delete' && a.cause === 'mismatch'), idle: actions.length === 0 }, history, now, cfg);
  if (!g.proceed) return { actions: [], requeueAfterMs: g.requeueAfterMs, history: g.history };
  return { actions, history: g.history };
}
