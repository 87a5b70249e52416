// The embedded HTTP-01 responder as a keeper process that outlives `certsmith server` (issue 20).
//
// Decision: a challenge accepted just before certsmith dies is validated by the CA seconds later;
// an in-process responder is gone by then (connection refused), or after the restart has not been
// given the token yet (404), and the order is lost. On Kubernetes the solver pods outlive the
// controller; on one host this keeper plays that part. The restarted certsmith adopts the running
// keeper through its control socket (keyed by the listen address), and every presented Challenge
// hands its token over again (ChallengeSolver.restore). A keeper nobody adopts exits after the
// grace period, so nothing outlives certsmith by more than that. When the keeper cannot be used
// (no spawn, port 0, Windows) the in-process responder is the fallback,
// and the Order controller's retry of a "solver-unavailable" failure covers a restart.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KEEPER_SOURCE } from './http01-keeper-program.ts';
import type { HTTP01Server } from './http01.ts';

/** how long a keeper nobody adopts keeps serving: longer than a restart, shorter than an order's life */
export const KEEPER_GRACE_MS = 60_000;

/** One control socket per listen address and user, in the temp dir (getuid: userInfo() throws for a uid without a passwd entry, as in many containers). */
export function keeperSocketPath(host: string, port: number): string {
  const id = crypto.createHash('sha256').update(`${host}:${port}:${process.getuid?.() ?? ''}`).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `certsmith-http01-${id}.sock`);
}

function connect(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    sock.once('connect', () => {
      sock.off('error', reject);
      resolve(sock);
    });
    sock.once('error', reject);
  });
}

function spawnKeeper(host: string, port: number, socketPath: string, graceMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', KEEPER_SOURCE, '--', host, String(port), socketPath, String(graceMs)], {
      detached: true, stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('HTTP-01 keeper did not start within 5s'));
    }, 5000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      // after a ready line this settles nothing; before it, the keeper could not start
      reject(new Error(`HTTP-01 keeper exited with ${code} before it was ready`));
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      child.stdout!.destroy();
      child.unref();
      const msg = JSON.parse(line) as { port?: number; error?: string };
      if (msg.error) reject(new Error(`HTTP-01 responder on ${host || '*'}:${port}: ${msg.error}`));
      else resolve();
    });
  });
}

/**
 * The responder on host:port, served by a keeper process: the one already running for this
 * address (left by a certsmith that died) or a new one. `close` releases the keeper: it exits at
 * once when it serves no token, otherwise after the grace period unless a restarted certsmith
 * adopts it first (a graceful restart during validation must not lose the token either).
 */
export async function startHTTP01Keeper(opts: { host: string; port: number; graceMs?: number }): Promise<HTTP01Server> {
  if (opts.port === 0) throw new Error('the HTTP-01 keeper needs a fixed port to be found again');
  const socketPath = keeperSocketPath(opts.host, opts.port);
  let sock = await connect(socketPath).catch(() => undefined);
  if (!sock) {
    await spawnKeeper(opts.host, opts.port, socketPath, opts.graceMs ?? KEEPER_GRACE_MS);
    sock = await connect(socketPath);
  }
  const control = sock;
  control.setEncoding('utf8');
  // Every change is acknowledged, so that a token is known to be served before the CA is asked to look.
  const waiting = new Map<number, () => void>();
  let nextId = 0;
  let buf = '';
  control.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const id = (JSON.parse(buf.slice(0, i)) as { id?: number }).id;
      buf = buf.slice(i + 1);
      if (id !== undefined) waiting.get(id)?.();
      waiting.delete(id ?? -1);
    }
  });
  const settleAll = () => {
    for (const r of waiting.values()) r();
    waiting.clear();
  };
  control.on('error', settleAll);
  control.on('close', settleAll);
  const send = (msg: Record<string, unknown>): Promise<void> => {
    if (control.destroyed) return Promise.reject(new Error('the HTTP-01 keeper is gone'));
    const id = nextId++;
    return new Promise<void>((resolve) => {
      waiting.set(id, resolve);
      control.write(`${JSON.stringify({ ...msg, id })}\n`);
    });
  };
  return {
    port: opts.port,
    present: (token, keyAuth) => send({ op: 'present', token, keyAuth }),
    cleanUp: (token) => send({ op: 'cleanup', token }),
    async close() {
      await send({ op: 'release' }).catch(() => undefined);
      await new Promise<void>((r) => control.end(() => r()));
    },
  };
}
