import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseType } from '../api/resources.ts';
import { StoreError } from '../store/store.ts';
import { FakeClock } from './clock.ts';
import { LeaderElector, type Lease } from './leaderelection.ts';
import { openTestStore, type TestStore } from './testing/test-store.ts';

const settle = async () => { for (let i = 0; i < 6; i++) await new Promise((r) => setImmediate(r)); };

function candidate(store: TestStore, clock: FakeClock, identity: string, extra: { releaseOnCancel?: boolean } = {}) {
  const log: string[] = [];
  const elector = new LeaderElector({
    store, clock, namespace: 'certsmith', name: 'cert-manager-controller', identity, jitterFactor: 0, ...extra,
    onStartedLeading: () => log.push(`started@${(clock.now().getTime() - t0) / 1000}`),
    onStoppedLeading: () => log.push(`stopped@${(clock.now().getTime() - t0) / 1000}`),
  });
  return { elector, log };
}

const t0 = new Date('2026-01-01T00:00:00Z').getTime();

/** Advances the fake clock in 1 s steps so each async lease round-trip completes between timers. */
async function advance(clock: FakeClock, seconds: number) {
  for (let i = 0; i < seconds; i++) { clock.advance(1000); await settle(); }
}

const lease = async (store: TestStore) => (await store.get<Lease>(LeaseType, 'certsmith', 'cert-manager-controller'))!.spec!;

test('the first candidate takes the Lease and renews it every retry period; the second waits', async () => {
  const store = openTestStore();
  const clock = new FakeClock(t0);
  const a = candidate(store, clock, 'a');
  const b = candidate(store, clock, 'b');
  a.elector.start();
  await settle();
  b.elector.start();
  await settle();
  assert.equal(a.elector.isLeader(), true);
  assert.equal(b.elector.isLeader(), false);
  assert.equal(b.elector.getLeader(), 'a');
  assert.deepEqual(a.log, ['started@0']);
  let spec = await lease(store);
  assert.deepEqual(spec, { holderIdentity: 'a', leaseDurationSeconds: 60, acquireTime: '2026-01-01T00:00:00.000000Z', renewTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 0 });
  await advance(clock, 15);
  spec = await lease(store);
  assert.equal(spec.renewTime, '2026-01-01T00:00:15.000000Z');
  assert.equal(spec.acquireTime, '2026-01-01T00:00:00.000000Z');
  await advance(clock, 120);
  assert.equal(b.elector.isLeader(), false, 'a renewing holder keeps the Lease');
  await a.elector.stop();
  await b.elector.stop();
});

test('when the leader vanishes, another takes over only after the lease duration', async () => {
  const store = openTestStore();
  const clock = new FakeClock(t0);
  const a = candidate(store, clock, 'a', { releaseOnCancel: false });
  const b = candidate(store, clock, 'b');
  a.elector.start();
  await settle();
  b.elector.start();
  await advance(clock, 20);
  // a crashes: stops renewing without releasing (last renewal at 15 s)
  await a.elector.stop();
  assert.deepEqual(a.log, ['started@0', 'stopped@20']);
  await advance(clock, 54);
  assert.equal(b.elector.isLeader(), false, 'not before 15 s + 60 s');
  await advance(clock, 30);
  assert.equal(b.elector.isLeader(), true);
  const took = Number(b.log[0].split('@')[1]);
  assert.ok(took >= 75 && took <= 90, `took over at ${took}s`);
  const spec = await lease(store);
  assert.equal(spec.holderIdentity, 'b');
  assert.equal(spec.leaseTransitions, 1);
  assert.equal(Date.parse(spec.acquireTime!), t0 + took * 1000, 'acquireTime is when b took over');
  await b.elector.stop();
});

test('releasing on stop lets the next candidate take over at its next try', async () => {
  const store = openTestStore();
  const clock = new FakeClock(t0);
  const a = candidate(store, clock, 'a');
  const b = candidate(store, clock, 'b');
  a.elector.start();
  await settle();
  b.elector.start();
  await advance(clock, 5);
  await a.elector.stop();
  assert.equal((await lease(store)).holderIdentity, '');
  await advance(clock, 15);
  assert.equal(b.elector.isLeader(), true);
  assert.equal((await lease(store)).leaseTransitions, 1);
  await b.elector.stop();
});

test('a leader that cannot renew steps down at the renew deadline, not before', async () => {
  const store = openTestStore();
  const clock = new FakeClock(t0);
  const a = candidate(store, clock, 'a');
  a.elector.start();
  await settle();
  store.failWrites = (verb, type) => (type === LeaseType ? new StoreError('InternalError', 'database is locked') : undefined);
  // renewals fail from 15 s; the round's deadline is 15 s + 40 s
  await advance(clock, 54);
  assert.equal(a.elector.isLeader(), true);
  await advance(clock, 1);
  assert.equal(a.elector.isLeader(), false);
  assert.deepEqual(a.log, ['started@0', 'stopped@55']);
  assert.equal(clock.pendingTimers(), 0, 'a stepped-down elector stops campaigning');
});

test('candidates racing for a missing Lease: exactly one wins', async () => {
  const store = openTestStore();
  const clock = new FakeClock(t0);
  const all = ['a', 'b', 'c'].map((id) => candidate(store, clock, id));
  for (const c of all) c.elector.start();
  await settle();
  assert.equal(all.filter((c) => c.elector.isLeader()).length, 1);
  await advance(clock, 30);
  assert.equal(all.filter((c) => c.elector.isLeader()).length, 1);
  for (const c of all) await c.elector.stop();
});

test('a stale resourceVersion loses the compare-and-swap', async () => {
  const store = openTestStore();
  const clock = new FakeClock(t0);
  const a = candidate(store, clock, 'a');
  a.elector.start();
  await settle();
  // someone else rewrites the Lease between a's read and write: a's renewal must fail with 409
  const realGet = store.get.bind(store);
  store.get = (async (...args: Parameters<typeof realGet>) => {
    const got = await realGet(...args);
    const current = await realGet<Lease>(LeaseType, 'certsmith', 'cert-manager-controller');
    await store.update(LeaseType, { ...current!, spec: { ...current!.spec, holderIdentity: 'intruder' } });
    return got;
  }) as typeof store.get;
  await advance(clock, 15);
  store.get = realGet;
  assert.equal((await lease(store)).holderIdentity, 'intruder');
  await a.elector.stop();
});
