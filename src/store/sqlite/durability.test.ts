import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { LeaseType, SecretType } from '../../api/resources.ts';
import { openSqliteStore } from './index.ts';

const child = join(dirname(fileURLToPath(import.meta.url)), 'durability-child.ts');

/** Runs the writer until `killAfterMs` past its first write, SIGKILLs it, returns its complete output lines. */
function runAndKill(path: string, round: number, killAfterMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, path, String(round)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let armed = false;
    const guard = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!armed && out.includes('\nC ')) {
        armed = true;
        setTimeout(() => p.kill('SIGKILL'), killAfterMs);
      }
    });
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('exit', (_code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') return reject(new Error(`writer exited on its own: ${err}`));
      // a line without its newline was cut by the kill and was never a complete acknowledgement
      resolve(out.split('\n').slice(0, -1));
    });
  });
}

test('every acknowledged write survives SIGKILL at random points', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-durability-'));
  const path = join(dir, 'store.db');
  try {
    const acked: { rev: number; name: string; ns: string }[] = [];
    let lastCounter = 0;
    let lastRev = 0;
    for (let round = 0; round < 4; round++) {
      const lines = await runAndKill(path, round, 50 + Math.floor(Math.random() * 400));
      for (const l of lines) {
        const [kind, rev, v] = l.split(' ');
        if (kind === 'C') acked.push({ rev: Number(rev), name: v, ns: `ns-${Number(v.split('-')[1]) % 3}` });
        if (kind === 'U') lastCounter = Number(v);
        if (kind === 'C' || kind === 'U') lastRev = Math.max(lastRev, Number(rev));
      }
      assert.ok(lines.some((l) => l.startsWith('C ')), `round ${round} acknowledged writes`);

      const raw = new Database(path);
      assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
      raw.close();

      const store = openSqliteStore({ path });
      assert.ok(store.currentRevision() >= lastRev, `revision ${store.currentRevision()} covers acknowledged ${lastRev}`);
      const counter = (await store.get(LeaseType, 'default', 'counter'))!;
      assert.ok((counter.spec as { leaseTransitions: number }).leaseTransitions >= lastCounter, 'the last acknowledged update is there');
      const secrets = new Set((await store.list(SecretType)).items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`));
      const missing = acked.filter((a) => !secrets.has(`${a.ns}/${a.name}`));
      assert.deepEqual(missing, [], 'no acknowledged create is lost');
      await store.close();
    }
    assert.ok(acked.length > 20, `enough writes happened (${acked.length})`);
    t.diagnostic(`${acked.length} acknowledged creates, counter at ${lastCounter}, across 4 kills`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged state.db is refused naming the file, what SQLite found and what to do; the file is left as it was', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-damaged-'));
  try {
    const path = join(dir, 'state.db');
    const garbage = Buffer.alloc(8192, 0x58);
    writeFileSync(path, garbage);
    assert.throws(() => openSqliteStore({ path }), (e: Error) =>
      e.message.startsWith(`${path}: file is not a database (SQLITE_NOTADB)`) && /restore state\.db and its -wal file from a backup/.test(e.message), 'garbage');
    assert.deepEqual(readFileSync(path), garbage, 'nothing overwritten');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a store records its format; one written by a newer certsmith is refused naming both formats, and left as it was', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-format-'));
  try {
    const path = join(dir, 'state.db');
    const store = openSqliteStore({ path });
    await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: {} });
    await store.close();
    const db = new Database(path);
    const format = Number((db.prepare("SELECT v FROM meta WHERE k = 'format'").get() as { v: string } | undefined)?.v);
    assert.ok(format >= 1, 'the format is recorded');
    db.prepare("UPDATE meta SET v = ? WHERE k = 'format'").run(String(format + 1));
    db.close();
    const before = readFileSync(path);
    assert.throws(() => openSqliteStore({ path }), (e: Error) =>
      e.message === `${path}: written by a newer certsmith (store format ${format + 1}; this one reads format ${format} and older): run that version or a later one, or restore state.db from a backup taken before the upgrade`);
    assert.deepEqual(readFileSync(path), before, 'nothing written');
    // an older store (no format recorded) opens and is stamped
    const old = new Database(path);
    old.prepare("DELETE FROM meta WHERE k = 'format'").run();
    old.close();
    const reopened = openSqliteStore({ path });
    assert.equal((await reopened.get(SecretType, 'default', 's'))?.metadata.name, 's');
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
