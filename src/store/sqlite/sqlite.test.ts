import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../api/meta.ts';
import { Certificate, EventType, NamespaceType, SecretType } from '../../api/resources.ts';
import { FakeClock } from '../../runtime/clock.ts';
import { runStoreConformance } from '../conformance.ts';
import { isGone, type StoreError } from '../store.ts';
import Database from 'better-sqlite3';
import { openSqliteStore } from './index.ts';
import { waitFor } from '../../../test/e2e/harness.ts';

runStoreConformance('sqlite :memory:', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  return { store, cleanup: () => store.close(), compact: async () => void store.compact(0) };
});

runStoreConformance('sqlite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-store-'));
  const store = openSqliteStore({ path: join(dir, 'store.db') });
  return {
    store,
    compact: async () => void store.compact(0),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

const cert = (ns: string, name: string): KubeObject => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: ns },
  spec: { secretName: `${name}-tls`, issuerRef: { name: 'ca' } },
});

test('sqlite: state and the revision counter survive a reopen', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-store-'));
  try {
    const path = join(dir, 'store.db');
    const a = openSqliteStore({ path });
    const c = await a.create(Certificate, cert('team', 'x'));
    await a.close();
    const b = openSqliteStore({ path });
    assert.deepEqual(await b.get(Certificate, 'team', 'x'), c);
    assert.equal(b.currentRevision(), Number(c.metadata.resourceVersion));
    const d = await b.create(Certificate, cert('team', 'y'));
    assert.ok(Number(d.metadata.resourceVersion) > Number(c.metadata.resourceVersion));
    await b.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: what a store written before the collector ran on every write left behind (dependents of owners gone) is collected at open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-store-'));
  try {
    const path = join(dir, 'store.db');
    const a = openSqliteStore({ path });
    const owner = await a.create(Certificate, cert('team', 'owner'));
    const other = await a.create(Certificate, cert('team', 'other'));
    const ref = (o: KubeObject) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: o.metadata.name!, uid: o.metadata.uid! });
    await a.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'orphan', namespace: 'team', ownerReferences: [ref(owner)] } });
    await a.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'half', namespace: 'team', ownerReferences: [ref(owner), ref(other)] } });
    await a.close();
    // the owner went without its dependents, as an older certsmith let happen (a leaked Certificate)
    const db = new Database(path);
    db.prepare("DELETE FROM current WHERE plural = 'certificates' AND name = 'owner'").run();
    db.close();
    const b = openSqliteStore({ path });
    assert.equal(await b.get(SecretType, 'team', 'orphan'), undefined);
    assert.deepEqual((await b.get(SecretType, 'team', 'half'))?.metadata.ownerReferences?.map((r) => r.name), ['other']);
    await b.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

type NamespaceObj = KubeObject & { status?: { phase?: string } };


test('sqlite: namespaces are created on first use; deleting one makes it Terminating, then removes its contents and it', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    assert.deepEqual((await store.list(NamespaceType)).items.map((n) => n.metadata.name), ['default']);
    await store.create(Certificate, cert('team-a', 'x'));
    await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'team-a' } });
    await store.create(Certificate, cert('team-b', 'y'));
    assert.deepEqual((await store.list(NamespaceType)).items.map((n) => n.metadata.name), ['default', 'team-a', 'team-b']);
    assert.deepEqual((await store.get(NamespaceType, undefined, 'team-a'))?.status, { phase: 'Active' });
    await store.delete(NamespaceType, undefined, 'team-a');
    assert.equal((await store.get<NamespaceObj>(NamespaceType, undefined, 'team-a'))?.status?.phase, 'Terminating');
    await waitFor('team-a removed', async () => (await store.get(NamespaceType, undefined, 'team-a')) === undefined, 5000, 50);
    assert.equal((await store.list(Certificate, { namespace: 'team-a' })).items.length, 0);
    assert.equal(await store.get(SecretType, 'team-a', 's'), undefined);
    assert.ok(await store.get(Certificate, 'team-b', 'y'));
    await assert.rejects(store.create(Certificate, cert('Bad_NS', 'x')), (e: { code?: number }) => e.code === 422);
    await assert.rejects(store.create(Certificate, cert('', 'x')), (e: { code?: number }) => e.code === 400);
  } finally {
    await store.close();
  }
});

test('sqlite: dryRun stores nothing', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    const rev = store.currentRevision();
    const c = await store.create(Certificate, cert('default', 'x'), { dryRun: true });
    assert.equal(c.metadata.name, 'x');
    assert.equal(await store.get(Certificate, 'default', 'x'), undefined);
    assert.equal(store.currentRevision(), rev);
  } finally {
    await store.close();
  }
});

test('sqlite: compaction keeps the log bounded and expires old Events', async () => {
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const store = openSqliteStore({ path: ':memory:', clock, compactKeep: 50, eventTTLSeconds: 3600 });
  try {
    const c = await store.create(Certificate, cert('default', 'x'));
    for (let i = 0; i < 500; i++) {
      const cur = (await store.get(Certificate, 'default', 'x'))!;
      await store.update(Certificate, { ...cur, metadata: { ...cur.metadata, annotations: { i: String(i) } } });
    }
    for (let i = 0; i < 20; i++) {
      await store.create(EventType, { apiVersion: 'v1', kind: 'Event', metadata: { name: `x.${i}`, namespace: 'default' }, reason: 'Issuing', involvedObject: { kind: 'Certificate', name: 'x', namespace: 'default' } });
    }
    await new Promise((r) => setImmediate(r)); // automatic compaction runs off the write path
    const before = store.compactedRevision();
    assert.ok(before > 0 && store.currentRevision() - before <= 50 + 100, `compacted to ${before} of ${store.currentRevision()}`);
    const watchErr = await new Promise<Error>((resolve) => store.watch(Certificate, { resourceVersion: c.metadata.resourceVersion }, () => {}, resolve));
    assert.ok(isGone(watchErr));

    clock.advance(2 * 3600_000); // the periodic compaction timer fires on this clock
    assert.equal((await store.list(EventType)).items.length, 0, 'events past their TTL are deleted');
    const r = store.compact(0);
    assert.equal(r.compactedRevision, store.currentRevision());
    // what remains in the log is the live state: the certificate and the default namespace
    const rows = (store as unknown as { db: { prepare(s: string): { get(): { n: number } } } }).db.prepare('SELECT COUNT(*) AS n FROM log').get().n;
    assert.equal(rows, 2);
    assert.equal((await store.get(Certificate, 'default', 'x'))?.metadata.annotations?.i, '499');
  } finally {
    await store.close();
  }
});

test('sqlite: a watch from a future revision fails as kube-apiserver does: 504 "Too large resource version"', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    const future = store.currentRevision() + 1;
    const err = await new Promise<StoreError>((resolve) => {
      store.watch(Certificate, { resourceVersion: String(future) }, () => assert.fail('no event expected'), (e) => resolve(e as StoreError));
    });
    assert.equal(err.code, 504);
    assert.equal(err.reason, 'Timeout');
    assert.equal(err.message, `Too large resource version: ${future}, current: ${future - 1}`);
    assert.equal(err.causes[0].reason, 'ResourceVersionTooLarge');
    // the current revision itself is fine
    const seen: string[] = [];
    store.watch(Certificate, { resourceVersion: String(store.currentRevision()) }, (e) => seen.push(`${e.type} ${e.object.metadata.name}`), assert.fail);
    await store.create(Certificate, cert('default', 'seen'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen, ['ADDED seen']);
  } finally {
    await store.close();
  }
});

test('the database and its WAL are readable by the owner only: they hold private keys', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-mode-'));
  try {
    const path = join(dir, 'state.db');
    const store = openSqliteStore({ path });
    await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k', namespace: 'default' }, data: { 'tls.key': 'eA==' } });
    for (const f of [path, `${path}-wal`, `${path}-shm`]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: writes of one turn share a commit, are acknowledged only after it, and a failing one fails alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-store-'));
  const path = join(dir, 'store.db');
  const store = openSqliteStore({ path });
  const other = new Database(path, { readonly: true });
  const committed = () => (other.prepare("SELECT count(*) AS n FROM current WHERE plural = 'certificates'").get() as { n: number }).n;
  try {
    const existing = await store.create(Certificate, cert('default', 'existing'));
    const events: string[] = [];
    const w = store.watch(Certificate, { resourceVersion: existing.metadata.resourceVersion }, (e) => events.push(`${e.type} ${e.object.metadata.name}`), () => {});
    const writes = Array.from({ length: 20 }, (_, i) => store.create(Certificate, cert('default', `c${i}`)));
    const stale = store.update(Certificate, { ...existing, metadata: { ...existing.metadata, resourceVersion: '1' } });
    const duplicate = store.create(Certificate, cert('default', 'c3'));
    // applied (a later write in the turn saw c3) but not yet committed: another connection sees none of it
    assert.equal(committed(), 1);
    await assert.rejects(stale, (e: Error & { code?: number }) => e.code === 409);
    await assert.rejects(duplicate, (e: Error & { code?: number }) => e.code === 409);
    const created = await Promise.all(writes);
    assert.equal(committed(), 21);
    assert.deepEqual(created.map((c) => Number(c.metadata.resourceVersion)), created.map((_, i) => Number(created[0].metadata.resourceVersion) + i));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, created.map((c) => `ADDED ${c.metadata.name}`));
    w.stop();
    // a read in the same turn as a write commits first, so it never shows an unacknowledged write
    const pending = store.create(Certificate, cert('default', 'read-after'));
    assert.ok(await store.get(Certificate, 'default', 'read-after'));
    assert.equal(committed(), 22);
    await pending;
  } finally {
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: a namespace left Terminating by a process that stopped before its sweep is swept at the next open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-ns-sweep-'));
  try {
    const first = openSqliteStore({ path: join(dir, 'state.db') });
    await first.create(Certificate, cert('left', 'c'));
    await first.delete(NamespaceType, undefined, 'left');
    await first.close();
    const second = openSqliteStore({ path: join(dir, 'state.db') });
    try {
      assert.equal((await second.get<NamespaceObj>(NamespaceType, undefined, 'left'))?.status?.phase, 'Terminating');
      await waitFor('left removed after the restart', async () => (await second.get(NamespaceType, undefined, 'left')) === undefined, 5000, 50);
      assert.equal(await second.get(Certificate, 'left', 'c'), undefined);
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: a deleted namespace is not made again by a write that comes after (an Event about an object that was in it)', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await store.create(Certificate, cert('gone', 'c'));
    await store.delete(Certificate, 'gone', 'c');
    await store.delete(NamespaceType, undefined, 'gone');
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { namespace: 'gone', name: 'c.1' }, involvedObject: { kind: 'Certificate', name: 'c', namespace: 'gone' }, reason: 'Issuing', message: 'x' };
    await assert.rejects(store.create(EventType, event), (e: StoreError) => e.code === 403, 'Terminating: refused');
    await waitFor('gone removed', async () => (await store.get(NamespaceType, undefined, 'gone')) === undefined, 5000, 50);
    // kube's NamespaceLifecycle refuses every client's create in a missing namespace
    await assert.rejects(store.create(EventType, event), (e: StoreError) => e.code === 404 && e.message === 'namespaces "gone" not found');
    assert.equal(await store.get(NamespaceType, undefined, 'gone'), undefined);
    // one never seen is still made by the first object written into it
    await store.create(Certificate, cert('never-seen', 'c'));
    assert.ok(await store.get(NamespaceType, undefined, 'never-seen'));
  } finally {
    await store.close();
  }
});

test('sqlite: a terminating namespace refuses new content, also after creates in it were accepted', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await store.create(Certificate, cert('ending', 'first'));
    await store.create(Certificate, cert('ending', 'second'));
    const ns = (await store.get<KubeObject>(NamespaceType, undefined, 'ending'))!;
    await store.update(NamespaceType, { ...ns, metadata: { ...ns.metadata, finalizers: ['example.test/hold'] } });
    await store.delete(NamespaceType, undefined, 'ending');
    await assert.rejects(store.create(Certificate, cert('ending', 'third')), (e: Error & { code?: number }) => e.code === 403 && /being terminated/.test(e.message));
    // a namespace created implicitly after a failed write in the same turn still appears
    const [bad, good] = await Promise.allSettled([store.create(Certificate, cert('ending', 'x')), store.create(Certificate, cert('fresh', 'y'))]);
    assert.equal(bad.status, 'rejected');
    assert.equal(good.status, 'fulfilled');
    assert.ok(await store.get(NamespaceType, undefined, 'fresh'));
  } finally {
    await store.close();
  }
});
