// The dashboard's HTTP listener: static assets from the repository, JSON views, and a stream of
// server-sent events. Loopback only (see README "Dashboard"): the Host header must name the
// loopback address too, so a web page on another origin cannot reach it through DNS rebinding.
import http from 'node:http';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, extname } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { LiveView, StreamMessage } from './live-view.ts';
import type { Logger } from '../../runtime/logger.ts';

/**
 * src/dashboard/assets in the package (the repository, the npm package, the image): found from
 * the nearest folder above this module with a package.json, since this module is as deep as
 * its source file under tsx but one chunk of the bundle in dist/.
 */
export const assetsDir = join(packageRoot(import.meta.dirname), 'src', 'dashboard', 'assets');

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}: the dashboard's assets cannot be found`);
  }
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml',
};

// the page may load and fetch only from itself: no CDN, no inline script, nothing framed
const securityHeaders = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export class DashboardAddressError extends Error {}

/** The dashboard listens on loopback only: it has no login of its own. */
export function checkLoopback(host: string): void {
  if (host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return;
  throw new DashboardAddressError(`"${host}" is not a loopback address: the dashboard has no login of its own and listens on 127.0.0.1, ::1 or localhost only (reach it from elsewhere through an SSH tunnel)`);
}

function loadAssets(): Map<string, { body: Buffer; type: string }> {
  const out = new Map<string, { body: Buffer; type: string }>();
  for (const f of readdirSync(assetsDir)) {
    const type = contentTypes[extname(f)];
    if (type) out.set(f, { body: readFileSync(join(assetsDir, f)), type });
  }
  if (!out.has('index.html')) throw new Error(`the dashboard's assets are missing from ${assetsDir}`);
  return out;
}

export interface DashboardServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A path segment's percent-decoding; undefined for a malformed escape. */
function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * Bounds on the event streams. The dashboard has no login and shares the server's process, so
 * any local account can open streams and never read them: without these, every change queued
 * another list in memory for each (1,000 such streams ended the server out of memory).
 */
export const DEFAULT_MAX_STREAMS = 32;
/** unsent bytes a stream may hold beyond its first whole list before it is dropped (the page reconnects and starts again) */
export const DEFAULT_MAX_STREAM_BACKLOG_BYTES = 8 * 1024 * 1024;

export interface DashboardListenOptions {
  host: string;
  port: number;
  logger: Logger;
  maxStreams?: number;
  maxStreamBacklogBytes?: number;
}

export async function serveDashboard(view: LiveView, opts: DashboardListenOptions): Promise<DashboardServer> {
  checkLoopback(opts.host);
  const assets = loadAssets();
  const streams = new Set<http.ServerResponse>();
  const maxStreams = opts.maxStreams ?? DEFAULT_MAX_STREAMS;
  const maxBacklog = opts.maxStreamBacklogBytes ?? DEFAULT_MAX_STREAM_BACKLOG_BYTES;
  // one serialisation of a message for every page it goes to
  const encoded = new WeakMap<StreamMessage, string>();
  const encode = (m: StreamMessage) => {
    let text = encoded.get(m);
    if (text === undefined) encoded.set(m, text = `event: ${m.event}\ndata: ${JSON.stringify(m.data)}\n\n`);
    return text;
  };
  let port = opts.port;

  const allowedHost = (h: string | undefined) => {
    if (!h) return false;
    const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(h);
    if (!m || Number(m[3] ?? 80) !== port) return false;
    try {
      checkLoopback(m[1] ?? m[2]);
      return true;
    } catch {
      return false;
    }
  };

  const send = (res: http.ServerResponse, status: number, type: string, body: string | Buffer) => {
    res.writeHead(status, { ...securityHeaders, 'Content-Type': type });
    res.end(body);
  };
  const json = (res: http.ServerResponse, status: number, value: unknown) => send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

  const stream = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (streams.size >= maxStreams) {
      return send(res, 503, 'text/plain; charset=utf-8', `${streams.size} open dashboard streams already, the most this dashboard serves; close a page and reload\n`);
    }
    res.writeHead(200, { ...securityHeaders, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    // EventSource reconnects by itself after this long when the connection drops (a restart)
    res.write('retry: 1000\n\n');
    // comments keep proxies and idle timers from closing a quiet stream
    const beat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    streams.add(res);
    // set once subscribed; done() may run while the first list is being written, before that
    const subscription: { stop?: () => void } = {};
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      clearInterval(beat);
      subscription.stop?.();
      streams.delete(res);
    };
    let allowed = maxBacklog;
    // a (re)connected page is sent the whole current list first, never changes it may have missed
    subscription.stop = view.subscribe((m: StreamMessage) => {
      if (closed) return;
      const text = encode(m);
      // the first whole list may be large (100,000 certificates): the limit is on top of it
      if (m.event === 'snapshot') allowed = Math.max(allowed, text.length + maxBacklog);
      if (res.writableLength + text.length > allowed) {
        opts.logger.warn({ unsent: res.writableLength }, 'dashboard: a page does not read its event stream; dropping it');
        done();
        res.destroy();
        return;
      }
      res.write(text);
    });
    if (closed) subscription.stop();
    req.on('close', done);
    res.on('error', done);
  };

  const server = http.createServer((req, res) => {
    if (!allowedHost(req.headers.host)) return send(res, 403, 'text/plain; charset=utf-8', 'the dashboard answers on its loopback address only\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'the dashboard is read-only\n');
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://dashboard');
    } catch {
      return send(res, 400, 'text/plain; charset=utf-8', 'malformed request path\n');
    }
    const path = url.pathname;
    if (path === '/' || path === '/index.html') {
      const a = assets.get('index.html')!;
      return send(res, 200, a.type, a.body);
    }
    if (path.startsWith('/assets/')) {
      const a = assets.get(path.slice('/assets/'.length));
      return a ? send(res, 200, a.type, a.body) : send(res, 404, 'text/plain; charset=utf-8', 'no such asset\n');
    }
    if (path === '/api/stream') return stream(req, res);
    if (path === '/api/certificates') {
      view.snapshot().then((s) => json(res, 200, s), (e: Error) => json(res, 503, { message: e.message }));
      return;
    }
    const m = /^\/api\/certificates\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const [ns, name] = [decodedSegment(m[1]), decodedSegment(m[2])];
      // a bad escape (%E0%A4%A) thrown here would end the process: any page can make a browser ask
      if (ns === undefined || name === undefined) return send(res, 400, 'text/plain; charset=utf-8', 'malformed request path\n');
      view.certificate(ns, name).then(
        (d) => (d ? json(res, 200, d) : json(res, 404, { message: `certificate ${ns}/${name} not found` })),
        (e: Error) => json(res, 503, { message: e.message }),
      );
      return;
    }
    send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const hostPart = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  opts.logger.info({ port }, 'dashboard listening');
  return {
    url: `http://${hostPart}:${port}/`,
    port,
    close: () => new Promise<void>((resolve) => {
      for (const r of streams) r.end();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
