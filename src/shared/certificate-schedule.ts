// When a Certificate renews and why, and when a failed one is tried again, in the words people
// read: one explanation shared by `certsmith status` and the dashboard, so they never disagree
// with each other or with the trigger controller whose rules they describe.
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../api/types.ts';
import { BACKOFF_EVENT_REASON, backoffEventOf, failedAttemptsOf, failuresInSameMinute, nextAttemptTime, defaultBackoff, spreadsRetries, type BackoffConfig } from './backoff.ts';
import { renewalFor } from './renewal/renewal-decision.ts';
import { issuanceTimeOf } from './renewal/min-interval.ts';
import { requestForRevision } from './revisions.ts';
import type { RenewalDecision } from './renewal/renewal-time.ts';
import type { CertificateInfo } from '../pki/parse.ts';

export type { RenewalDecision };

/**
 * The renewal decision the trigger controller acts on, for the certificate in the Secret.
 * `requests`: the Certificate's CertificateRequests; the one of its current revision, when it
 * issued this leaf, dates the issuance as the trigger dates it (for the minimum interval).
 */
export function renewalDecisionFor(crt: CertificateObj, leaf: CertificateInfo, requests: readonly CertificateRequestObj[] = []): RenewalDecision {
  return renewalFor(crt, leaf, issuanceTimeOf(leaf, requestForRevision(requests, crt.status?.revision)));
}

/** "RenewBefore: renews 360h before expiry" style: the rule that set the time, then why. */
export function renewalReasonInWords(d: RenewalDecision): string {
  return d.kind === 'scheduled' ? `${d.reason}: ${d.message}` : `${d.kind}: ${d.message}`;
}

/** The maintenance window the renewal time fell in, as `certsmith status` prints it; undefined without one. */
export function renewalWindowInWords(d: RenewalDecision): string | undefined {
  if (d.kind !== 'scheduled' || !d.window) return undefined;
  const w = d.window;
  return `${w.start.toISOString()} – ${w.end.toISOString()} (windows[${w.index}] "${w.cron}" in ${w.timeZone})`;
}

export interface RetrySchedule {
  /** failed issuance attempts in a row (at least 1 once lastFailureTime is set) */
  attempts: number;
  lastFailureTime: Date;
  nextAttempt: Date;
}

/**
 * When a Certificate whose last issuance failed is tried again; undefined when it has not failed.
 * `certificates` are all Certificates: when many failed in the same minute the trigger spreads
 * their retries, and the answer must match what it does. `notAfter`: the certificate in use.
 */
export function retryScheduleFor(crt: CertificateObj, certificates: readonly CertificateObj[], cfg: BackoffConfig = defaultBackoff, notAfter?: Date): RetrySchedule | undefined {
  const s = crt.status ?? {};
  if (!s.lastFailureTime) return undefined;
  const lastFailureTime = new Date(s.lastFailureTime);
  if (Number.isNaN(lastFailureTime.getTime())) return undefined;
  const attempts = failedAttemptsOf(s);
  const spread = spreadsRetries(failuresInSameMinute(s.lastFailureTime, certificates));
  const nextAttempt = nextAttemptTime({ lastFailureTime, attempts: attempts || undefined, uid: crt.metadata.uid ?? '', cfg, spread, ...(notAfter ? { notAfter } : {}) });
  return { attempts: attempts || 1, lastFailureTime, nextAttempt };
}

/** What a Backoff Event is read by. */
export interface BackoffEventFields {
  reason?: string;
  message?: string;
  lastTimestamp?: string;
  involvedObject?: { uid?: string };
}

/**
 * The schedule with the next attempt that the server's own Backoff Event names for this failure
 * (same attempt count, recorded since the last failure), when there is one: the server knows its
 * --backoff-initial, a command only the flags it was given.
 */
export function withServerNextAttempt(retry: RetrySchedule, crt: CertificateObj, events: readonly BackoffEventFields[]): RetrySchedule {
  const told = events
    .filter((e) => e.involvedObject?.uid === crt.metadata.uid && e.reason === BACKOFF_EVENT_REASON && Date.parse(e.lastTimestamp ?? '') >= retry.lastFailureTime.getTime())
    .map((e) => backoffEventOf(e.message))
    .find((b) => b?.attempts === retry.attempts);
  return told ? { ...retry, nextAttempt: told.nextAttempt } : retry;
}
