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
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KEEPER_SOURCE } from './http01-keeper-program.ts';
import { servedHost } from './http01-listener.ts';
import type { HTTP01Server } from './http01.ts';

/** how long a keeper nobody adopts keeps serving: longer than a restart, shorter than an order's life */
export const KEEPER_GRACE_MS = 60_000;

/**
 * One control socket per listen address and user, in a directory of the temp dir that only this
 * user may enter (getuid: userInfo() throws for a uid without a passwd entry, as in many
 * containers). In the shared temp dir itself, any local account could listen on the path first
 * and be adopted as the keeper: it would get every token and serve none.
 */
export function keeperSocketPath(host: string, port: number): string {
  const uid = process.getuid?.() ?? '';
  const id = crypto.createHash('sha256').update(`${host}:${port}:${uid}`).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `certsmith-${uid}`, `http01-${id}.sock`);
}

/**
 * `dir`, made 0700 when missing; refused when it is a symlink, not a directory, someone else's,
 * or open to others (whoever prepared it could then plant or read the control socket).
 */
export function privateKeeperDir(dir: string): string {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const st = fs.lstatSync(dir);
  const uid = process.getuid?.();
  if (st.isSymbolicLink()) throw new Error(`the HTTP-01 keeper directory ${dir} is a symlink: refused`);
  if (!st.isDirectory()) throw new Error(`the HTTP-01 keeper directory ${dir} is not a directory: refused`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`the HTTP-01 keeper directory ${dir} is owned by uid ${st.uid}, not ${uid}: refused`);
  if (st.mode & 0o077) throw new Error(`the HTTP-01 keeper directory ${dir} is not private (mode ${(st.mode & 0o777).toString(8)}): refused`);
  return dir;
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

/** The keeper's acknowledgement never came: the control connection dropped first. */
export class KeeperConnectionLost extends Error {}

/** One control connection: each message is acknowledged by its id, or fails when the connection drops first. */
interface KeeperLink {
  readonly alive: boolean;
  send(msg: Record<string, unknown>): Promise<void>;
  end(): Promise<void>;
}

function linkOver(sock: net.Socket, onDrop: () => void): KeeperLink {
  sock.setEncoding('utf8');
  const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let buf = '';
  let alive = true;
  sock.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      let id: number | undefined;
      try {
        id = (JSON.parse(buf.slice(0, i)) as { id?: number }).id;
      } catch {
        id = undefined;
      }
      buf = buf.slice(i + 1);
      if (id === undefined) continue;
      waiting.get(id)?.resolve();
      waiting.delete(id);
    }
  });
  // Whatever was not acknowledged may never have been applied: it fails, never succeeds.
  const drop = () => {
    if (!alive) return;
    alive = false;
    const lost = new KeeperConnectionLost('the HTTP-01 keeper connection dropped before the keeper acknowledged');
    for (const w of waiting.values()) w.reject(lost);
    waiting.clear();
    onDrop();
  };
  sock.on('error', drop);
  sock.on('close', drop);
  sock.on('end', drop);
  return {
    get alive() {
      return alive && !sock.destroyed;
    },
    send(msg) {
      if (!alive || sock.destroyed) return Promise.reject(new KeeperConnectionLost('the HTTP-01 keeper connection is gone'));
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        sock.write(`${JSON.stringify({ ...msg, id })}\n`);
      });
    },
    end: () =>
      new Promise<void>((r) => {
        if (sock.destroyed) return r();
        sock.end(() => r());
      }),
  };
}

export interface HTTP01KeeperOptions {
  host: string;
  port: number;
  graceMs?: number;
  /** tries to get a connection again (to the same keeper when it is alive, else a new one) before an operation fails; 5 by default */
  reconnectTries?: number;
  /** the wait before the second try, doubling up to 2 s; 100 ms by default */
  reconnectDelayMs?: number;
  /** the control connection dropped while certsmith lives: tokens may go unserved until it is replaced */
  onLost?(): void;
  /** a new connection was made and given every token still presented */
  onReplaced?(): void;
}

/**
 * The responder on host:port, served by a keeper process: the one already running for this
 * address (left by a certsmith that died) or a new one. `close` releases the keeper: it exits at
 * once when it serves no token, otherwise after the grace period unless a restarted certsmith
 * adopts it first (a graceful restart during validation must not lose the token either).
 *
 * The connection may drop while certsmith lives (the keeper died or closed it): a present or
 * cleanup in flight then fails or is sent again on a new connection, never taken as done; the
 * connection is replaced at once (the same keeper when it still listens, else a new keeper;
 * reconnectTries with a doubling wait, then the next operation tries again), and the new one is
 * given every token this responder presented and did not clean up before anything else.
 */
export async function startHTTP01Keeper(opts: HTTP01KeeperOptions): Promise<HTTP01Server> {
  if (opts.port === 0) throw new Error('the HTTP-01 keeper needs a fixed port to be found again');
  const socketPath = keeperSocketPath(opts.host, opts.port);
  privateKeeperDir(path.dirname(socketPath));
  const tries = Math.max(1, opts.reconnectTries ?? 5);
  /** presented and not cleaned up: what a new connection is given first */
  /** what this certsmith presented: given again to a replaced connection */
  const tokens = new Map<string, { keyAuth: string; host?: string }>();
  let closing = false;
  let current: KeeperLink | undefined;
  let replacing: Promise<KeeperLink> | undefined;

  async function open(): Promise<KeeperLink> {
    let sock = await connect(socketPath).catch(() => undefined);
    if (!sock) {
      await spawnKeeper(opts.host, opts.port, socketPath, opts.graceMs ?? KEEPER_GRACE_MS);
      sock = await connect(socketPath);
    }
    const link: KeeperLink = linkOver(sock, () => dropped(link));
    return link;
  }

  function dropped(link: KeeperLink): void {
    if (link !== current) return; // a connection that failed while being given the tokens: the loop tries again
    current = undefined;
    if (closing) return;
    opts.onLost?.();
    // Replaced now, not at the next present: an accepted challenge's token must be served again.
    connection().catch(() => undefined);
  }

  function connection(): Promise<KeeperLink> {
    if (current?.alive) return Promise.resolve(current);
    replacing ??= (async () => {
      let delay = opts.reconnectDelayMs ?? 100;
      let lastError: Error | undefined;
      for (let attempt = 0; attempt < tries; attempt++) {
        if (attempt > 0) {
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 2000);
        }
        if (closing) break;
        let link: KeeperLink | undefined;
        try {
          link = await open();
          // every token still presented, before the connection is used for anything else
          for (const [token, served] of [...tokens]) await link.send({ op: 'present', token, ...served });
        } catch (e) {
          lastError = e as Error;
          await link?.end();
          continue;
        }
        current = link;
        opts.onReplaced?.();
        return link;
      }
      throw new Error(closing ? 'the HTTP-01 responder is closed' : `the HTTP-01 keeper connection was lost and could not be replaced (${tries} tries): ${lastError?.message}`);
    })().finally(() => (replacing = undefined));
    return replacing;
  }

  /** Sends on the connection; one that drops first is replaced (and given the tokens) and the message sent again once. */
  async function send(msg: Record<string, unknown>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const link = await connection();
      try {
        return await link.send(msg);
      } catch (e) {
        if (!(e instanceof KeeperConnectionLost) || attempt >= 1 || closing) throw e;
      }
    }
  }

  current = await open();
  return {
    port: opts.port,
    async present(token, keyAuth, host) {
      const before = tokens.get(token);
      const served = { keyAuth, ...(host === undefined ? {} : { host: servedHost(host) }) };
      tokens.set(token, served);
      try {
        await send({ op: 'present', token, ...served });
      } catch (e) {
        // never presented: not given to a later connection either
        if (before === undefined && tokens.get(token) === served) tokens.delete(token);
        throw e;
      }
    },
    async cleanUp(token) {
      tokens.delete(token);
      await send({ op: 'cleanup', token });
    },
    async close() {
      closing = true;
      const link = current ?? (await replacing?.catch(() => undefined));
      if (!link?.alive) return;
      await link.send({ op: 'release' }).catch(() => undefined);
      await link.end();
    },
  };
}
