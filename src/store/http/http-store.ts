// A Store that speaks the Kubernetes REST API: the CLI's client for the embedded server,
// and a client for a real cluster. metav1.Status failures come back as StoreErrors, so
// callers handle 404/409/410/422 the same way for every backend.
import http from 'node:http';
import type { KubeObject } from '../../api/meta.ts';
import { restPath, type ResourceType } from '../../api/resources.ts';
import {
  StoreError, type StoreErrorReason, type StatusCause, type Store, type ListOptions, type ListResult, type WatchOptions,
  type WatchEvent, type Watch, type WriteOptions, type PatchOptions, type PatchType, type DeleteOptions,
} from '../store.ts';
import { TokenBucket } from './token-bucket.ts';
import { isPrivateSocket } from './local-socket.ts';

export interface HttpStoreOptions {
  /** https://host:port (or http:// for tests) */
  server: string;
  caPem?: string;
  token?: string;
  insecure?: boolean;
  /** client-side rate limit; 0 = unlimited. Defaults 20 and 50, as cert-manager's controller flags. */
  qps?: number;
  burst?: number;
  userAgent?: string;
  /** the field manager of writes that name none */
  fieldManager?: string;
  /** per request (not per watch): how long without an answer; 0 waits forever (default 60 s) */
  timeoutMs?: number;
  /** a new TLS connection's handshake, whatever timeoutMs (default 10 s, as kubectl's client) */
  handshakeTimeoutMs?: number;
  /** client certificate and its key (PEM), for clusters that authenticate users by certificate */
  certPem?: string;
  keyPem?: string;
  /** the name the server's certificate must carry, when it differs from the URL's host */
  tlsServerName?: string;
  /** credentials that change over time (exec plugins, rotated service-account tokens): asked before each request, they win over `token` */
  authHeaders?: () => Promise<Record<string, string>>;
  /**
   * A Unix socket of the same server (certsmith server's own, which its kubeconfig names): used
   * instead of `server` when it is private (see isPrivateSocket), until a connection to it is
   * refused (no server listens there), when `server` takes over.
   */
  socketPath?: string;
}

/** How requests reach the server: the URL's host over HTTP(S), or the socket over plain HTTP. */
interface Transport {
  /** a request for `url` (on `server`), sent this way */
  open(url: URL, options: http.RequestOptions, onResponse: (res: http.IncomingMessage) => void): http.ClientRequest;
  agent: http.Agent;
  socketPath?: string;
  /** the server as messages name it */
  origin: string;
}

interface Response {
  status: number;
  body: any;
}

const knownReasons = new Set<StoreErrorReason>(['NotFound', 'AlreadyExists', 'Conflict', 'Gone', 'Expired', 'Invalid', 'BadRequest', 'Forbidden', 'Unauthorized', 'MethodNotAllowed', 'InternalError',
  'RequestEntityTooLarge', 'Timeout', 'InsufficientStorage']);

function reasonForCode(code: number): StoreErrorReason {
  switch (code) {
    case 400: case 413: case 415: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 405: return 'MethodNotAllowed';
    case 409: return 'Conflict';
    case 410: return 'Gone';
    case 422: return 'Invalid';
    default: return 'InternalError';
  }
}

/** Turns a metav1.Status (or any error body) into the StoreError a local backend would have thrown. */
export function storeErrorFromStatus(code: number, body: any): StoreError {
  const status = body && typeof body === 'object' && body.kind === 'Status' ? body : undefined;
  // kube reasons we have no name for (UnsupportedMediaType, ...) map by their code
  const reason: StoreErrorReason = knownReasons.has(status?.reason) ? status.reason : reasonForCode(status?.code ?? code);
  const message = status?.message ?? (typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${code}`);
  const causes: StatusCause[] = Array.isArray(status?.details?.causes)
    ? status.details.causes.map((c: any) => ({ field: c.field ?? '', message: c.message ?? '', ...(c.reason ? { reason: c.reason } : {}) }))
    : [];
  const retryAfter = status?.details?.retryAfterSeconds;
  return new StoreError(reason, message, causes, typeof retryAfter === 'number' ? retryAfter : undefined);
}

const patchContentTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

/**
 * For requests over the local socket: no TLS there, and without a servername Node's agent
 * derives one from the Host header, testing it against its IPv6 pattern first; compiling that
 * pattern cost each command line ~10 ms.
 */
const noServerName = { servername: '' };

export class HttpStore implements Store {
  private readonly base: URL;
  /** chosen at the first request; see connection() */
  private transport?: Promise<Transport>;
  private readonly limiter: TokenBucket;
  private readonly openWatches = new Set<() => void>();
  /** watches whose server side is not registered yet; writes wait for them (see watch) */
  private readonly startingWatches = new Set<Promise<void>>();

  constructor(private readonly opts: HttpStoreOptions) {
    this.base = new URL(opts.server);
    this.limiter = new TokenBucket(opts.qps ?? 20, opts.burst ?? 50);
  }

  /** The socket when the options name a private one (until it turns out no server listens there), else the URL. */
  private connection(): Promise<Transport> {
    const socketPath = this.opts.socketPath;
    if (!this.transport && socketPath && isPrivateSocket(socketPath)) {
      const agent = new http.Agent({ keepAlive: true });
      this.transport = Promise.resolve({
        agent, socketPath, origin: `unix:${socketPath}`,
        open: (url, options, onResponse) => http.request(new URL(url.pathname + url.search, 'http://localhost'), { ...options, agent, socketPath, ...noServerName }, onResponse),
      });
    }
    this.transport ??= this.direct();
    return this.transport;
  }

  /** The server's URL, over TLS when it is https. */
  private async direct(): Promise<Transport> {
    const over = (request: typeof http.request, agent: http.Agent): Transport => ({
      agent, origin: this.base.origin, open: (url, options, onResponse) => request(url, { ...options, agent }, onResponse),
    });
    if (this.base.protocol !== 'https:') return over(http.request, new http.Agent({ keepAlive: true }));
    // loaded when a request needs TLS: a command that talks to the socket does not pay for it
    const { default: https } = await import('node:https');
    return over(https.request, new https.Agent({
      keepAlive: true, ca: this.opts.caPem, rejectUnauthorized: !this.opts.insecure, cert: this.opts.certPem, key: this.opts.keyPem,
      ...(this.opts.tlsServerName ? { servername: this.opts.tlsServerName } : {}),
    }));
  }

  private async headers(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    return {
      Accept: 'application/json',
      'User-Agent': this.opts.userAgent ?? 'certsmith',
      ...(this.opts.token ? { Authorization: `Bearer ${this.opts.token}` } : {}),
      ...(this.opts.authHeaders ? await this.opts.authHeaders() : {}),
      ...extra,
    };
  }

  private url(path: string, query: Record<string, string | number | boolean | undefined> = {}): URL {
    const u = new URL(path, this.base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '' && v !== false) u.searchParams.set(k, String(v));
    return u;
  }

  /** One request, answered with the parsed body; failures become StoreErrors. */
  async request(method: string, path: string, opts: { query?: Record<string, string | number | boolean | undefined>; body?: unknown; contentType?: string; accept?: string } = {}): Promise<Response> {
    if (method !== 'GET' && this.startingWatches.size) await Promise.all([...this.startingWatches]);
    await this.limiter.take();
    const payload = opts.body === undefined ? undefined : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
    const u = this.url(path, opts.query);
    const headers = await this.headers({
      ...(opts.accept ? { Accept: opts.accept } : {}),
      ...(payload ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': String(payload.length) } : {}),
    });
    const transport = this.connection();
    try {
      return await this.send(await transport, method, u, headers, payload);
    } catch (e) {
      // a socket no server listens on (stopped, or died and left it): nothing was sent, so the
      // request goes again to the URL, as does every one after it
      if (!(await transport).socketPath || !['ECONNREFUSED', 'ENOENT'].includes((e as { code?: string }).code ?? '')) throw e;
      if (this.transport === transport) this.transport = this.direct();
      return this.send(await this.transport!, method, u, headers, payload);
    }
  }

  private send(t: Transport, method: string, u: URL, headers: Record<string, string>, payload: Buffer | undefined): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const req = t.open(u, {
        method,
        headers,
        timeout: this.opts.timeoutMs ?? 60_000,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any = text;
          if (text && /json/.test(res.headers['content-type'] ?? '')) {
            try {
              body = JSON.parse(text);
            } catch {}
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ status, body });
          else reject(storeErrorFromStatus(status, body));
        });
      });
      const timedOut = (message: string) => Object.assign(new Error(message), { code: 'ETIMEDOUT' });
      req.on('timeout', () => req.destroy(timedOut(`${method} ${u.pathname}: no answer from ${t.origin} within ${this.opts.timeoutMs ?? 60_000}ms`)));
      // a server that takes the connection and never completes TLS (hung, or not an API server)
      req.on('socket', (socket) => {
        if (!('encrypted' in socket) || !socket.connecting) return;
        const limit = this.opts.handshakeTimeoutMs ?? 10_000;
        const timer = setTimeout(() => req.destroy(timedOut(`TLS handshake with ${t.origin} timed out after ${limit}ms`)), limit);
        socket.once('secureConnect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      req.on('error', (e) => reject(connectionError(e, t.origin)));
      req.end(payload);
    });
  }

  async get<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined> {
    try {
      return (await this.request('GET', restPath(type, namespace, name))).body as T;
    } catch (e) {
      // an object that is absent; a route that is absent (no such resource on this server) stays an error
      if (e instanceof StoreError && e.reason === 'NotFound' && !/could not find the requested resource/.test(e.message)) return undefined;
      throw e;
    }
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<ListResult<T>> {
    const { body } = await this.request('GET', restPath(type, opts.namespace || undefined), {
      query: {
        labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit, continue: opts.continue,
        ...(opts.atRevision !== undefined ? { resourceVersion: String(opts.atRevision), resourceVersionMatch: 'Exact' } : {}),
      },
    });
    return {
      items: (body.items ?? []).map((o: T) => ({ ...o, apiVersion: o.apiVersion ?? body.apiVersion, kind: o.kind ?? type.kind })),
      resourceVersion: body.metadata?.resourceVersion ?? '',
      ...(body.metadata?.continue ? { continue: body.metadata.continue } : {}),
    };
  }

  watch<T extends KubeObject = KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => void, onError: (err: Error) => void): Watch {
    let stopped = false;
    let req: http.ClientRequest | undefined;
    const stop = () => {
      established?.();
      if (stopped) return;
      stopped = true;
      this.openWatches.delete(stop);
      req?.destroy();
    };
    this.openWatches.add(stop);
    // A watch opened before a write must see that write, as it does on an in-process store:
    // this client holds back its writes until the server has registered the watch.
    let established!: () => void;
    const starting = new Promise<void>((r) => (established = r));
    this.startingWatches.add(starting);
    void starting.then(() => this.startingWatches.delete(starting));
    const fail = (err: Error) => {
      established();
      if (stopped) return;
      stop();
      onError(err);
    };

    const start = async () => {
      // "from now": the server's unset resourceVersion means "current state first", so pin it
      const rv = opts.resourceVersion ?? (await this.list(type, { namespace: opts.namespace, limit: 1 })).resourceVersion;
      await this.limiter.take();
      if (stopped) return established();
      const u = this.url(restPath(type, opts.namespace || undefined), {
        watch: 'true', resourceVersion: rv === '' ? '0' : rv, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector,
        allowWatchBookmarks: opts.allowBookmarks ? 'true' : undefined,
      });
      const headers = await this.headers();
      const t = await this.connection();
      if (stopped) return established();
      req = t.open(u, { method: 'GET', headers }, (res) => {
        established();
        if ((res.statusCode ?? 0) >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let body: any = Buffer.concat(chunks).toString('utf8');
            try {
              body = JSON.parse(body);
            } catch {}
            fail(storeErrorFromStatus(res.statusCode ?? 0, body));
          });
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while (!stopped && (nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (!line) continue;
            let ev: any;
            try {
              ev = JSON.parse(line);
            } catch {
              fail(new StoreError('InternalError', 'the watch stream carried a line that is not JSON'));
              return;
            }
            if (ev.type === 'ERROR') {
              fail(storeErrorFromStatus(ev.object?.code ?? 500, ev.object));
              return;
            }
            onEvent(ev as WatchEvent<T>);
          }
        });
        res.on('end', () => fail(new StoreError('InternalError', 'the watch stream was closed by the server; watch again from the last resourceVersion')));
        res.on('error', (e) => fail(connectionError(e, t.origin)));
      });
      req.on('error', (e) => fail(connectionError(e, t.origin)));
      req.end();
    };
    start().catch((e) => fail(e as Error));
    return { stop };
  }

  private query(opts?: WriteOptions & { force?: boolean }, defaultManager?: string) {
    return {
      dryRun: opts?.dryRun ? 'All' : undefined,
      fieldManager: opts?.fieldManager ?? defaultManager ?? this.opts.fieldManager,
      ...(opts?.force ? { force: 'true' } : {}),
    };
  }

  private namespaceOf(type: ResourceType, obj: KubeObject) {
    return type.namespaced ? obj.metadata?.namespace : undefined;
  }

  async create<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
    return (await this.request('POST', restPath(type, this.namespaceOf(type, obj)), { body: obj, query: this.query(opts) })).body as T;
  }

  async update<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
    return (await this.request('PUT', restPath(type, this.namespaceOf(type, obj), obj.metadata.name), { body: obj, query: this.query(opts) })).body as T;
  }

  async updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
    return (await this.request('PUT', restPath(type, this.namespaceOf(type, obj), obj.metadata.name, 'status'), { body: obj, query: this.query(opts) })).body as T;
  }

  async patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, opts?: PatchOptions): Promise<T> {
    const { body } = await this.request('PATCH', restPath(type, type.namespaced ? namespace : undefined, name, opts?.subresource), {
      body: patch,
      contentType: patchContentTypes[patchType],
      // Kubernetes refuses an apply without a field manager
      query: this.query(opts, patchType === 'apply' ? 'certsmith' : undefined),
    });
    return body as T;
  }

  async delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, opts?: DeleteOptions & { dryRun?: boolean }): Promise<T | undefined> {
    const body = {
      kind: 'DeleteOptions', apiVersion: 'v1',
      ...(opts?.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
      ...(opts?.preconditions ? { preconditions: opts.preconditions } : {}),
    };
    const res = await this.request('DELETE', restPath(type, type.namespaced ? namespace : undefined, name), {
      body, query: opts?.dryRun ? { dryRun: 'All' } : {},
    });
    return res.body?.kind === 'Status' ? undefined : res.body as T;
  }

  async close(): Promise<void> {
    for (const stop of [...this.openWatches]) stop();
    (await this.transport)?.agent.destroy();
  }
}

function connectionError(e: Error & { code?: string }, origin: string): Error {
  if (e instanceof StoreError) return e;
  const why = e.code === 'ECONNREFUSED' ? 'connection refused (is the server running?)'
    : e.code === 'ECONNRESET' ? 'connection reset'
      : e.code === 'ETIMEDOUT' ? e.message
        // by code only: a request's own path ("/certificates") is in some messages
        : /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(e.code ?? '') ? `TLS verification failed: ${e.message}`
          : e.message;
  const err = new Error(`cannot reach ${origin}: ${why}`);
  (err as Error & { code?: string }).code = e.code;
  return err;
}
