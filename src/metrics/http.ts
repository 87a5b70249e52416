// The operational endpoints, on cert-manager's ports by default: metrics on 9402 and the
// health probes (/healthz, /livez, /readyz) on 9403.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface OperationalServersOptions {
  /** host:port; port 0 picks a free port */
  metricsAddress?: string;
  healthAddress?: string;
  registry: Registry;
  /** /readyz answers 200 while this returns true, 503 otherwise */
  ready: () => boolean;
}

export interface OperationalServers {
  /** the bound addresses, host:port, with the real port when 0 was asked for */
  metricsAddress: string;
  healthAddress: string;
  close(): Promise<void>;
}

function parseAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  if (i < 0) throw new Error(`address ${JSON.stringify(address)} is not host:port`);
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`address ${JSON.stringify(address)} has no valid port`);
  return { host, port };
}

async function listen(server: Server, address: string): Promise<string> {
  const { host, port } = parseAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  const bound = server.address() as AddressInfo;
  return bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startOperationalServers(opts: OperationalServersOptions): Promise<OperationalServers> {
  const metrics = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') { res.writeHead(404).end('not found\n'); return; }
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405).end(); return; }
    opts.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${err.message}\n`),
    );
  });
  const health = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (ok: boolean) => res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'not ready');
    if (path === '/healthz' || path === '/livez') answer(true);
    else if (path === '/readyz') {
      let ok = false;
      try { ok = opts.ready(); } catch {}
      answer(ok);
    } else res.writeHead(404).end('not found\n');
  });
  try {
    const metricsAddress = await listen(metrics, opts.metricsAddress ?? '127.0.0.1:9402');
    const healthAddress = await listen(health, opts.healthAddress ?? '127.0.0.1:9403');
    return { metricsAddress, healthAddress, close: async () => { await Promise.all([close(metrics), close(health)]); } };
  } catch (err) {
    await Promise.all([metrics.listening ? close(metrics) : undefined, health.listening ? close(health) : undefined]);
    throw err;
  }
}
