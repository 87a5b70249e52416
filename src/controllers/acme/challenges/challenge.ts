// The Challenge controller's decision (cert-manager's acmechallenges/sync.go): one step at a
// time from scheduled to presented, checked, accepted, final, and cleaned up.
import type { Challenge, ChallengeStatus } from '../../../api/types.ts';
import { parseDuration } from '../../../api/duration.ts';
import { FINAL_STATES } from '../orders/order.ts';
import {
  ANN_ACCEPTED_AT, ANN_NEXT_LOOK, AUTHORIZATION_PACE, lookDueInMs, msSince, nextLookDelayMs, preciseTime, SELF_CHECK_PACE, waitedAtLook,
} from '../look-schedule.ts';

/** how long an accepted challenge may stay unanswered before it is given up as errored */
export const POLL_TIMEOUT_MS = 2 * 60_000;

export const FINALIZER = 'finalizer.acme.cert-manager.io';
/** the name cert-manager moved to; honoured on objects it wrote */
export const LEGACY_FINALIZERS = ['acme.cert-manager.io/finalizer'];

export type ChallengeStep =
  | { kind: 'none' }
  /** final or being deleted: undo what was presented, then let go of the object */
  | { kind: 'cleanup' }
  | { kind: 'add-finalizer' }
  | { kind: 'initial-state' }
  | { kind: 'present' }
  | { kind: 'self-check' }
  | { kind: 'wait'; remainingMs: number; reason: string }
  | { kind: 'accept' }
  | { kind: 'poll' }
  /** a self-check or a poll was done recently: the next one is due then (ANN_NEXT_LOOK, ANN_ACCEPTED_AT) */
  | { kind: 'look-later'; afterMs: number };

export function hasFinalizer(c: Challenge): boolean {
  return !!c.metadata.finalizers?.some((f) => f === FINALIZER || LEGACY_FINALIZERS.includes(f));
}

export function isFinal(c: Challenge): boolean {
  return FINAL_STATES.includes(c.status?.state ?? '');
}

export function decideChallenge(c: Challenge, now: Date): ChallengeStep {
  const st = c.status ?? {};
  if (c.metadata.deletionTimestamp || isFinal(c)) {
    if (hasFinalizer(c) || st.processing || st.presented) return { kind: 'cleanup' };
    return { kind: 'none' };
  }
  if (!st.processing) return { kind: 'none' };
  if (!hasFinalizer(c)) return { kind: 'add-finalizer' };
  if (!st.state) return { kind: 'initial-state' };
  // 'processing' is what this controller records once it has accepted the challenge.
  if (st.state === 'processing') {
    // The first look waits a moment after the accepting POST; later ones when the last look said.
    const acceptedAt = Date.parse(c.metadata.annotations?.[ANN_ACCEPTED_AT] ?? '');
    const firstDue = Number.isFinite(acceptedAt) ? acceptedAt + AUTHORIZATION_PACE.firstMs - now.getTime() : 0;
    const dueInMs = Math.max(firstDue, lookDueInMs(c.metadata.annotations, now));
    return dueInMs > 0 ? { kind: 'look-later', afterMs: dueInMs } : { kind: 'poll' };
  }
  if (!st.presented) {
    // a provider that throttled the last present asked for a wait (afterThrottledPresent)
    const dueInMs = lookDueInMs(c.metadata.annotations, now);
    return dueInMs > 0 ? { kind: 'look-later', afterMs: dueInMs } : { kind: 'present' };
  }
  const wait = c.spec.solver.waitInsteadOfSelfCheck;
  if (wait === undefined) {
    const dueInMs = lookDueInMs(c.metadata.annotations, now);
    return dueInMs > 0 ? { kind: 'look-later', afterMs: dueInMs } : { kind: 'self-check' };
  }
  const readyAt = Date.parse(st.presentedAt ?? '') + parseDuration(wait);
  const remaining = readyAt - now.getTime();
  if (Number.isFinite(remaining) && remaining > 0) {
    return { kind: 'wait', remainingMs: remaining, reason: `Waiting ${Math.ceil(remaining / 1000)}s before accepting ${c.spec.type} challenge without self-check` };
  }
  return { kind: 'accept' };
}

/**
 * Whether the Challenge's token must be served now, whatever its next step: it was presented or
 * accepted (the CA may look at any moment) and it is neither final nor being deleted. A responder
 * that starts fresh, is taken over after a restart or is replaced is given these at once (issue 20).
 */
export function needsServing(c: Challenge): boolean {
  const st = c.status ?? {};
  if (c.metadata.deletionTimestamp || isFinal(c) || !st.processing) return false;
  return !!st.presented || st.state === 'processing';
}

/**
 * The writes that record a finished cleanup on the Challenge as it stands now: the one the cleanup
 * started from, or the fresh one read after a write conflicted (the Order deletes its Challenges
 * once they are valid, often while CleanUp is in flight). presented=false is what tells a later
 * pass that CleanUp was done; a Challenge being deleted needs only the finalizer's removal, which
 * deletes it. Undefined fields need no write.
 */
export function afterCleanUp(c: Challenge): { status?: Partial<ChallengeStatus>; finalizers?: string[] } {
  const own = c.metadata.finalizers ?? [];
  const finalizers = own.filter((f) => f !== FINALIZER && !LEGACY_FINALIZERS.includes(f));
  return {
    ...(c.metadata.deletionTimestamp ? {} : { status: { presented: false, processing: false } }),
    ...(finalizers.length !== own.length ? { finalizers } : {}),
  };
}

/** What a failed self-check or a still-pending authorization leads to. */
export type LookOutcome =
  | { kind: 'look-later'; afterMs: number; annotations: Record<string, string> }
  | { kind: 'give-up'; reason: string };

/** After a failed self-check: the wait doubles with the time since the record was presented (200 ms up to 10 s). */
export function afterFailedSelfCheck(c: Challenge, now: Date): LookOutcome & { kind: 'look-later' } {
  const afterMs = nextLookDelayMs(SELF_CHECK_PACE, waitedAtLook(c.status?.presentedAt, c.metadata.annotations, now));
  return { kind: 'look-later', afterMs, annotations: { [ANN_NEXT_LOOK]: preciseTime(new Date(now.getTime() + afterMs)) } };
}

/**
 * After a present the DNS provider's API throttled with a wait longer than its client waits: the
 * next present no sooner than that (the API's word), instead of the work queue's backoff.
 */
export function afterThrottledPresent(now: Date, retryAfterMs: number): LookOutcome & { kind: 'look-later' } {
  return { kind: 'look-later', afterMs: retryAfterMs, annotations: { [ANN_NEXT_LOOK]: preciseTime(new Date(now.getTime() + retryAfterMs)) } };
}

/**
 * After a poll that found the authorization still pending: give up POLL_TIMEOUT_MS after the
 * challenge was accepted, else look again after a wait that doubles with the time since the
 * accepting POST (50 ms up to 2 s), no sooner than the server's Retry-After. A Challenge accepted
 * without the mark (by an older certsmith) counts from this look.
 */
export function afterPendingAuthorization(c: Challenge, now: Date, retryAfterMs?: number): LookOutcome {
  const recorded = c.metadata.annotations?.[ANN_ACCEPTED_AT];
  if (recorded && msSince(recorded, now) > POLL_TIMEOUT_MS) {
    return { kind: 'give-up', reason: `Error accepting authorization: still pending ${POLL_TIMEOUT_MS / 1000}s after the challenge was accepted` };
  }
  const afterMs = nextLookDelayMs(AUTHORIZATION_PACE, recorded ? waitedAtLook(recorded, c.metadata.annotations, now) : 0, retryAfterMs);
  return {
    kind: 'look-later', afterMs,
    annotations: { ...(recorded ? {} : { [ANN_ACCEPTED_AT]: preciseTime(now) }), [ANN_NEXT_LOOK]: preciseTime(new Date(now.getTime() + afterMs)) },
  };
}
