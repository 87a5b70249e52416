// The Challenge controller's decision (cert-manager's acmechallenges/sync.go): one step at a
// time from scheduled to presented, checked, accepted, final, and cleaned up.
import type { Challenge } from '../../../api/types.ts';
import { parseDuration } from '../../../api/duration.ts';
import { FINAL_STATES } from '../orders/order.ts';

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
  | { kind: 'poll' };

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
  if (st.state === 'processing') return { kind: 'poll' };
  if (!st.presented) return { kind: 'present' };
  const wait = c.spec.solver.waitInsteadOfSelfCheck;
  if (wait === undefined) return { kind: 'self-check' };
  const readyAt = Date.parse(st.presentedAt ?? '') + parseDuration(wait);
  const remaining = readyAt - now.getTime();
  if (Number.isFinite(remaining) && remaining > 0) {
    return { kind: 'wait', remainingMs: remaining, reason: `Waiting ${Math.ceil(remaining / 1000)}s before accepting ${c.spec.type} challenge without self-check` };
  }
  return { kind: 'accept' };
}
