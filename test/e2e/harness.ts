// Runs the real `certsmith server` as a child process and drives the CLI against it, as a
// user would. Shared by every end-to-end test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../..');
/** certsmith from the sources (through tsx): what the tests run, so no build is needed between an edit and a test */
export const certsmithBin = join(repoRoot, 'test', 'rig', 'certsmith-source.mjs');
/** the command users run: the compiled build in dist/ (test/e2e/compiled.test.ts) */
export const compiledBin = join(repoRoot, 'bin', 'certsmith.mjs');

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; stdin is closed unless `input` is given. */
export function run(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CommandResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? repoRoot, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    // a command that exits without reading its stdin (openssl) makes this write fail with EPIPE; its exit code is what counts
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

export interface RunningServer {
  dataDir: string;
  kubeconfig: string;
  url: string;
  process: ChildProcess;
  /** everything the server printed so far */
  output(): string;
  /** `certsmith --kubeconfig <ours> ...args` */
  cli(args: string[], opts?: { input?: string }): Promise<CommandResult>;
  /** SIGTERM, then waits for the exit; resolves to the exit code */
  stop(): Promise<number | null>;
  kill(): void;
  /** removes the data dir (after stop) */
  cleanup(): void;
}

export async function startServer(opts: { args?: string[]; dataDir?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; bin?: string } = {}): Promise<RunningServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'certsmith-e2e-'));
  const bin = opts.bin ?? certsmithBin;
  const args = [
    bin, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0',
    '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0',
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot, env: { ...process.env, CERTSMITH_LOG_LEVEL: process.env.CERTSMITH_LOG_LEVEL ?? 'warn', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // on 'close', once its output is all read: a server that died says so in output() (the signal too)
  const exited = new Promise<number | null>((r) => child.on('close', (code, signal) => {
    if (signal) out += `\n[the server was killed by ${signal}]\n`;
    r(code);
  }));

  const ready = await new Promise<{ url: string; kubeconfig: string }>((resolveReady, reject) => {
    let settled = false;
    const failed = (e: Error) => {
      if (settled) return;
      settled = true;
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
      reject(e);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      failed(new Error(`certsmith server did not start within ${opts.timeoutMs ?? 30_000}ms:\n${out}`));
    }, opts.timeoutMs ?? 30_000);
    const check = () => {
      const m = /certsmith server listening on (\S+) \(kubeconfig: (.+)\)/.exec(out);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        resolveReady({ url: m[1], kubeconfig: m[2] });
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      failed(new Error(`certsmith server exited with ${code} before it was ready:\n${out}`));
    });
  });

  return {
    dataDir,
    kubeconfig: ready.kubeconfig,
    url: ready.url,
    process: child,
    output: () => out,
    cli: (cliArgs, cliOpts = {}) => run(process.execPath, [bin, '--kubeconfig', ready.kubeconfig, ...cliArgs], { input: cliOpts.input }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    cleanup() {
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls until fn gives something other than undefined or false; fails naming what it waited for. */
export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function isReady(o: { status?: { conditions?: { type: string; status: string }[] } }): boolean {
  return !!o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}
