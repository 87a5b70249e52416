// The Kubernetes REST API over a Store: enough of kube-apiserver for kubectl, the certsmith
// CLI and HttpStore (and so the cluster backend) to work against the embedded store.
// This file wires the listener; routing is in api/router.ts, each verb in api/handlers/.
import { chmodSync, statSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { NamespaceType } from '../api/resources.ts';
import { StoreError, type Store } from '../store/store.ts';
import { builtInNamespaces } from './namespaces.ts';
import { ensureCustomResourceDefinitions } from './builtin-crds.ts';
import { metadataNameLabel } from '../store/sqlite/admission.ts';
import { entryAt } from './data-dir.ts';
import { bearerTokenCheck } from './api/bearer-token.ts';
import type { ApiContext } from './api/context.ts';
import { sendJSON, statusBody } from './api/responses.ts';
import { isWatchRequest } from './api/query.ts';
import { processLoopShare, type LoopShare } from '../runtime/loop-share.ts';
import { handleRequest } from './api/router.ts';
import { ConnectionCap } from './connection-cap.ts';
import { refuseRenegotiation, SERVER_TLS_OPTIONS } from './tls.ts';

export interface ApiServerOptions {
  store: Store;
  /** default 127.0.0.1 */
  host?: string;
  /** 0 (the default) picks a free port */
  port?: number;
  tls?: { certPem: string; keyPem: string };
  /** when set, every request but the health probes needs `Authorization: Bearer <token>` */
  token?: string;
  logger?: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** how long a watch stays open when the client names no timeoutSeconds */
  defaultWatchTimeoutSeconds?: number;
  /** how often a watch with allowWatchBookmarks gets a BOOKMARK (default a minute, as kube's watch cache; tests shorten it) */
  watchBookmarkIntervalMs?: number;
  now?: () => Date;
  /**
   * Namespaces that exist from the start, as on a cluster: objects may only be created in a
   * namespace that exists. Default: default, kube-system, kube-public and cert-manager (the
   * cluster resource namespace and leader election's).
   */
  namespaces?: readonly string[];
  /**
   * Also serve the API, without TLS, on this Unix socket (mode 0600; its folder must be one only
   * this account can write, as the data dir is): the CLI on the same host then skips the TLS
   * handshake and Node's root-store set-up, a large share of a short command's time. The same
   * handler and bearer token apply. A socket left there by a server that died is replaced;
   * anything else at the path (a symlink, a file) is refused.
   */
  socketPath?: string;
  /** the event loop's time, shared with the controllers, which give way while requests come in; default the process's */
  loopShare?: LoopShare;
  /** open connections on the TCP listener; a full cap closes the oldest with no request in flight (connection-cap.ts; default DEFAULT_MAX_CONNECTIONS) */
  maxConnections?: number;
  /** how long a TLS connection may take to complete its handshake (default DEFAULT_HANDSHAKE_TIMEOUT_MS) */
  handshakeTimeoutMs?: number;
  /** how long a request's headers may take to arrive (default DEFAULT_HEADERS_TIMEOUT_MS) */
  headersTimeoutMs?: number;
  /** how long a response (a watch's aside) may make no progress before its connection is closed (default DEFAULT_RESPONSE_STALL_MS) */
  responseStallMs?: number;
}

/**
 * Bounds on what a client without the token can hold: connections that never finish a handshake
 * or never send a request held every file descriptor the process had (Node's handshake timeout is
 * 120 s), and the API, /readyz and /metrics failed with them. kubectl and the controllers use a
 * few connections each.
 */
export const DEFAULT_MAX_CONNECTIONS = 1024;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** a request's headers within 20 s of the connection (Node: 60 s), as a slow-headers client holds one too */
export const DEFAULT_HEADERS_TIMEOUT_MS = 20_000;
/**
 * A client that stops reading a response holds it all in memory (150 such reads of a 19 MB list
 * held 8.5 GB); one that has not taken a byte in this long (kube-apiserver's request timeout; an
 * admission webhook may take 30 s) is dropped. Watches wait for changes
 * and are exempt: a watcher that stops reading is handled by the watch's own bound.
 */
export const DEFAULT_RESPONSE_STALL_MS = 60_000;

export interface RunningApiServer {
  url: string;
  port: number;
  /** the Unix socket it also serves on, when one was asked for and the path fits in a socket address */
  socketPath?: string;
  /** serves new connections with this certificate (the HTTPS listener; the socket has none) */
  setServingCertificate(tls: { certPem: string; keyPem: string }): void;
  close(): Promise<void>;
}

/** the longest path a Unix socket address holds on Linux (sun_path is 108 bytes with its NUL) */
const maxSocketPathBytes = 107;

export class SocketPathError extends Error {}

/**
 * Readies `path` for the socket: its folder must be one only this account can write (else
 * someone could swap the socket for a symlink before its chmod, or bind one first), and what a
 * stopped server left there is removed — a socket only, never through a symlink.
 */
function prepareSocketPath(path: string): void {
  const folder = statSync(dirname(path));
  if (folder.uid !== (process.getuid?.() ?? 0) || folder.mode & 0o022) {
    throw new SocketPathError(`${dirname(path)} is not a folder only this account can write: certsmith serves its API socket only in one`);
  }
  const st = entryAt(path);
  if (!st) return;
  if (!st.isSocket()) {
    throw new SocketPathError(`${path} exists and is not a socket (${st.isSymbolicLink() ? 'a symlink' : 'a file or folder'}): remove it; certsmith serves its API socket there`);
  }
  // the data-dir lock says no other server uses this folder: the socket is a dead one's
  unlinkSync(path);
}

function listen(server: http.Server | https.Server, at: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: http.Server | https.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const host = opts.host ?? '127.0.0.1';
  await ensureNamespaces(opts.store, opts.namespaces ?? builtInNamespaces);
  await ensureCustomResourceDefinitions(opts.store, opts.now?.() ?? new Date());
  const ctx: ApiContext = {
    store: opts.store,
    log: opts.logger,
    now: opts.now ?? (() => new Date()),
    defaultWatchTimeoutSeconds: opts.defaultWatchTimeoutSeconds,
    watchBookmarkIntervalMs: opts.watchBookmarkIntervalMs,
    openWatches: new Set(),
    serverAddress: '',
    authorized: bearerTokenCheck(opts.token),
  };
  const loopShare = opts.loopShare ?? processLoopShare;
  const stallMs = opts.responseStallMs ?? DEFAULT_RESPONSE_STALL_MS;
  const cap = new ConnectionCap(opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS, ctx.log);
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    loopShare.noteRequest();
    cap.requestStarted(req, res);
    if (!isWatchRequest(req.url)) {
      // no socket activity for stallMs while this response is out: the client stopped reading
      res.setTimeout(stallMs, () => res.destroy());
      // a later request on the same kept-alive connection (a watch) starts without it
      res.once('finish', () => req.socket.setTimeout(0));
    }
    handleRequest(ctx, req, res).catch((e) => {
      ctx.log?.error({ err: { message: (e as Error)?.message } }, 'request failed');
      if (!res.headersSent) sendJSON(res, 500, statusBody(500, 'InternalError', 'an internal error occurred'));
      else res.end();
    });
  };
  const headersTimeout = opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  // Node enforces headersTimeout only when it checks its connections, every 30 s by default:
  // partial headers were held ~30 s, not 20
  const httpOptions: http.ServerOptions = { headersTimeout, connectionsCheckingInterval: Math.min(1000, Math.max(50, headersTimeout / 4)) };
  const server = opts.tls
    ? https.createServer({ ...httpOptions, ...SERVER_TLS_OPTIONS, cert: opts.tls.certPem, key: opts.tls.keyPem, handshakeTimeout: opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS }, listener)
    : http.createServer(httpOptions, listener);
  if (server instanceof https.Server) refuseRenegotiation(server);
  // after the TLS listener's own: the TLS socket over a shed TCP socket closes with it
  server.on('connection', (socket: Socket) => cap.admit(socket));

  await listen(server, { port: opts.port ?? 0, host });
  let socketServer: http.Server | undefined;
  if (opts.socketPath && Buffer.byteLength(opts.socketPath) <= maxSocketPathBytes) {
    try {
      prepareSocketPath(opts.socketPath);
      socketServer = http.createServer(httpOptions, listener);
      await listen(socketServer, { path: opts.socketPath });
      // the folder is private, so no one could connect between the bind and this
      chmodSync(opts.socketPath, 0o600);
    } catch (e) {
      if (socketServer?.listening) await closeServer(socketServer);
      await closeServer(server);
      throw e;
    }
  } else if (opts.socketPath) {
    ctx.log?.warn({ socketPath: opts.socketPath }, 'API socket not served: its path is longer than a Unix socket address holds; clients use HTTPS');
  }
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  ctx.serverAddress = `${urlHost}:${port}`;
  const url = `${opts.tls ? 'https' : 'http'}://${ctx.serverAddress}`;
  ctx.log?.info({ url, ...(socketServer ? { socketPath: opts.socketPath } : {}) }, 'API server listening');

  return {
    url,
    port,
    ...(socketServer ? { socketPath: opts.socketPath } : {}),
    setServingCertificate(tls) {
      if (server instanceof https.Server) server.setSecureContext({ cert: tls.certPem, key: tls.keyPem });
    },
    async close() {
      for (const finish of [...ctx.openWatches]) finish();
      // closing a listening Unix socket removes its file
      await Promise.all([closeServer(server), ...(socketServer ? [closeServer(socketServer)] : [])]);
    },
  };
}

async function ensureNamespaces(store: Store, names: readonly string[]) {
  // a namespace stored by a certsmith before 2026-11 may lack kubernetes.io/metadata.name: an
  // update adds it (the store's Namespace strategy), so namespaceSelectors on it match everywhere
  for (const ns of (await store.list(NamespaceType)).items) {
    if (ns.metadata.labels?.[metadataNameLabel] !== ns.metadata.name) await store.update(NamespaceType, ns);
  }
  for (const name of names) {
    if (await store.get(NamespaceType, undefined, name)) continue;
    try {
      await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      // another writer made it meanwhile
      if (!(e instanceof StoreError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}
