// The program runner: argv and env as given (no shell), bounded output, the timeout and a stop
// ending the whole process group (SIGTERM, then SIGKILL), and what a program leaves behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endedBadly, runProgram } from './run-program.ts';
import { processGone, pollUntil } from '../../test/rig/processes.ts';

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-run-program-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function script(dir: string, name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return p;
}

const pidIn = (file: string) => Number(readFileSync(file, 'utf8').trim());

test('arguments and environment reach the program verbatim: shell syntax in them is inert', withDir(async (dir) => {
  const echo = script(dir, 'echo.sh', 'printf "%s|%s|%s" "$1" "$2" "$X"; echo oops >&2; exit 4');
  const r = await runProgram(echo, ['$(touch EVIL); `id`', 'a b'], { env: { X: '; rm -rf /' }, cwd: dir, timeoutMs: 10_000, leftovers: 'kill' });
  assert.equal(r.stdout, '$(touch EVIL); `id`|a b|; rm -rf /');
  assert.equal(r.stderr, 'oops\n');
  assert.equal(r.exitCode, 4);
  assert.equal(endedBadly(r), '(exit 4): oops');
  assert.equal(r.timedOut, false);
  assert.throws(() => readFileSync(join(dir, 'EVIL')));
}));

test('output is bounded: the last bytes are kept', withDir(async (dir) => {
  const chatty = script(dir, 'chatty.sh', 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done');
  const r = await runProgram(chatty, [], { timeoutMs: 10_000, outputLimit: 100, leftovers: 'kill' });
  assert.equal(r.exitCode, 0);
  assert.ok(r.stdout.length <= 100, `${r.stdout.length} bytes kept`);
  assert.match(r.stdout, /line 1999\n$/);
}));

test('a program that cannot start is reported, not thrown', async () => {
  const missing = await runProgram('/nonexistent/hook', [], { timeoutMs: 1000, leftovers: 'kill' });
  assert.match(missing.startError ?? '', /\/nonexistent\/hook: no such file/);
  const nul = await runProgram('/bin/true', [], { env: { BAD: 'a\0b' }, timeoutMs: 1000, leftovers: 'kill' });
  assert.match(nul.startError ?? '', /\$BAD contains a NUL character/);
});

test('at the timeout the whole group is stopped, also a child that ignores SIGTERM', { timeout: 30_000 }, withDir(async (dir) => {
  const pidFile = join(dir, 'child.pid');
  const hang = script(dir, 'hang.sh', `sh -c 'trap "" TERM; sleep 300' &\necho $! > "${pidFile}"\nwait`);
  const started = Date.now();
  const r = await runProgram(hang, [], { timeoutMs: 300, killGraceMs: 300, leftovers: 'leave' });
  assert.equal(r.timedOut, true);
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  const child = pidIn(pidFile);
  await pollUntil('the program\'s child to be gone', () => processGone(child), 5_000);
}));

test('a stop (abort) ends the group; a program that ends by itself leaves its children only with leftovers: leave', { timeout: 30_000 }, withDir(async (dir) => {
  const pidFile = join(dir, 'child.pid');
  const stop = new AbortController();
  const running = runProgram(script(dir, 'wait.sh', `sleep 300 &\necho $! > "${pidFile}"\nwait`), [], { timeoutMs: 60_000, signal: stop.signal, killGraceMs: 300, leftovers: 'leave' });
  await pollUntil('the child', () => { try { return pidIn(pidFile) > 0; } catch { return false; } }, 10_000);
  stop.abort();
  const r = await running;
  assert.equal(r.interrupted, true);
  await pollUntil('the stopped program\'s child to be gone', () => processGone(pidIn(pidFile)), 5_000);

  const daemon = script(dir, 'daemon.sh', `sleep 300 >/dev/null 2>&1 &\necho $! > "${pidFile}"`);
  assert.equal((await runProgram(daemon, [], { timeoutMs: 10_000, leftovers: 'kill' })).exitCode, 0);
  await pollUntil('the child of a program run with leftovers: kill to be gone', () => processGone(pidIn(pidFile)), 5_000);
  assert.equal((await runProgram(daemon, [], { timeoutMs: 10_000, leftovers: 'leave' })).exitCode, 0);
  const kept = pidIn(pidFile);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(processGone(kept), false, 'leftovers: leave keeps what the program started');
  process.kill(kept, 'SIGKILL');
}));
