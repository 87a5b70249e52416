// The Challenge controller's shell calls the solver's CleanUp once per presented Challenge, even
// when the object changes while CleanUp is in flight: the Order deletes its Challenges as soon as
// they are valid (a flaky webhook-solver e2e saw CleanUp twice), and any other write makes the
// controller's next write conflict. A retry must see that the cleanup was done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Challenge } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj } from '../../../api/types.ts';
import { InformerFactory } from '../../../runtime/informer.ts';
import { openTestStore, type TestStore } from '../../../runtime/testing/test-store.ts';
import type { ControllerContext } from '../../context.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { challengeController } from './controller.ts';
import { FINALIZER } from './challenge.ts';
import { fixedClock } from '../../testing/fixtures.ts';

const settle = async () => { for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r)); };

/**
 * A presented, valid HTTP-01 Challenge served by a fake embedded responder whose CleanUp runs
 * `during` (what another writer does meanwhile) before it returns.
 */
async function rig(o: { deleting?: boolean; during: (store: TestStore) => Promise<unknown> }) {
  const store = openTestStore();
  const created = await store.create<ChallengeObj>(Challenge, {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', finalizers: [FINALIZER] },
    spec: {
      url: 'https://ca.test/chall/1', authorizationURL: 'https://ca.test/authz/1', dnsName: 'a.example.test', type: 'HTTP-01', token: 'tok', key: 'tok.key',
      solver: { http01: { ingress: {} } }, issuerRef: { name: 'le' },
    },
  } as ChallengeObj);
  await store.updateStatus<ChallengeObj>(Challenge, {
    ...created, status: { processing: true, presented: true, presentedAt: '2026-06-01T00:00:00.000Z', state: 'valid', reason: 'Successfully authorized domain' },
  });
  if (o.deleting) await store.delete(Challenge, 'default', 'c');

  const cleanUps: string[] = [];
  const http01 = {
    port: 0, present() {}, close: async () => {},
    async cleanUp(token: string) {
      cleanUps.push(token);
      await o.during(store);
    },
  };
  const rt = { http01: async () => http01, onHTTP01Serving() {}, http01LostAt: () => undefined } as unknown as AcmeRuntime;
  const informers = new InformerFactory(store);
  const ctx = {
    store, informers, clock: fixedClock(), options: {},
    recorder: { event() {} }, recorderFor: () => ({ event() {} }), logger: { info() {}, warn() {}, error() {}, debug() {} },
  } as unknown as ControllerContext;
  const controller = challengeController(ctx, rt);
  controller.watch(() => {});
  informers.start();
  await informers.waitForSync();

  /** one reconcile, then the manager's retries (its backoff is a wait for the cache here) until one succeeds */
  async function reconcileUntilDone() {
    const errors: string[] = [];
    for (let i = 0; i < 5; i++) {
      try {
        await controller.reconcile('default/c');
        return errors;
      } catch (e) {
        errors.push((e as Error).message);
        await settle();
      }
    }
    assert.fail(`still failing after 5 tries: ${errors.join('; ')}`);
  }
  return { store, informers, cleanUps, reconcileUntilDone };
}

test('a valid Challenge deleted by its Order while CleanUp is in flight: CleanUp once, and the Challenge goes', async () => {
  const r = await rig({ during: (store) => store.delete(Challenge, 'default', 'c') });
  assert.deepEqual(await r.reconcileUntilDone(), [], 'a conflict after CleanUp does not fail the pass');
  await settle();
  await r.reconcileUntilDone(); // the deletion's watch event wakes the key again
  assert.deepEqual(r.cleanUps, ['tok'], 'the solver is asked to clean up once');
  assert.equal(await r.store.get(Challenge, 'default', 'c'), undefined, 'the finalizer was removed');
  r.informers.stop();
});

test('a valid Challenge changed by another writer while CleanUp is in flight: CleanUp once, presented=false recorded', async () => {
  const r = await rig({
    during: async (store) => {
      const cur = (await store.get<ChallengeObj>(Challenge, 'default', 'c'))!;
      await store.update(Challenge, { ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } });
    },
  });
  assert.deepEqual(await r.reconcileUntilDone(), []);
  await settle();
  await r.reconcileUntilDone();
  assert.deepEqual(r.cleanUps, ['tok']);
  const after = await r.store.get<ChallengeObj>(Challenge, 'default', 'c');
  assert.equal(after?.status?.presented, false);
  assert.equal(after?.status?.processing, false);
  assert.deepEqual(after?.metadata.finalizers ?? [], []);
  assert.equal(after?.metadata.labels?.touched, 'yes', "the other writer's change is kept");
  r.informers.stop();
});

test('a Challenge being deleted, changed while CleanUp is in flight: CleanUp once, and the finalizer still goes', async () => {
  const r = await rig({
    deleting: true,
    during: async (store) => {
      const cur = (await store.get<ChallengeObj>(Challenge, 'default', 'c'))!;
      await store.updateStatus(Challenge, { ...cur, status: { ...cur.status, reason: 'touched' } });
    },
  });
  assert.deepEqual(await r.reconcileUntilDone(), []);
  await settle();
  await r.reconcileUntilDone();
  assert.deepEqual(r.cleanUps, ['tok']);
  assert.equal(await r.store.get(Challenge, 'default', 'c'), undefined);
  r.informers.stop();
});

test('the pass right after a cleanup that removed the last finalizer, before the cache has seen the deletion: no second CleanUp', async () => {
  // the deletion's watch event re-queues the key while CleanUp is in flight; the queue runs that
  // pass as soon as this one ends, and the cache may still hold the object marked for deletion,
  // presented (CI's webhook-solver e2e saw CleanUp twice while kubectl kept the server busy)
  const r = await rig({ during: (store) => store.delete(Challenge, 'default', 'c') });
  const before = (await r.store.get<ChallengeObj>(Challenge, 'default', 'c'))!;
  assert.deepEqual(await r.reconcileUntilDone(), []);
  // the lagging cache, set by hand: the informer's map holds what the next pass reads
  const lagging = { ...before, metadata: { ...before.metadata, deletionTimestamp: '2026-06-01T00:00:01Z', resourceVersion: String(Number(before.metadata.resourceVersion) + 1) } };
  (r.informers.informerFor<ChallengeObj>(Challenge) as unknown as { cache: Map<string, ChallengeObj> }).cache.set('default/c', Object.freeze(lagging));
  await r.reconcileUntilDone();
  assert.deepEqual(r.cleanUps, ['tok'], 'the solver is asked to clean up once');
  assert.equal(await r.store.get(Challenge, 'default', 'c'), undefined);
  r.informers.stop();
});
