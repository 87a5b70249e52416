// The Kubernetes REST API over a Store: enough of kube-apiserver for kubectl, the certsmith
// CLI and HttpStore (and so the cluster backend) to work against the embedded store.
// This file wires the listener; routing is in api/router.ts, each verb in api/handlers/.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { NamespaceType } from '../api/resources.ts';
import { StoreError, type Store } from '../store/store.ts';
import { builtInNamespaces } from './namespaces.ts';
import { bearerTokenCheck } from './api/bearer-token.ts';
import type { ApiContext } from './api/context.ts';
import { sendJSON, statusBody } from './api/responses.ts';
import { handleRequest } from './api/router.ts';

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
  now?: () => Date;
  /**
   * Namespaces that exist from the start, as on a cluster: objects may only be created in a
   * namespace that exists. Default: default, kube-system, kube-public and cert-manager (the
   * cluster resource namespace and leader election's).
   */
  namespaces?: readonly string[];
}

export interface RunningApiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const host = opts.host ?? '127.0.0.1';
  await ensureNamespaces(opts.store, opts.namespaces ?? builtInNamespaces);
  const ctx: ApiContext = {
    store: opts.store,
    log: opts.logger,
    now: opts.now ?? (() => new Date()),
    defaultWatchTimeoutSeconds: opts.defaultWatchTimeoutSeconds,
    openWatches: new Set(),
    serverAddress: '',
    authorized: bearerTokenCheck(opts.token),
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handleRequest(ctx, req, res).catch((e) => {
      ctx.log?.error({ err: { message: (e as Error)?.message } }, 'request failed');
      if (!res.headersSent) sendJSON(res, 500, statusBody(500, 'InternalError', 'an internal error occurred'));
      else res.end();
    });
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, listener)
    : http.createServer(listener);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  ctx.serverAddress = `${urlHost}:${port}`;
  const url = `${opts.tls ? 'https' : 'http'}://${ctx.serverAddress}`;
  ctx.log?.info({ url }, 'API server listening');

  return {
    url,
    port,
    async close() {
      for (const finish of [...ctx.openWatches]) finish();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function ensureNamespaces(store: Store, names: readonly string[]) {
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
