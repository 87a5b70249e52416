// What the benches of the compiled product (bench/cli.ts, bench/apply.ts) share: running a
// command to completion with its wall time, and starting `certsmith server` from bin/ with the
// time until /readyz answers.
import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../test/rig/index.ts';

export const repo = resolve(import.meta.dirname, '..');
export const bin = join(repo, 'bin', 'certsmith.mjs');
export const node = process.execPath;

/** Runs a command to completion and gives its wall time in ms; a failure stops the bench with the end of its output. */
export function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): { ms: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd: repo, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}:\n${r.stdout.slice(-2000)}${r.stderr.slice(-4000)}`);
  return { ms, stdout: r.stdout };
}

/** `npm run build` (the bundle bin/certsmith.mjs runs), so that a bench times the tree as it is; prints how long it took. */
export function buildDist(): void {
  const build = timed(node, [join(repo, 'scripts', 'build.mjs')]);
  console.log(`node ${process.version}; build (esbuild) ${(build.ms / 1000).toFixed(1)} s`);
}

export interface CompiledServer { stop(): Promise<void>; readyMs: number; listeningMs: number }

/**
 * Starts the compiled server on `dataDir` and measures spawn → first 200 from /readyz (polled
 * every `pollMs`); a server that exits or is not ready in 60 s is stopped and stops the bench.
 */
export async function startCompiledServer(dataDir: string, pollMs = 5): Promise<CompiledServer> {
  const health = await freePort();
  const t0 = performance.now();
  const child = spawn(node, [bin, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0', '--health-listen', `127.0.0.1:${health}`], {
    cwd: repo, env: { ...process.env, CERTSMITH_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let listeningMs = NaN;
  child.stdout.on('data', (d) => {
    out += d;
    if (Number.isNaN(listeningMs) && out.includes('certsmith server listening on')) listeningMs = performance.now() - t0;
  });
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited:\n${out}`);
      if (performance.now() - t0 > 60_000) throw new Error(`no /readyz in 60 s:\n${out}`);
      if (await fetch(`http://127.0.0.1:${health}/readyz`).then((r) => r.status === 200, () => false)) break;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { readyMs: performance.now() - t0, listeningMs, stop };
}
