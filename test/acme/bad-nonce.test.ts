// A CA that keeps refusing nonces (RFC 8555 §6.5: badNonce, which a client "SHOULD" retry) is a
// CA having a bad moment, not a failure of the user's certificate: once the client's own retries
// of one request run out, the step is retried later with backoff, as for a 5xx, and no issuance
// attempt is counted (found with Pebble rejecting 90% of nonces: every certificate went into the
// one-hour backoff). The fault proxy answers more consecutive badNonce than the client retries at
// the steps that change state; Pebble does the rest for real.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { FaultMatch, FaultProxy } from '../rig/fault-proxy.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { apply, assertNoAttemptCounted, events, manifest, startProxiedRig, waitAllReady, type ProxiedRig } from './restart-rig.ts';

let rig: ProxiedRig;
let proxy: FaultProxy;
let s: RunningServer;
/** more than the client's own retries of one request (AcmeClient: 10) */
const REFUSALS = 12;

before(async () => {
  rig = await startProxiedRig('bad-nonce');
  ({ proxy, server: s } = rig);
});
after(() => rig?.stop());

function refuseNonces(match: FaultMatch) {
  const hits = Array.from({ length: REFUSALS }, () => proxy.answer(match, { status: 400, type: 'badNonce', detail: 'JWS has an invalid anti-replay nonce' }).hit);
  return Promise.all(hits);
}

test('badNonce on every try of a new order, a challenge accept and a finalize: retried later, Ready, no issuance attempt counted', async () => {
  const dnsName = `nonce-${crypto.randomBytes(3).toString('hex')}.example.test`;
  const refused = Promise.all([
    refuseNonces({ method: 'POST', path: /\/order-plz/, withPayload: true }),
    refuseNonces({ method: 'POST', path: /\/chalZ\//, withPayload: true }),
    refuseNonces({ method: 'POST', path: /\/finalize-order\//, withPayload: true }),
  ]);
  await apply(s, manifest('nonce', proxy, [{ name: 'nonce', dnsName }]));
  const certs = await waitAllReady(s, ['nonce'], 90_000);
  assertNoAttemptCounted(certs);
  await refused;
  const evs = await events(s);
  assert.equal(evs.filter((e) => e.type === 'Warning' && /badNonce/.test(String(e.message)) && /Failed|Errored/.test(String(e.reason))).length, 0, JSON.stringify(evs.map((e) => `${e.reason}: ${e.message}`)));
});
