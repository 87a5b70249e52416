import http from 'node:http';
import net from 'node:net';
import dns from 'node:dns';
import { challengeServer, LISTENER_GUARD, servedHost, type ListenerGuard, type ServedToken } from './http01-listener.ts';

export interface HTTP01Server {
  port: number;
  /**
   * Serves a token's key authorization, for requests to `host` only when it is given (the
   * Challenge's dnsName); resolves once it is served (the keeper process acknowledges; in process at once)
   */
  present(token: string, keyAuth: string, host?: string): void | Promise<void>;
  cleanUp(token: string): void | Promise<void>;
  close(): Promise<void>;
}

/** The in-process HTTP-01 responder of the embedded server (`--acme-http01-listen`). */
export function startHTTP01Server(opts: { host: string; port: number; guard?: ListenerGuard }): Promise<HTTP01Server> {
  const tokens = new Map<string, ServedToken>();
  const server = challengeServer(http, tokens, opts.guard ?? LISTENER_GUARD);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as net.AddressInfo).port,
        present: (token, keyAuth, host) => void tokens.set(token, { keyAuth, ...(host === undefined ? {} : { host: servedHost(host) }) }),
        cleanUp: (token) => void tokens.delete(token),
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}

export interface SelfCheckResult {
  ok: boolean;
  /** Why the check failed, for Challenge.status.reason. */
  reason?: string;
}

async function resolveAddress(name: string, nameservers?: string[]): Promise<string> {
  const bare = name.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return bare;
  if (!nameservers?.length) return (await dns.promises.lookup(name)).address;
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers(nameservers);
  const v4 = await resolver.resolve4(name).catch(() => [] as string[]);
  if (v4.length) return v4[0];
  const v6 = await resolver.resolve6(name).catch(() => [] as string[]);
  if (v6.length) return v6[0];
  throw new Error(`no A or AAAA record for ${name} via ${nameservers.join(', ')}`);
}

/**
 * Fetches http://<dnsName>:<port>/.well-known/acme-challenge/<token> as the ACME server would and compares
 * the body with keyAuth. With nameservers, dnsName is resolved through them instead of the system resolver.
 */
export async function selfCheckHTTP01(opts: {
  dnsName: string;
  token: string;
  keyAuth: string;
  port: number;
  nameservers?: string[];
  timeoutMs?: number;
}): Promise<SelfCheckResult> {
  const url = `http://${opts.dnsName}:${opts.port}/.well-known/acme-challenge/${opts.token}`;
  let address: string;
  try {
    address = await resolveAddress(opts.dnsName, opts.nameservers);
  } catch (e) {
    return { ok: false, reason: `resolving ${opts.dnsName}: ${(e as Error).message}` };
  }
  return new Promise((resolve) => {
    const req = http.get(
      {
        host: address,
        port: opts.port,
        path: `/.well-known/acme-challenge/${opts.token}`,
        headers: { host: net.isIPv6(opts.dnsName) ? `[${opts.dnsName}]:${opts.port}` : `${opts.dnsName}:${opts.port}` },
        agent: false,
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          if (body.length < 64 * 1024) body += d;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) resolve({ ok: false, reason: `GET ${url}: HTTP ${res.statusCode}` });
          else if (body !== opts.keyAuth) resolve({ ok: false, reason: `GET ${url}: the body does not match the key authorization` });
          else resolve({ ok: true });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ ok: false, reason: `GET ${url}: ${e.message}` }));
  });
}
