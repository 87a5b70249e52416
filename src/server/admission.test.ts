import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { Certificate, CertificateRequest, SecretType } from '../api/resources.ts';
import { makeCsr } from '../../test/rig/csr.ts';
import { StoreError, type Store } from '../store/store.ts';
import type { KubeObject } from '../api/meta.ts';
import { withAdmission } from './admission.ts';

const cert = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
  spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], issuerRef: { name: 'ca' }, ...spec },
});

async function withStores(fn: (admitted: Store, raw: Store) => Promise<void>) {
  const raw = openSqliteStore({ path: ':memory:' });
  try {
    await fn(withAdmission(raw), raw);
  } finally {
    await raw.close();
  }
}

function invalid(fields: string[]) {
  return (e: unknown) => {
    assert.ok(e instanceof StoreError, String(e));
    assert.equal(e.code, 422);
    assert.deepEqual(e.causes.map((c) => c.field).sort(), [...fields].sort());
    return true;
  };
}

test('create: every problem is reported in one 422 in the Kubernetes format, nothing stored', async () => {
  await withStores(async (store, raw) => {
    await assert.rejects(store.create(Certificate, cert('bad', { duration: '30m', issuerRef: {} })), (e: unknown) => {
      invalid(['spec.duration', 'spec.issuerRef.name'])(e);
      const err = e as StoreError;
      assert.match(err.message, /^Certificate\.cert-manager\.io "bad" is invalid: \[.*\]$/);
      assert.match(err.message, /spec\.duration: Invalid value: "30m": /);
      assert.match(err.message, /spec\.issuerRef\.name: Required value/);
      assert.match(err.causes.find((c) => c.field === 'spec.duration')!.message, /^Invalid value: "30m"/);
      return true;
    });
    assert.equal(await raw.get(Certificate, 'default', 'bad'), undefined);
  });
});

test('dry run validates and returns the object without storing it, for create, update and patch', async () => {
  await withStores(async (store, raw) => {
    const dry = await store.create(Certificate, cert('a'), { dryRun: true });
    assert.equal(dry.metadata.name, 'a');
    assert.equal(await raw.get(Certificate, 'default', 'a'), undefined);
    const stored = await store.create(Certificate, cert('a'));
    await assert.rejects(store.create(Certificate, cert('a'), { dryRun: true }), (e: unknown) => e instanceof StoreError && e.reason === 'AlreadyExists');

    const changed = await store.update(Certificate, { ...stored, spec: { ...(stored.spec as object), secretName: 'other' } }, { dryRun: true });
    assert.equal((changed.spec as { secretName: string }).secretName, 'other');
    await store.patch(Certificate, 'default', 'a', 'merge', { spec: { secretName: 'patched' } }, { dryRun: true });
    const after = await raw.get(Certificate, 'default', 'a');
    assert.equal((after!.spec as { secretName: string }).secretName, 'a-tls');
    assert.equal(after!.metadata.resourceVersion, stored.metadata.resourceVersion);

    await assert.rejects(store.update(Certificate, { ...stored, spec: { ...(stored.spec as object), renewBefore: '1m' } }, { dryRun: true }), invalid(['spec.renewBefore']));
  });
});

test('patch: the patched object is validated before it is written; a valid patch lands', async () => {
  await withStores(async (store, raw) => {
    await store.create(Certificate, cert('p'));
    await assert.rejects(store.patch(Certificate, 'default', 'p', 'merge', { spec: { dnsNames: null } }), invalid(['spec']));
    await assert.rejects(store.patch(Certificate, 'default', 'p', 'json', [{ op: 'add', path: '/spec/duration', value: '1m' }]), invalid(['spec.duration']));
    const ok = await store.patch(Certificate, 'default', 'p', 'merge', { spec: { duration: '48h' } });
    assert.equal((ok.spec as { duration: string }).duration, '48h');
    assert.equal(((await raw.get(Certificate, 'default', 'p'))!.spec as { duration: string }).duration, '48h');
    // server-side apply creates what is missing, through the same checks
    await assert.rejects(store.patch(Certificate, 'default', 'q', 'apply', cert('q', { duration: '1m' }), { fieldManager: 't' }), invalid(['spec.duration']));
    const created = await store.patch(Certificate, 'default', 'q', 'apply', cert('q'), { fieldManager: 't' });
    assert.ok(created.metadata.uid);
    await assert.rejects(store.patch(Certificate, 'default', 'missing', 'merge', { spec: {} }), (e: unknown) => e instanceof StoreError && e.code === 404);
  });
});

test('status writes are validated too, and keep the spec', async () => {
  await withStores(async (store) => {
    const c = await store.create(Certificate, cert('s'));
    await assert.rejects(store.updateStatus(Certificate, { ...c, status: { conditions: [{ type: 'Ready', status: 'Maybe' }] } }), (e: unknown) => e instanceof StoreError && e.code === 422);
    const ok = await store.updateStatus<KubeObject>(Certificate, { ...c, spec: { nonsense: true }, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
    assert.equal((ok.spec as { secretName: string }).secretName, 's-tls');
    assert.equal((ok.status as { conditions: unknown[] }).conditions.length, 1);
  });
});

test('kinds certsmith does not own pass through unvalidated; dry run still stores nothing', async () => {
  await withStores(async (store, raw) => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { anything: '' } };
    await store.create(SecretType, secret, { dryRun: true });
    assert.equal(await raw.get(SecretType, 'default', 's'), undefined);
    await store.create(SecretType, secret);
    assert.ok(await raw.get(SecretType, 'default', 's'));
  });
});

test('an admitted update computed from a write of the same turn shares its commit instead of committing it early', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-admission-'));
  const raw = openSqliteStore({ path: join(dir, 'state.db') });
  const reader = new Database(join(dir, 'state.db'), { readonly: true });
  const committedRevision = () => (reader.prepare('SELECT max(id) AS rev FROM log').get() as { rev: number }).rev;
  try {
    const store = withAdmission(raw);
    const [a, b] = await Promise.all([store.create(Certificate, cert('a')), store.create(Certificate, cert('b'))]);
    const before = raw.currentRevision();
    const first = store.updateStatus(Certificate, { ...a, status: { conditions: [{ type: 'Issuing', status: 'True', reason: 'R', message: 'm' }] } });
    while (raw.currentRevision() === before) await Promise.resolve();
    // the first write is applied, not acknowledged; reading b's old object must not commit it
    const second = store.updateStatus(Certificate, { ...b, status: { conditions: [{ type: 'Issuing', status: 'True', reason: 'R', message: 'm' }] } });
    while (raw.currentRevision() === before + 1) await Promise.resolve();
    assert.equal(committedRevision(), before);
    const [x, y] = await Promise.all([first, second]);
    assert.equal(committedRevision(), before + 2);
    assert.deepEqual([x.metadata.resourceVersion, y.metadata.resourceVersion], [String(before + 1), String(before + 2)]);
    // the old object read is the newest, unacknowledged write included: the update it is computed from is kept
    const third = store.update(Certificate, { ...x, metadata: { ...x.metadata, labels: { l: 'v' } } });
    while (raw.currentRevision() === before + 2) await Promise.resolve();
    const fourth = store.patch(Certificate, 'default', 'a', 'merge', { status: { conditions: [] } }, { subresource: 'status' });
    while (raw.currentRevision() === before + 3) await Promise.resolve();
    assert.equal(committedRevision(), before + 2);
    const [, last] = await Promise.all([third, fourth]);
    assert.deepEqual([last.metadata.labels, last.status, last.metadata.resourceVersion], [{ l: 'v' }, { conditions: [] }, String(before + 4)]);
  } finally {
    reader.close();
    await raw.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('admission copies only what it changes: frozen objects from a cache can be written, and what the caller or the store holds is never changed', async () => {
  const deepFreeze = <T>(o: T): T => {
    if (o && typeof o === 'object') for (const v of Object.values(o)) deepFreeze(v);
    return Object.freeze(o);
  };
  await withStores(async (admitted) => {
    const created = await admitted.create(Certificate, deepFreeze(cert('frozen')), { fieldManager: 'm' });
    const stored = deepFreeze((await admitted.get(Certificate, 'default', 'frozen'))!);
    const before = structuredClone(stored);
    const withStatus = deepFreeze({ ...stored, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting', lastTransitionTime: '2026-01-01T00:00:00Z' }] } });
    const afterStatus: KubeObject = await admitted.updateStatus(Certificate, withStatus as KubeObject, { fieldManager: 'm' });
    assert.equal((afterStatus.status as any).conditions[0].reason, 'Pending');
    const changed = deepFreeze({ ...afterStatus, spec: { ...(afterStatus.spec as object), dnsNames: ['other.example.test'] } });
    const updated: KubeObject = await admitted.update(Certificate, changed as KubeObject, { fieldManager: 'm' });
    assert.deepEqual((updated.spec as any).dnsNames, ['other.example.test']);
    assert.deepEqual(updated.status, afterStatus.status, 'an update keeps the stored status');
    // without a field manager nothing copies the object before admission does
    const again: KubeObject = await admitted.update(Certificate, deepFreeze({ ...updated, spec: { ...(updated.spec as object), dnsNames: ['third.example.test'] } }));
    assert.deepEqual((again.spec as any).dnsNames, ['third.example.test']);
    await admitted.updateStatus(Certificate, deepFreeze({ ...again, status: { conditions: [] } }));
    assert.deepEqual(stored, before);
    assert.notEqual(created.metadata.resourceVersion, updated.metadata.resourceVersion);
  });
});

test('a new CertificateRequest carries who made it (cert-manager\'s webhook stamps spec.username/groups): the API\'s user, else the controllers\' service account; the spec cannot change after', async () => {
  const { csrDer } = await makeCsr(['requester.example.test']);
  const request = (name: string, claimed: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name, namespace: 'default' },
    spec: { request: Buffer.from(`-----BEGIN CERTIFICATE REQUEST-----\n${csrDer.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`).toString('base64'), issuerRef: { name: 'ca' }, ...claimed },
  });
  await withStores(async (admitted) => {
    const mine = await admitted.create(CertificateRequest, request('from-controller', { username: 'someone', uid: 'x', extra: { a: ['b'] } }));
    assert.deepEqual(pick(mine.spec), { username: 'system:serviceaccount:certsmith:certsmith', groups: ['system:serviceaccounts', 'system:serviceaccounts:certsmith', 'system:authenticated'] });
    const user = { username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['x'] } };
    const theirs = await admitted.create(CertificateRequest, request('from-alice', { username: 'mallory', groups: ['system:masters'] }), { user });
    assert.deepEqual(pick(theirs.spec), { username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['x'] } });
    await assert.rejects(admitted.update(CertificateRequest, { ...theirs, spec: { ...(theirs.spec as object), username: 'mallory' } }, { user }), invalid(['spec']));
    // a Certificate is not stamped (only CertificateRequests carry a requester)
    const c = await admitted.create(Certificate, cert('not-stamped'), { user });
    assert.equal((c.spec as Record<string, unknown>).username, undefined);
  });
});

function pick(spec: unknown) {
  const { username, uid, groups, extra } = spec as Record<string, unknown>;
  return JSON.parse(JSON.stringify({ username, uid, groups, extra }));
}
