// What the HTTP-01 listener (`--acme-http01-listen`, the one part of certsmith that faces the
// internet) answers, and how it guards its connections. Both run in certsmith (in process) and
// in the keeper (http01-keeper-program.ts), which runs them from their source text
// (Function.prototype.toString): so each function here uses only its parameters and Node's
// globals, nothing else of this module.
import type http from 'node:http';

/** A presented token: its key authorization, and the name (or IP address) it is served for. */
export interface ServedToken {
  keyAuth: string;
  /** the Challenge's dnsName, lower case; when set, a request for another Host gets a 404 */
  host?: string;
}

export interface ListenerGuard {
  /** a request's headers must arrive within this (cert-manager's solver: 32 s) */
  headersTimeoutMs: number;
  /** a connection that sends nothing for this long is closed */
  idleTimeoutMs: number;
  /** open connections; a new one past it closes the oldest */
  maxConnections: number;
}

export const LISTENER_GUARD: ListenerGuard = { headersTimeoutMs: 10_000, idleTimeoutMs: 15_000, maxConnections: 512 };

/**
 * The HTTP-01 listener's server. A request gets the key authorization of a presented token, for
 * the Host its Challenge names (as cert-manager's solver checks it), uncached; anything else a
 * 404. The request line may be in absolute form (RFC 9112 §3.2.2); two Host headers are a 400
 * (RFC 9112 §3.2). Connections are bounded: headers within headersTimeoutMs (checked every
 * second, not Node's 30 s), a silent connection closed after idleTimeoutMs, and at
 * maxConnections the oldest connection closed to admit a new one, so idle connections can never
 * lock the CA out (its validation request takes milliseconds; a refused newcomer would be it).
 * `httpModule` is node:http, passed in so that the keeper can run this function's source.
 */
export function challengeServer(httpModule: typeof http, tokens: Map<string, ServedToken>, guard: ListenerGuard): http.Server {
  const headers = { 'content-type': 'text/plain', 'cache-control': 'no-cache, no-store, must-revalidate' };
  const server = httpModule.createServer({ headersTimeout: guard.headersTimeoutMs, requestTimeout: guard.headersTimeoutMs * 2, connectionsCheckingInterval: 1000 }, (req, res) => {
    let hosts = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') hosts++;
    if (hosts > 1) {
      res.writeHead(400, headers).end();
      return;
    }
    let target = req.url ?? '';
    let authority = req.headers.host ?? '';
    const absolute = /^http:\/\/([^/?#]*)([^?#]*)/i.exec(target);
    if (absolute) {
      authority = absolute[1];
      target = absolute[2] || '/';
    }
    const token = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]+)$/.exec(target.split('?')[0])?.[1];
    const served = token !== undefined ? tokens.get(token) : undefined;
    // the name without its port ("[v6]:80", "name:80"), lower case, without a trailing dot
    const bracketed = /^\[([^\]]*)\]/.exec(authority);
    const parts = authority.split(':');
    const name = (bracketed ? bracketed[1] : parts.length === 2 ? parts[0] : authority).toLowerCase().replace(/\.$/, '');
    if ((req.method !== 'GET' && req.method !== 'HEAD') || served === undefined || (served.host !== undefined && served.host !== name)) {
      res.writeHead(404, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(served.keyAuth) });
    res.end(req.method === 'HEAD' ? undefined : served.keyAuth);
  });
  server.setTimeout(guard.idleTimeoutMs, (socket) => socket.destroy());
  const open = new Set<import('node:net').Socket>();
  server.on('connection', (socket: import('node:net').Socket) => {
    if (open.size >= guard.maxConnections) {
      const oldest = open.values().next().value;
      if (oldest) {
        open.delete(oldest);
        oldest.destroy();
      }
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return server;
}

/** How the keeper and certsmith name a token's host: the Challenge's dnsName, lower case, no trailing dot. */
export function servedHost(dnsName: string): string {
  return dnsName.toLowerCase().replace(/\.$/, '');
}
