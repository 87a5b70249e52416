// The exec hook's process handling: what a hung hook leaves behind, whether certsmith stops it or dies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runHook } from './exec-hook.ts';
import { pidIn, processGone, pollUntil } from '../../../../../test/rig/processes.ts';


function hangingHook(dir: string, pidFile: string): string {
  const hook = join(dir, 'hang.sh');
  // the child ignores SIGTERM: only the SIGKILL after the grace ends it
  writeFileSync(hook, `#!/bin/sh\nsh -c 'trap "" TERM; sleep 300' &\necho $! > "${pidFile}"\nwait\n`, { mode: 0o755 });
  return hook;
}

test('a hook that hangs is killed at the timeout with its whole process group', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-exec-hook-'));
  try {
    const pidFile = join(dir, 'child.pid');
    const started = Date.now();
    await assert.rejects(runHook(hangingHook(dir, pidFile), ['present'], {}, 500), /did not finish within 1s; its process group was killed/);
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
    const child = pidIn(pidFile)!;
    await pollUntil('the hook\'s child to be gone', () => processGone(child), 5_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a hung hook does not outlive a SIGKILLed certsmith: its watchdog kills the group', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-exec-hook-'));
  try {
    const pidFile = join(dir, 'child.pid');
    const hook = hangingHook(dir, pidFile);
    // a certsmith stand-in that runs one hook and is then SIGKILLed
    const script = `import(${JSON.stringify(join(import.meta.dirname, 'exec-hook.ts'))}).then((m) => m.runHook(${JSON.stringify(hook)}, [], {}, 600000).catch(() => {}));`;
    const certsmith = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: 'ignore' });
    try {
      await pollUntil('the hook\'s child', () => pidIn(pidFile) !== undefined, 20_000);
      const child = pidIn(pidFile)!;
      assert.equal(processGone(child), false);
      certsmith.kill('SIGKILL');
      await pollUntil('the orphaned hook\'s child to be gone', () => processGone(child), 5_000);
    } finally {
      certsmith.kill('SIGKILL');
      const child = pidIn(pidFile);
      if (child && !processGone(child)) process.kill(child, 'SIGKILL');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
