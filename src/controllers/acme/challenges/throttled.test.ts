// A DNS provider that throttles with a wait longer than its client waits (ProviderThrottledError,
// the Retry-After it asked for) is not asked again before that wait is over: the Challenge says
// so in its reason and looks again then, instead of presenting on the wake-up its own status write
// causes and then on the work queue's 5 s doubling backoff, each of which is sure to be throttled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Challenge } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj } from '../../../api/types.ts';
import { InformerFactory } from '../../../runtime/informer.ts';
import { openTestStore } from '../../../runtime/testing/test-store.ts';
import type { ControllerContext } from '../../context.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { challengeController } from './controller.ts';
import { FINALIZER } from './challenge.ts';
import { ProviderThrottledError } from '../solvers/dns01/secret-ref.ts';
import { fixedClock } from '../../testing/fixtures.ts';

async function rig() {
  const store = openTestStore();
  const created = await store.create<ChallengeObj>(Challenge, {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', finalizers: [FINALIZER] },
    spec: {
      url: 'https://ca.test/chall/1', authorizationURL: 'https://ca.test/authz/1', dnsName: 'a.example.test', type: 'HTTP-01', token: 'tok', key: 'tok.key',
      solver: { http01: { ingress: {} } }, issuerRef: { name: 'le' },
    },
  } as ChallengeObj);
  await store.updateStatus<ChallengeObj>(Challenge, { ...created, status: { processing: true, presented: false, state: 'pending' } });

  let throttledFor = 60_000;
  const presents: string[] = [];
  const solver = {
    port: 0, close: async () => {}, cleanUp() {},
    present(token: string) {
      presents.push(token);
      if (throttledFor) throw new ProviderThrottledError(`HTTP 429 (throttled: the API asks to wait ${throttledFor / 1000} s)`, throttledFor);
    },
  };
  const rt = { http01: async () => solver, onHTTP01Serving() {}, http01LostAt: () => undefined } as unknown as AcmeRuntime;
  const clock = fixedClock();
  const informers = new InformerFactory(store);
  const ctx = {
    store, informers, clock, options: {},
    recorder: { event() {} }, recorderFor: () => ({ event() {} }), logger: { info() {}, warn() {}, error() {}, debug() {} },
  } as unknown as ControllerContext;
  const controller = challengeController(ctx, rt);
  controller.watch(() => {});
  informers.start();
  await informers.waitForSync();
  const current = () => informers.informerFor<ChallengeObj>(Challenge).get('default', 'c')!;
  /** one pass, once the cache holds what the last one wrote */
  async function pass() {
    const result = await controller.reconcile('default/c');
    const stored = (await store.get<ChallengeObj>(Challenge, 'default', 'c'))!.metadata.resourceVersion;
    for (let i = 0; i < 200 && current().metadata.resourceVersion !== stored; i++) await new Promise((r) => setTimeout(r, 5));
    return result;
  }
  return { clock, presents, current, pass, informers, stopThrottling: () => (throttledFor = 0) };
}

test('throttled for 60 s while presenting: the reason says so, nothing is asked again before the 60 s, then it presents', async () => {
  const r = await rig();
  try {
    const first = await r.pass();
    assert.deepEqual(r.presents, ['tok']);
    assert.equal(first?.requeueAfterMs, 60_000, 'the next look is when the API asked');
    assert.match(r.current().status?.reason ?? '', /^Error presenting challenge: HTTP 429 \(throttled: the API asks to wait 60 s\)$/);
    assert.equal(r.current().status?.presented, false);

    // the wake-up from its own status write, and one 30 s later: not before the wait is over
    assert.equal((await r.pass())?.requeueAfterMs, 60_000);
    r.clock.advance(30_000);
    assert.equal((await r.pass())?.requeueAfterMs, 30_000);
    assert.deepEqual(r.presents, ['tok'], 'not presented again inside the wait');

    r.clock.advance(30_000);
    r.stopThrottling();
    await r.pass();
    // presented now (and given to the responder again by the steps after it in the same pass)
    assert.ok(r.presents.length > 1, 'presented once the wait was over');
    assert.equal(r.current().status?.presented, true);
    assert.doesNotMatch(r.current().status?.reason ?? '', /throttled/);
  } finally {
    r.informers.stop();
  }
});
