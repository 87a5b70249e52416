// When the Order and Challenge controllers may next ask the ACME server about an object that is
// waiting on it (a pending authorization, an order being processed, a DNS record propagating).
// The pace is kept on the object itself, never in process memory: a restart resumes it, and
// nothing grows with the number of objects seen. Each look is one request and a requeue.

import { ACMELookAnnotation } from '../../api/annotations.ts';

export const ANN_NEXT_LOOK = ACMELookAnnotation.nextLookAt;
export const ANN_ACCEPTED_AT = ACMELookAnnotation.acceptedAt;
export const ANN_ACCEPTED_BY = ACMELookAnnotation.acceptedBy;
export const ANN_ACCEPTING = ACMELookAnnotation.acceptingSince;
export const ANN_FINALIZED_AT = ACMELookAnnotation.finalizedAt;

export interface LookPace {
  /** the first wait after the change being waited for (the CA has just been asked) */
  firstMs: number;
  /** the longest wait between two looks */
  maxMs: number;
}

/** Pebble and real CAs validate in milliseconds to seconds: start looking soon, then back off. */
export const AUTHORIZATION_PACE: LookPace = { firstMs: 50, maxMs: 2_000 };
/** as the ACME client's own polling did: 50 ms, doubling, at most 1 s */
export const ORDER_PACE: LookPace = { firstMs: 50, maxMs: 1_000 };
/** cert-manager's DNS01CheckRetryPeriod (10 s) is the longest wait between self-checks */
export const SELF_CHECK_PACE: LookPace = { firstMs: 200, maxMs: 10_000 };
/** a Retry-After beyond this is not waited for in full (a misconfigured CA must not park an order for days) */
export const RETRY_AFTER_CAP_MS = 10 * 60_000;

/**
 * The wait before the next look, given how long the object has waited already. Waiting as long
 * again as has been waited doubles the gaps (50, 100, 200 ms ...) without a counter to keep;
 * maxMs bounds them. A Retry-After the server sent with its last answer is a floor (RFC 8555 §8.2).
 */
export function nextLookDelayMs(pace: LookPace, waitedMs: number, retryAfterMs?: number): number {
  const waited = Number.isFinite(waitedMs) ? waitedMs : 0;
  const doubling = Math.min(pace.maxMs, Math.max(pace.firstMs, waited));
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs)) return doubling;
  return Math.max(doubling, Math.min(RETRY_AFTER_CAP_MS, retryAfterMs));
}

/** Milliseconds until the object may be looked at (0: now), from its next-look mark. */
export function lookDueInMs(annotations: Record<string, string> | undefined, now: Date): number {
  const at = Date.parse(annotations?.[ANN_NEXT_LOOK] ?? '');
  return Number.isFinite(at) ? Math.max(0, at - now.getTime()) : 0;
}

/** An instant with its milliseconds: the first waits are tens of milliseconds. */
export function preciseTime(d: Date): string {
  return d.toISOString();
}

/**
 * How long the object had waited at the look due now: counted to its next-look mark when that is
 * the look being made, so a busy queue's lateness does not stretch the pace; else to now. NaN
 * without a recorded start.
 */
export function waitedAtLook(since: string | undefined, annotations: Record<string, string> | undefined, now: Date): number {
  const start = Date.parse(since ?? '');
  const mark = Date.parse(annotations?.[ANN_NEXT_LOOK] ?? '');
  const at = Number.isFinite(mark) && mark >= start && mark <= now.getTime() ? mark : now.getTime();
  return at - start;
}

/** Milliseconds since a recorded instant; NaN when there is none. */
export function msSince(recorded: string | undefined, now: Date): number {
  return now.getTime() - Date.parse(recorded ?? '');
}
