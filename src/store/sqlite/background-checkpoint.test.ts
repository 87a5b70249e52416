// The WAL of a busy store is copied into the database file by a worker thread, so no commit on
// the event loop pays for a checkpoint (bench/issue-ca.ts: four of them blocked it 300 ms each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SecretType } from '../../api/resources.ts';
import type { Secret } from '../../api/meta.ts';
import { openSqliteStore } from './index.ts';
import { BackgroundCheckpointer, type CheckpointResult } from './background-checkpoint.ts';

const secret = (name: string): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'Opaque', data: { v: 'eA==' } });
/** SQLite's automatic checkpoint, which the store's own connection no longer runs, starts the WAL over at 16384 pages */
const sqliteThresholdBytes = 16384 * 4096;

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-checkpoint-'));
  return { path: join(dir, 'state.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('sqlite: a busy store\'s WAL is copied by a worker thread and starts over, never reaching SQLite\'s own checkpoint threshold', { timeout: 120_000 }, async () => {
  const { path, cleanup } = tempDir();
  const store = openSqliteStore({ path, compactKeep: 1e9 });
  try {
    const db = (store as unknown as { db: Database.Database }).db;
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0, 'the event loop\'s connection never checkpoints by itself');
    let largest = 0;
    // ~5 pages per write: without a checkpoint the WAL would pass SQLite's threshold near 3,300 writes
    for (let i = 0; i < 12_000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => store.create(SecretType, secret(`s${i + j}`))));
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    assert.ok(largest < sqliteThresholdBytes * 0.9, `the WAL grew to ${largest} bytes`);
    assert.equal((await store.list(SecretType, { namespace: 'default', limit: 1 })).continue !== undefined, true);
  } finally {
    await store.close();
    cleanup();
  }
});

test('sqlite: the background checkpointer copies a WAL the store keeps writing to, and closes', async () => {
  const { path, cleanup } = tempDir();
  const store = openSqliteStore({ path });
  try {
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.create(SecretType, secret(`s${i}`))));
    const results: CheckpointResult[] = [];
    let done!: () => void;
    const settled = new Promise<void>((r) => { done = r; });
    const failures: Error[] = [];
    const checkpointer = new BackgroundCheckpointer(path, (r) => { results.push(r); done(); }, (err) => failures.push(err));
    checkpointer.request();
    assert.equal(checkpointer.busy, true);
    // writes go on while it copies
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.create(SecretType, secret(`t${i}`))));
    await settled;
    assert.deepEqual(failures, []);
    assert.ok(results[0].frames > 0 && results[0].copied > 0, JSON.stringify(results));
    await checkpointer.close();
    const reader = new Database(path, { readonly: true });
    try {
      assert.equal((reader.prepare("SELECT count(*) AS n FROM current WHERE plural = 'secrets'").get() as { n: number }).n, 250);
    } finally {
      reader.close();
    }
  } finally {
    await store.close();
    cleanup();
  }
});

test('sqlite: a checkpointer that cannot open the database reports it once, so the store checkpoints by itself again', async () => {
  const { path, cleanup } = tempDir();
  try {
    const failures: Error[] = [];
    let failed!: () => void;
    const reported = new Promise<void>((r) => { failed = r; });
    const checkpointer = new BackgroundCheckpointer(join(path, 'missing.db'), () => assert.fail('no checkpoint can succeed'), (err) => { failures.push(err); failed(); });
    checkpointer.request();
    await reported;
    checkpointer.request();
    assert.equal(checkpointer.busy, false);
    assert.equal(failures.length, 1);
    await checkpointer.close();
  } finally {
    cleanup();
  }
});
