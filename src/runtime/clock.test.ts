import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wallClockTimers, type TimerSources } from './clock.ts';

/** Node's timers as they behave on a host: they run on the monotonic clock, the wall clock may jump. */
class Host implements TimerSources {
  wall = Date.parse('2026-11-27T12:00:00Z');
  monotonic = 1_000;
  private pending: { at: number; fn: () => void; id: number }[] = [];
  private seq = 0;
  wakeUps = 0;

  wallNow = () => this.wall;
  monotonicNow = () => this.monotonic;
  setTimeout = (fn: () => void, ms: number) => {
    const t = { at: this.monotonic + ms, fn, id: this.seq++ };
    this.pending.push(t);
    return t;
  };
  clearTimeout = (handle: unknown) => {
    this.pending = this.pending.filter((t) => t !== handle);
  };

  /** Time runs normally: both clocks move by ms, timers due fire in order. */
  run(ms: number): void {
    const end = this.monotonic + ms;
    for (;;) {
      this.pending.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.pending[0];
      if (!next || next.at > end) break;
      this.pending.shift();
      this.wall += next.at - this.monotonic;
      this.monotonic = next.at;
      this.wakeUps++;
      next.fn();
    }
    this.wall += end - this.monotonic;
    this.monotonic = end;
  }

  /** A suspend, or the wall clock stepped: only the wall clock moves. */
  jumpWall(ms: number): void {
    this.wall += ms;
  }
}

const day = 86_400_000;

test('a timer fires after its delay while both clocks run together, waking only every check interval', () => {
  const host = new Host();
  const setTimer = wallClockTimers(host, 30_000);
  let fired = 0;
  setTimer(10 * 60_000, () => fired++);
  host.run(10 * 60_000 - 1);
  assert.equal(fired, 0);
  host.run(1);
  assert.equal(fired, 1);
  assert.equal(host.wakeUps, 20, 'one wake-up per 30 s of a 10 min wait');
  host.run(day);
  assert.equal(fired, 1, 'fires once');
});

test('the host sleeps through the due time (monotonic clock stood still): the timer fires within one check interval of the resume', () => {
  const host = new Host();
  const setTimer = wallClockTimers(host, 30_000);
  let firedAtWall: number | undefined;
  const due = host.wall + 2 * day;
  setTimer(2 * day, () => (firedAtWall = host.wall));
  host.run(60_000);
  host.jumpWall(3 * day); // suspended for three days
  host.run(30_000);
  assert.ok(firedAtWall !== undefined, 'fired at the first check after the resume');
  assert.ok(firedAtWall >= due);
});

test('the wall clock steps forward part of the way: the timer fires at the wall-clock due time, not the monotonic one', () => {
  const host = new Host();
  const setTimer = wallClockTimers(host, 30_000);
  let fired = false;
  setTimer(60 * 60_000, () => (fired = true));
  host.jumpWall(40 * 60_000);
  host.run(19 * 60_000);
  assert.equal(fired, false, 'not before the wall clock reaches the due time');
  host.run(60_000 + 30_000);
  assert.equal(fired, true);
});

test('the wall clock steps back: a delay still ends after its length of monotonic time (a backoff is not stretched)', () => {
  const host = new Host();
  const setTimer = wallClockTimers(host, 30_000);
  let fired = false;
  setTimer(5_000, () => (fired = true));
  host.jumpWall(-60 * 60_000);
  host.run(4_999);
  assert.equal(fired, false);
  host.run(1);
  assert.equal(fired, true);
});

test('a cancelled timer never fires, whether cancelled before its first check or between checks', () => {
  const host = new Host();
  const setTimer = wallClockTimers(host, 30_000);
  let fired = 0;
  setTimer(10_000, () => fired++)();
  const cancelLater = setTimer(5 * 60_000, () => fired++);
  host.run(95_000);
  cancelLater();
  host.jumpWall(day);
  host.run(day);
  assert.equal(fired, 0);
});

test('delays past setTimeout\'s 2^31-1 ms limit (about 24.8 days) are waited out in checks, never overflowing', () => {
  const host = new Host();
  const setTimer = wallClockTimers(host, 30_000);
  let fired = false;
  setTimer(60 * day, () => (fired = true));
  host.run(60 * day - 1);
  assert.equal(fired, false);
  host.run(1);
  assert.equal(fired, true);
});
