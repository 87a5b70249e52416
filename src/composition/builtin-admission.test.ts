// `certsmith server --no-builtin-admission`: compose({ builtinAdmission: false }) leaves the
// defaulting and validation of cert-manager's kinds to registered webhooks, and keeps the
// structural checks every kind gets (what kube-apiserver's decoder refuses, immutable updates).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Certificate } from '../api/resources.ts';
import { FakeClock } from '../runtime/clock.ts';
import { silentLogger } from '../runtime/logger.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { compose } from './index.ts';

const invalid = {
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'bad', namespace: 'default' },
  spec: { secretName: 'bad-tls', issuerRef: { name: 'ca' }, duration: 'soon' },
};

function stackWith(builtinAdmission?: boolean) {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  return compose({ store: openSqliteStore({ path: ':memory:', clock }), clock, logger: silentLogger, builtinAdmission });
}

test('builtinAdmission: false stores a Certificate the built-in validation refuses', async () => {
  const on = stackWith();
  const off = stackWith(false);
  try {
    await assert.rejects(on.store.create(Certificate, invalid), (e: Error & { code?: number }) => e.code === 422 && /spec\.duration/.test(e.message));
    const stored = await off.store.create(Certificate, invalid);
    assert.equal((stored.spec as { duration?: string }).duration, 'soon');
    assert.ok(await off.backend.get(Certificate, 'default', 'bad'));
  } finally {
    await on.stop();
    await off.stop();
  }
});

test('builtinAdmission: false keeps the structural checks: a non-string annotation is still refused', async () => {
  const off = stackWith(false);
  try {
    const bad = { ...invalid, metadata: { ...invalid.metadata, name: 'shape', annotations: { a: 1 as unknown as string } } };
    await assert.rejects(off.store.create(Certificate, bad), (e: Error & { code?: number }) => e.code !== undefined && e.code >= 400 && /annotations/.test(e.message));
    assert.equal(await off.backend.get(Certificate, 'default', 'shape'), undefined);
  } finally {
    await off.stop();
  }
});
