// Time is injected everywhere so that hour-scale behaviour (backoff, renewal, windows)
// is tested with a fake clock instead of sleeps.

export interface Clock {
  now(): Date;
  /** Calls fn after ms of this clock's time; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const realClock: Clock = {
  now: () => new Date(),
  setTimer(ms, fn) {
    // setTimeout overflows above 2^31-1 ms (~24.8 days): re-arm in steps.
    const max = 2_147_483_647;
    let handle: NodeJS.Timeout;
    const arm = (left: number) => {
      handle = setTimeout(() => (left > max ? arm(left - max) : fn()), Math.min(Math.max(left, 0), max));
      handle.unref?.();
    };
    arm(ms);
    return () => clearTimeout(handle);
  },
};

interface FakeTimer { at: number; fn: () => void; id: number }

/** A clock that only moves when told to; timers due by the new time fire in order. */
export class FakeClock implements Clock {
  private t: number;
  private timers: FakeTimer[] = [];
  private seq = 0;

  constructor(start: Date | string | number = '2026-01-01T00:00:00Z') {
    this.t = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.t);
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), fn, id: this.seq++ };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** Moves time forward by ms, firing each due timer at its own instant. */
  advance(ms: number): void {
    this.set(this.t + ms);
  }

  set(to: Date | string | number): void {
    const target = new Date(to).getTime();
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = Math.max(this.t, target);
  }

  /** The earliest pending timer, for tests that step from event to event. */
  nextTimerAt(): Date | undefined {
    const at = Math.min(...this.timers.map((x) => x.at));
    return Number.isFinite(at) ? new Date(at) : undefined;
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}
