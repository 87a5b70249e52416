// Watch backpressure in the SQLite store (issue 12, finding 3): a watcher that asks to pause
// gets nothing more until it resumes, holds its initial state a page at a time, and is closed
// with WatchTooSlowError once its backlog of live changes outgrows the bound. A watcher that
// did not opt in is never paused, whatever its handler returns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/meta.ts';
import { SecretType } from '../../api/resources.ts';
import { WatchTooSlowError, type WatchEvent } from '../store.ts';
import { openSqliteStore } from './index.ts';
import { maxBacklogEvents } from './watch-hub.ts';

const tick = () => new Promise((r) => setImmediate(r));

function secret(name: string, bytes = 0): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, data: { k: Buffer.alloc(bytes, 1).toString('base64') } } as KubeObject;
}

test('a paused watcher receives nothing until resumed, and its initial state is read a page at a time', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    for (let i = 0; i < 40; i++) await store.create(SecretType, secret(`s${String(i).padStart(2, '0')}`, 30_000));
    const seen: WatchEvent[] = [];
    const w = store.watch(SecretType, { resourceVersion: '0', backpressure: true }, (e) => {
      seen.push(e);
      return false;
    }, assert.fail);
    await tick();
    await tick();
    assert.equal(seen.length, 1, 'one event, then paused');
    // the hub holds at most one page of the initial state (64 KiB of JSON: two of these objects), not all 40
    const hub = (store as unknown as { hub: { byType: Map<string, Set<{ queue: unknown[] }>> } }).hub;
    const [watcher] = [...hub.byType.get('/secrets')!];
    assert.ok(watcher.queue.length <= 2, `${watcher.queue.length} events materialized for a paused watcher`);
    for (let i = 2; i <= 40; i++) {
      w.resume!();
      await tick();
      await tick();
      assert.equal(seen.length, i);
    }
    assert.deepEqual(seen.map((e) => e.object.metadata.name), Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`));
    w.stop();
  } finally {
    await store.close();
  }
});

test('a paused watcher whose live backlog outgrows the bound is closed with WatchTooSlowError; others are unaffected', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await store.create(SecretType, secret('x'));
    let slowEvents = 0;
    const closed = new Promise<Error>((resolve) => {
      store.watch(SecretType, { resourceVersion: String(store.currentRevision()), backpressure: true }, () => {
        slowEvents++;
        return false;
      }, resolve);
    });
    // without backpressure, returning false means nothing
    let fastEvents = 0;
    store.watch(SecretType, { resourceVersion: String(store.currentRevision()) }, () => {
      fastEvents++;
      return false;
    }, assert.fail);
    let err: Error | undefined;
    void closed.then((e) => (err = e));
    let writes = 0;
    for (; writes < maxBacklogEvents + 50 && !err; writes++) {
      await store.update(SecretType, { ...secret('x'), metadata: { name: 'x', namespace: 'default', labels: { n: String(writes) } } } as KubeObject);
      await tick();
    }
    await tick();
    assert.ok(err instanceof WatchTooSlowError, `closed with ${err}`);
    assert.equal(slowEvents, 1);
    assert.ok(writes > maxBacklogEvents && writes <= maxBacklogEvents + 3, `closed after ${writes} writes`);
    assert.equal(fastEvents, writes);
  } finally {
    await store.close();
  }
});

test('with bookmarks, the bookmark still follows the last page of the initial state', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    for (let i = 0; i < 5; i++) await store.create(SecretType, secret(`b${i}`, 40_000));
    const seen: string[] = [];
    const w = store.watch(SecretType, { resourceVersion: '0', allowBookmarks: true }, (e) => seen.push(e.type), assert.fail);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen, ['ADDED', 'ADDED', 'ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    w.stop();
  } finally {
    await store.close();
  }
});
