// The state file stays the size of what it holds (issue 17): free pages go back to the file
// system, an idle store truncates its WAL, and a file made before that is converted on open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SecretType } from '../../api/resources.ts';
import type { Secret } from '../../api/meta.ts';
import { FakeClock } from '../../runtime/clock.ts';
import { openSqliteStore } from './index.ts';

const payload = Buffer.alloc(3000, 7).toString('base64');
const secret = (name: string): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type: 'Opaque', data: { blob: payload } });
const size = (path: string) => statSync(path).size;
/** writes in groups, as a busy server's clients do (one commit per group) */
async function inGroups(n: number, fn: (i: number) => Promise<unknown>) {
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => fn(i + j)));
}
/** no automatic compaction: the test compacts when it means to */
const manualCompaction = 1e9;

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-growth-'));
  return { path: join(dir, 'state.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('sqlite: free pages left by deleted objects and compacted history go back to the file system', async () => {
  const { path, cleanup } = tempDir();
  const store = openSqliteStore({ path, compactKeep: manualCompaction });
  try {
    await inGroups(1500, (i) => store.create(SecretType, secret(`s${i}`)));
    store.checkpoint();
    const full = size(path);
    await inGroups(1400, (i) => store.delete(SecretType, 'default', `s${i}`));
    const r = store.compact(0);
    assert.ok(r.removedRows >= 2800, `removed ${r.removedRows} rows`);
    assert.ok(r.freedPages > 0, `free pages were returned (${JSON.stringify({ ...r, ...store.pageStats() })})`);
    const stats = store.pageStats();
    assert.ok(stats.freePages <= stats.pages * 0.2, `${stats.freePages} of ${stats.pages} pages free (${JSON.stringify(r)})`);
    store.checkpoint();
    assert.ok(size(path) < full / 3, `state.db ${size(path)} bytes after deleting 14/15 of ${full}`);
    assert.equal((await store.list(SecretType, { namespace: 'default' })).items.length, 100);
  } finally {
    await store.close();
    cleanup();
  }
});

test('sqlite: a little free space is kept for the next writes instead of shrinking the file each time', async () => {
  const { path, cleanup } = tempDir();
  const store = openSqliteStore({ path, compactKeep: manualCompaction });
  try {
    await inGroups(1000, (i) => store.create(SecretType, secret(`s${i}`)));
    await inGroups(20, (i) => store.delete(SecretType, 'default', `s${i}`));
    assert.equal(store.compact(0).freedPages, 0);
    assert.ok(store.pageStats().freePages > 0);
  } finally {
    await store.close();
    cleanup();
  }
});

test('sqlite: an idle store checkpoints and truncates its WAL once per compaction interval', async () => {
  const { path, cleanup } = tempDir();
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  const store = openSqliteStore({ path, clock, compactIntervalMs: 60_000 });
  try {
    for (let i = 0; i < 50; i++) await store.create(SecretType, secret(`s${i}`));
    assert.ok(size(`${path}-wal`) > 0);
    clock.advance(60_000); // writes happened during this interval: no checkpoint yet
    assert.ok(size(`${path}-wal`) > 0);
    clock.advance(60_000); // a quiet interval
    assert.equal(size(`${path}-wal`), 0);
    assert.equal((await store.list(SecretType, { namespace: 'default' })).items.length, 50);
  } finally {
    await store.close();
    cleanup();
  }
});

test('sqlite: a state file made without incremental vacuum is converted when opened, its objects kept', async () => {
  const { path, cleanup } = tempDir();
  try {
    const first = openSqliteStore({ path });
    for (let i = 0; i < 10; i++) await first.create(SecretType, secret(`s${i}`));
    await first.close();
    const raw = new Database(path);
    raw.pragma('auto_vacuum = NONE');
    raw.exec('VACUUM');
    assert.equal(raw.pragma('auto_vacuum', { simple: true }), 0);
    raw.close();

    const reopened = openSqliteStore({ path });
    try {
      const db = (reopened as unknown as { db: Database.Database }).db;
      assert.equal(db.pragma('auto_vacuum', { simple: true }), 2);
      assert.equal((await reopened.list(SecretType, { namespace: 'default' })).items.length, 10);
    } finally {
      await reopened.close();
    }
  } finally {
    cleanup();
  }
});
