// Issue 20: an order the CA calls invalid although its authorization is valid (CI met this with
// Pebble while certsmith was SIGKILLed during a batch: the Challenge was valid, the finalize got
// orderNotReady with the order "invalid") is not the user's failure. It is retried with a new
// Order, bounded, and counts no issuance attempt. The fault proxy answers the finalize with the
// CA's orderNotReady and shows the order invalid on the look that follows; Pebble validates the
// authorization for real.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { FaultProxy } from '../rig/fault-proxy.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { apply, assertNoAttemptCounted, events, manifest, startProxiedRig, waitAllReady, type ProxiedRig } from './restart-rig.ts';

let rig: ProxiedRig;
let proxy: FaultProxy;
let s: RunningServer;

before(async () => {
  rig = await startProxiedRig('order-invalidated');
  ({ proxy, server: s } = rig);
});
after(() => rig?.stop());

test('an order made invalid at the CA while its authorization is valid: a new Order, Ready, no issuance attempt counted', async () => {
  const dnsName = `inv-${crypto.randomBytes(3).toString('hex')}.example.test`;
  const finalize = proxy.answer({ method: 'POST', path: /\/finalize-order\//, withPayload: true }, { status: 403, type: 'orderNotReady', detail: 'Order\'s status ("invalid") was not ready' });
  // the look at the order that follows the refused finalize: invalid, with the CA's error
  const looked = finalize.hit.then(() => proxy.rewrite({ method: 'POST', path: /\/my-order\// }, (body) => JSON.stringify({
    ...(JSON.parse(body) as object), status: 'invalid', error: { type: 'urn:ietf:params:acme:error:serverInternal', detail: 'made invalid by the test' },
  })).hit);
  await apply(s, manifest('inv', proxy, [{ name: 'inv', dnsName }]));
  const certs = await waitAllReady(s, ['inv'], 60_000);
  assertNoAttemptCounted(certs);
  assert.match((await looked).body, /"status":"invalid"/);
  assert.equal(proxy.newOrders.filter((o) => o.identifiers.includes(dnsName)).length, 2, 'the invalid order and its retry');
  const evs = await events(s);
  const invalidated = evs.filter((e) => e.reason === 'OrderInvalidated');
  assert.equal(invalidated.length, 1, JSON.stringify(evs.map((e) => e.reason)));
  assert.match(String(invalidated[0].message), /^The ACME server made this order invalid although all its authorizations are valid \(made invalid by the test\); a new Order follows: /);
  assert.ok(evs.some((e) => e.reason === 'OrderRetried'), 'the request says it retried');
});
