import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { decideTrigger, type TriggerInput } from './trigger.ts';
import { SPREAD_THRESHOLD } from '../../../shared/backoff.ts';
import { defaultBackoff } from '../../../shared/backoff.ts';
import type { Certificate as CertificateObj } from '../../../api/types.ts';

const HOUR = 3_600_000;
const now = new Date('2026-05-01T12:00:00Z');

function failing(status: CertificateObj['status'], uid = 'uid-1'): TriggerInput {
  return {
    certificate: {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
      metadata: { name: 'c', namespace: 'default', uid, generation: 1 },
      spec: { secretName: 'c-tls', dnsNames: ['c.example.test'], issuerRef: { name: 'ca' } },
      status,
    },
    isSecretOwner: true,
    failuresInSameMinute: 1,
  };
}

test('backs off 1h·2^(n-1) from lastFailureTime, capped at 32h', () => {
  for (const [attempts, hours] of [[1, 1], [2, 2], [3, 4], [4, 8], [5, 16], [6, 32], [7, 32], [20, 32]] as const) {
    const d = decideTrigger(failing({ lastFailureTime: now.toISOString(), issuanceAttempts: attempts }), now, defaultBackoff);
    assert.equal(d.conditions, undefined, `no issuance while backing off (attempts ${attempts})`);
    assert.equal(d.requeueAfterMs, hours * HOUR, `attempts ${attempts}`);
    assert.match(d.events[0].message, /next attempt will be at/);
  }
});

test('a failure dated after now (the wall clock was stepped back) waits the delay from now, not the step as well', () => {
  // stepped back a day: without the bound, a 1h backoff would wait 25h
  const d = decideTrigger(failing({ lastFailureTime: new Date(now.getTime() + 24 * HOUR).toISOString(), issuanceAttempts: 1 }), now, defaultBackoff);
  assert.equal(d.conditions, undefined, 'still backing off');
  assert.equal(d.requeueAfterMs, HOUR);
  assert.match(d.events[0].message, new RegExp(`next attempt will be at ${new Date(now.getTime() + HOUR).toISOString().replace('.000', '')}`));
});

test('an object from before the feature (no counter) waits 1h; cert-manager\'s counter is read too', () => {
  const d = decideTrigger(failing({ lastFailureTime: new Date(now.getTime() - 59 * 60_000).toISOString() }), now, defaultBackoff);
  assert.equal(d.requeueAfterMs, 60_000);
  const upstream = decideTrigger(failing({ lastFailureTime: now.toISOString(), failedIssuanceAttempts: 3 }), now, defaultBackoff);
  assert.equal(upstream.requeueAfterMs, 4 * HOUR);
});

test('once the delay has passed, issuance starts; an Issuing=True set by hand is left alone', () => {
  const d = decideTrigger(failing({ lastFailureTime: new Date(now.getTime() - HOUR).toISOString(), issuanceAttempts: 1 }), now, defaultBackoff);
  assert.equal(d.conditions?.find((c) => c.type === 'Issuing')?.status, 'True');
  assert.equal(d.violation?.reason, 'DoesNotExist');
  const manual = decideTrigger(failing({
    lastFailureTime: now.toISOString(), issuanceAttempts: 5,
    conditions: [{ type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'x' }],
  }), now, defaultBackoff);
  assert.deepEqual(manual, { events: [] });
});

test('shorter flags keep the shape of the formula', () => {
  const cfg = { initialMs: 5 * 60_000, maxMs: HOUR };
  const delays = [1, 2, 3, 4, 5].map((n) => decideTrigger(failing({ lastFailureTime: now.toISOString(), issuanceAttempts: n }), now, cfg).requeueAfterMs);
  assert.deepEqual(delays, [5, 10, 20, 40, 60].map((m) => m * 60_000));
});

test('1,000 Certificates failing in one minute retry spread over ≥5% of the delay, none before the formula', () => {
  const attempts = 3; // 4h delay
  const delay = 4 * HOUR;
  const retries: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const failedAt = new Date(now.getTime() - 60_000 + Math.floor((i / 1000) * 60_000));
    const input = failing({ lastFailureTime: failedAt.toISOString(), issuanceAttempts: attempts }, randomUUID());
    input.failuresInSameMinute = 1000;
    const d = decideTrigger(input, now, defaultBackoff);
    const retryAt = now.getTime() + d.requeueAfterMs!;
    assert.ok(retryAt >= failedAt.getTime() + delay, 'never earlier than the formula');
    assert.ok(retryAt < failedAt.getTime() + delay * 1.1, 'within 10% of the delay');
    retries.push(retryAt);
  }
  const span = Math.max(...retries) - Math.min(...retries);
  assert.ok(span >= 0.05 * delay, `spread over ${span / 60_000} minutes, want ≥ ${0.05 * delay / 60_000}`);
  // and not all in the same second: no single minute holds more than a quarter of them
  const perMinute = new Map<number, number>();
  for (const r of retries) perMinute.set(Math.floor(r / 60_000), (perMinute.get(Math.floor(r / 60_000)) ?? 0) + 1);
  assert.ok(Math.max(...perMinute.values()) <= 250);
});

test('a lone failure is not spread: the formula exactly', () => {
  const input = failing({ lastFailureTime: now.toISOString(), issuanceAttempts: 2 });
  input.failuresInSameMinute = SPREAD_THRESHOLD - 1;
  assert.equal(decideTrigger(input, now, defaultBackoff).requeueAfterMs, 2 * HOUR);
});

test('a spec changed after a failure that left no request retries at once; an unchanged one backs off', () => {
  const failedAt = { type: 'Issuing', status: 'False' as const, reason: 'RequestFailed', message: 'Failed to generate CSR: x', observedGeneration: 1 };
  const same = failing({ lastFailureTime: now.toISOString(), issuanceAttempts: 1, conditions: [failedAt] });
  assert.equal(decideTrigger(same, now, defaultBackoff).requeueAfterMs, HOUR);
  const edited = failing({ lastFailureTime: now.toISOString(), issuanceAttempts: 1, conditions: [failedAt] });
  edited.certificate.metadata.generation = 2;
  assert.equal(decideTrigger(edited, now, defaultBackoff).conditions?.find((c) => c.type === 'Issuing')?.status, 'True');
});
