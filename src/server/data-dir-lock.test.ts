// The data-dir lock: a second holder is refused naming the first one's pid, and the lock goes
// with its process, however that process ends (kill -9 included).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirError, lockDataDir } from './data-dir.ts';

test('a held lock refuses a second holder until released', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-lock-'));
  try {
    const lock = await lockDataDir(dir);
    await assert.rejects(lockDataDir(dir), (e: Error) => e instanceof DataDirError && e.message.includes(`data dir ${dir} is in use by another certsmith server (pid ${process.pid})`));
    lock.release();
    (await lockDataDir(dir)).release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a holder killed with SIGKILL leaves no lock behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-lock-'));
  const holder = spawn(process.execPath, ['--import', 'tsx', '-e',
    `import('${join(import.meta.dirname, 'data-dir.ts')}').then((m) => m.lockDataDir(${JSON.stringify(dir)})).then(() => { console.log('held'); setInterval(() => {}, 1000); });`],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (d) => String(d).includes('held') && resolve());
      holder.on('exit', (code) => reject(new Error(`holder exited with ${code}`)));
    });
    await assert.rejects(lockDataDir(dir), new RegExp(`in use by another certsmith server \\(pid ${holder.pid}\\)`));
    const gone = new Promise((r) => holder.on('exit', r));
    holder.kill('SIGKILL');
    await gone;
    (await lockDataDir(dir)).release();
  } finally {
    holder.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
