import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.ts';
import { WorkQueue } from './workqueue.ts';

test('a key added many times is queued once, in first-add order', async () => {
  const q = new WorkQueue();
  q.add('a'); q.add('b'); q.add('a'); q.add('a');
  assert.equal(q.len(), 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.len(), 0);
});

test('a key added while processing is re-queued after done, never handed out twice at once', async () => {
  const q = new WorkQueue();
  q.add('k');
  const first = await q.get();
  q.add('k');
  q.add('k');
  assert.equal(q.len(), 0, 'not handed out while in flight');
  let second: string | undefined;
  void q.get().then((k) => { second = k; });
  await new Promise((r) => setImmediate(r));
  assert.equal(second, undefined);
  q.done(first!);
  await new Promise((r) => setImmediate(r));
  assert.equal(second, 'k');
  q.done('k');
  assert.equal(q.isIdle(), true);
});

test('a waiting worker receives the next added key', async () => {
  const q = new WorkQueue();
  const got = q.get();
  q.add('x');
  assert.equal(await got, 'x');
  assert.equal(q.isIdle(), false);
  q.done('x');
  assert.equal(q.isIdle(), true);
});

test('addAfter: the latest call for a key replaces the earlier timer', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  q.addAfter('k', 60_000);
  q.addAfter('k', 3_600_000);
  assert.equal(clock.pendingTimers(), 1);
  clock.advance(60_000);
  assert.equal(q.len(), 0, 'the replaced 1m timer must not fire');
  clock.advance(3_600_000 - 60_000);
  assert.equal(q.len(), 1);
  // and a later, shorter one wins too
  await q.get(); q.done('k');
  q.addAfter('k', 3_600_000);
  q.addAfter('k', 1000);
  clock.advance(1000);
  assert.equal(q.len(), 1);
  clock.advance(3_600_000);
  assert.equal(q.len(), 1);
});

test('addAfter with zero adds now', () => {
  const q = new WorkQueue({ clock: new FakeClock() });
  q.addAfter('k', 0);
  assert.equal(q.len(), 1);
});

test('addRateLimited backs off exponentially per key up to the max; forget resets', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock, baseDelayMs: 1000, maxDelayMs: 30_000 });
  const delays: number[] = [];
  for (let i = 0; i < 7; i++) {
    const before = clock.now().getTime();
    q.addRateLimited('k');
    delays.push(clock.nextTimerAt()!.getTime() - before);
    clock.set(clock.nextTimerAt()!);
    assert.equal(q.len(), 1);
    q.done((await q.get())!);
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  assert.equal(q.numRequeues('k'), 7);
  q.forget('k');
  q.addRateLimited('k');
  assert.equal(clock.nextTimerAt()!.getTime() - clock.now().getTime(), 1000);
  // another key has its own count
  q.addRateLimited('other');
  assert.equal(q.numRequeues('other'), 1);
});

test('a pending earlier retry is kept when a later one is asked for', () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock, baseDelayMs: 1000, maxDelayMs: 30_000 });
  q.addRateLimited('k'); // due in 1s
  q.addRateLimited('k'); // would be due in 2s: the 1s retry stays
  assert.equal(clock.pendingTimers(), 1);
  clock.advance(1000);
  assert.equal(q.len(), 1);
});

test('shutDown releases waiting workers and drops timers', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock });
  const waiting = q.get();
  q.addAfter('later', 1000);
  q.shutDown();
  assert.equal(await waiting, undefined);
  assert.equal(await q.get(), undefined);
  assert.equal(clock.pendingTimers(), 0);
  q.add('x');
  assert.equal(q.len(), 0);
});

test('many queued keys come out in arrival order while more arrive (the queue compacts what it handed out)', async () => {
  const q = new WorkQueue();
  const out: string[] = [];
  const take = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const key = (await q.get())!;
      out.push(key);
      q.done(key);
    }
  };
  for (let i = 0; i < 5000; i++) q.add(`a${i}`);
  await take(3000);
  for (let i = 0; i < 5000; i++) q.add(`b${i}`);
  assert.equal(q.len(), 7000);
  await take(7000);
  assert.equal(q.len(), 0);
  assert.ok(q.isIdle());
  assert.deepEqual(out, [...Array.from({ length: 5000 }, (_, i) => `a${i}`), ...Array.from({ length: 5000 }, (_, i) => `b${i}`)]);
  // emptied, it is as new: keys added now come out first
  q.add('c');
  assert.equal(await q.get(), 'c');
});
