// The composition every entry point uses: admission is on unless asked off, and controller
// options get cert-manager's backoff rules whoever starts the controllers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Certificate } from '../api/resources.ts';
import { FakeClock } from '../runtime/clock.ts';
import { silentLogger } from '../runtime/logger.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { compose, normalizeControllerOptions } from './index.ts';

const invalid = {
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'bad', namespace: 'default' },
  spec: { secretName: 'bad-tls', issuerRef: { name: 'ca' }, duration: 'soon' },
};

test('compose: admission is on by default (an invalid Certificate is refused, a valid one stored)', async () => {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const stack = compose({ store: openSqliteStore({ path: ':memory:', clock }), clock, logger: silentLogger });
  try {
    await assert.rejects(stack.store.create(Certificate, invalid), (e: Error & { code?: number }) => e.code === 422 && /spec\.duration/.test(e.message));
    await stack.store.create(Certificate, { ...invalid, metadata: { name: 'ok', namespace: 'default' }, spec: { ...invalid.spec, duration: '24h', dnsNames: ['ok.example.test'] } });
    assert.equal(await stack.backend.get(Certificate, 'default', 'bad'), undefined);
    assert.ok(await stack.backend.get(Certificate, 'default', 'ok'));
  } finally {
    await stack.stop();
  }
});

test('compose: admission: false stores what the schema refuses (a cluster with only the CRDs)', async () => {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const stack = compose({ store: openSqliteStore({ path: ':memory:', clock }), clock, logger: silentLogger, admission: false });
  try {
    await stack.store.create(Certificate, invalid);
    assert.ok(await stack.backend.get(Certificate, 'default', 'bad'));
  } finally {
    await stack.stop();
  }
});

test('controller options: 0 or absent backoff takes the default; negative or max < initial is refused', () => {
  const H = 3_600_000;
  assert.deepEqual([normalizeControllerOptions({}).backoffInitialMs, normalizeControllerOptions({}).backoffMaxMs], [H, 32 * H]);
  assert.equal(normalizeControllerOptions({ backoffInitialMs: 0, backoffMaxMs: 0 }).backoffInitialMs, H);
  assert.equal(normalizeControllerOptions({ backoffInitialMs: 60_000 }).backoffInitialMs, 60_000);
  assert.throws(() => normalizeControllerOptions({ backoffInitialMs: -1 }), /negative/);
  assert.throws(() => normalizeControllerOptions({ backoffInitialMs: 2 * H, backoffMaxMs: H }), /shorter/);
});
