// Replacement backoff (issue 12, finding 2), for every certificate controller that deletes an
// object because it does not match and then makes it again (the request manager's requests,
// the key manager's next-key Secrets). If the new object cannot match either (a spec that
// encodes differently from what it says, a bug, an object that reached the store without
// admission), that cycle would repeat as fast as the store can write: ~1,150 writes/s was
// measured. So replacements for one Certificate are spaced exponentially: the first is
// immediate (a user edited the spec), the next waits initialMs, then twice that, up to maxMs.
// A reconcile with nothing to do (the object matches, or issuance is over) ends the sequence.
// The history lives in memory: a restart allows one immediate replacement again, which keeps
// the rate bounded all the same.

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

/** The wait before replacement number count+1, after `count` replacements in a row. */
export function replacementDelay(count: number, cfg: ReplacementBackoff = defaultReplacementBackoff): number {
  if (count < 1) return 0;
  return Math.min(cfg.initialMs * 2 ** Math.min(count - 1, 40), cfg.maxMs);
}

export interface ReplacementGate {
  /** false: hold every action of this reconcile back (a create would collide with the object not yet deleted) */
  proceed: boolean;
  requeueAfterMs?: number;
  /** the history to keep; undefined forgets it */
  history?: ReplacementHistory;
}

/**
 * replacing: this reconcile deletes an object because it does not match; idle: it has nothing
 * to do at all. Pure: the caller keeps the history per Certificate.
 */
export function gateReplacement(o: { replacing: boolean; idle: boolean }, history: ReplacementHistory | undefined, now: Date, cfg: ReplacementBackoff = defaultReplacementBackoff): ReplacementGate {
  if (!o.replacing) return { proceed: true, history: o.idle ? undefined : history };
  if (history) {
    const left = history.lastAt + replacementDelay(history.count, cfg) - now.getTime();
    if (left > 0) return { proceed: false, requeueAfterMs: left, history };
  }
  return { proceed: true, history: { count: (history?.count ?? 0) + 1, lastAt: now.getTime() } };
}

/** Per-Certificate histories for one controller, forgotten when the Certificate goes. */
export class ReplacementHistories {
  private readonly byUID = new Map<string, ReplacementHistory>();

  get(uid: string): ReplacementHistory | undefined {
    return this.byUID.get(uid);
  }

  set(uid: string, h: ReplacementHistory | undefined): void {
    if (h) this.byUID.set(uid, h);
    else this.byUID.delete(uid);
  }

  forget(uid: string | undefined): void {
    if (uid) this.byUID.delete(uid);
  }
}
