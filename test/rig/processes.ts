import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const running = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let exitHookInstalled = false;

// The test runner may exit on a failed assertion without reaching stop(); nothing the rig started may outlive it.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {}
      }
    }
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
}

export async function makeTempDir(prefix: string): Promise<string> {
  installExitHook();
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), `certsmith-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  tempDirs.delete(dir);
  await fsp.rm(dir, { recursive: true, force: true });
}

export interface RigProcess {
  child: ChildProcess;
  logPath: string;
  /** Resolves once the process has exited (immediately if it already has). */
  stop(): Promise<void>;
}

/**
 * Starts a program with stdout+stderr appended to logPath. It runs under `setpriv --pdeathsig KILL`
 * so that it dies with us even when this process is SIGKILLed and no exit hook runs.
 */
export function startProcess(
  program: string,
  args: string[],
  opts: { logPath: string; env?: Record<string, string>; cwd?: string; setprivArgs?: string[] },
): RigProcess {
  installExitHook();
  const log = fs.openSync(opts.logPath, 'a');
  const child = spawn('setpriv', [...(opts.setprivArgs ?? []), '--pdeathsig', 'KILL', program, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  running.add(child);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  exited.then(() => running.delete(child));
  return {
    child,
    logPath: opts.logPath,
    async stop() {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        try {
          process.kill(child.pid, 'SIGTERM');
        } catch {}
        const timer = setTimeout(() => {
          try {
            if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
          } catch {}
        }, 3000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** Polls probe until it returns true; fails with the tail of the process log if it exits or times out first. */
export async function waitUntilReady(proc: RigProcess, what: string, probe: () => Promise<boolean>, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) break;
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  const tail = fs.existsSync(proc.logPath) ? fs.readFileSync(proc.logPath, 'utf8').split('\n').slice(-20).join('\n') : '';
  await proc.stop();
  throw new Error(`${what} did not become ready (exit code ${proc.child.exitCode}); log tail:\n${tail}`);
}

export function runCommand(program: string, args: string[], opts: { cwd?: string; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd: opts.cwd, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${program} exited ${code}: ${err.trim()}`))));
    if (child.stdin) {
      // A program that exits without reading its input must not crash us with EPIPE.
      child.stdin.on('error', () => {});
      child.stdin.end(opts.input);
    }
  });
}

/** The pid a test's program wrote to `file`, or undefined while the file is missing or empty. */
export function pidIn(file: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim());
    return n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Whether pid is gone, or a zombie nobody reaped yet (in a container, pid 1 may never reap). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Polls fn every 50 ms until it returns true; throws naming what was awaited after timeoutMs. */
export async function pollUntil(what: string, fn: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
