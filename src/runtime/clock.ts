// Time is injected everywhere so that hour-scale behaviour (backoff, renewal, windows)
// is tested with a fake clock instead of sleeps.

export interface Clock {
  now(): Date;
  /** Calls fn after ms of this clock's time; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** What realClock's timers are made of; a test gives its own. */
export interface TimerSources {
  /** the wall clock, ms since the epoch */
  wallNow(): number;
  /** a monotonic clock in ms: the one setTimeout runs on */
  monotonicNow(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * How long a timer sleeps before it looks at the wall clock again. Node's timers run on the
 * monotonic clock, which stands still while the host is suspended and does not follow a step of
 * the wall clock (NTP correcting a box that booted without a real-time clock, a VM restored or
 * resumed), while what certsmith waits for (a renewal time, a backoff's end, an expiry) is an
 * instant of the wall clock. A timer wakes this often to check it, so what fell due meanwhile
 * happens within this long of the resume, not the suspend's length later. One wake-up per
 * pending timer, and there are a handful (each work queue keeps its keys behind one timer).
 */
export const WALL_CLOCK_CHECK_MS = 30_000;

/**
 * Timers that fire when either ms of monotonic time has passed (as setTimeout: a wall clock
 * stepped back delays nothing) or the wall clock has reached now + ms (a suspend or a step
 * forward delays nothing by more than checkMs).
 */
export function wallClockTimers(src: TimerSources, checkMs = WALL_CLOCK_CHECK_MS): Clock['setTimer'] {
  return (ms, fn) => {
    const wallDue = src.wallNow() + ms;
    const monotonicDue = src.monotonicNow() + ms;
    let handle: unknown;
    const arm = () => {
      const left = Math.min(wallDue - src.wallNow(), monotonicDue - src.monotonicNow());
      if (left <= 0) {
        handle = undefined;
        fn();
        return;
      }
      // setTimeout overflows above 2^31-1 ms (~24.8 days); checkMs is far below
      handle = src.setTimeout(arm, Math.min(left, checkMs));
    };
    handle = src.setTimeout(arm, Math.min(Math.max(ms, 0), checkMs));
    return () => {
      if (handle !== undefined) src.clearTimeout(handle);
      handle = undefined;
    };
  };
}

export const realClock: Clock = {
  now: () => new Date(),
  setTimer: wallClockTimers({
    wallNow: Date.now,
    monotonicNow: () => performance.now(),
    setTimeout(fn, ms) {
      // a pending timer does not keep the process alive: what runs decides that
      const t = setTimeout(fn, ms);
      t.unref();
      return t;
    },
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  }),
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
