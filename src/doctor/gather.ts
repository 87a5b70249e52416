// The network side of `certsmith doctor`: DNS queries (node:dns, as the DNS-01 self-check does),
// HTTP fetches of challenge URLs, and the ACME directory. Each function returns facts for the
// pure checks in checks/; none of them decides anything.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupOutcome } from './checks/resolution.ts';
import type { HTTPOutcome } from './checks/http01.ts';
import type { CAALookup, CAARecord } from './checks/caa.ts';
import { caaClimb } from './checks/caa.ts';
import type { TXTVisibility } from './checks/txt.ts';
import { checkDNS01 } from '../shared/dns01-selfcheck.ts';

function resolverFor(servers: string[], timeoutMs: number): dns.promises.Resolver {
  const r = new dns.promises.Resolver({ timeout: timeoutMs, tries: 1 });
  r.setServers(servers);
  return r;
}

const code = (e: unknown) => (e as { code?: string }).code ?? (e as Error).message;
const absent = (c: string) => c === dns.NODATA || c === dns.NOTFOUND;

export async function lookupAddresses(name: string, servers: string[], timeoutMs: number): Promise<LookupOutcome> {
  const r = resolverFor(servers, timeoutMs);
  const [v4, v6] = await Promise.allSettled([r.resolve4(name), r.resolve6(name)]);
  const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
  if (addresses.length) return { name, addresses, servers };
  // the IPv4 answer says most (challtestsrv and many zones have no AAAA at all)
  const reason = v4.status === 'rejected' ? code(v4.reason) : v6.status === 'rejected' ? code(v6.reason) : dns.NODATA;
  return { name, addresses: [], error: reason, servers };
}

export async function lookupCAA(name: string, servers: string[], timeoutMs: number): Promise<CAALookup[]> {
  const r = resolverFor(servers, timeoutMs);
  const out: CAALookup[] = [];
  for (const domain of caaClimb(name)) {
    try {
      const records: CAARecord[] = (await r.resolveCaa(domain)).map((rec) => {
        const { critical, ...rest } = rec as unknown as Record<string, string | number>;
        const [tag, value] = Object.entries(rest)[0] ?? ['', ''];
        return { flags: Number(critical) || 0, tag, value: String(value) };
      });
      out.push({ domain, records });
      if (records.length) break;
    } catch (e) {
      const c = code(e);
      if (absent(c)) {
        out.push({ domain, records: [] });
        continue;
      }
      out.push({ domain, records: [], error: c });
      break;
    }
  }
  return out;
}

/** GETs the challenge URL from this host as the CA would: the name's first address, port, Host header. */
export function fetchChallenge(name: string, address: string, port: number, token: string, timeoutMs: number): Promise<HTTPOutcome> {
  return new Promise((resolve) => {
    const req = http.request({
      host: address, port, path: `/.well-known/acme-challenge/${token}`, method: 'GET', agent: false,
      headers: { host: port === 80 ? name : `${name}:${port}`, 'user-agent': 'certsmith-doctor' }, timeout: timeoutMs,
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        // a challenge answer is short; read no more than enough to quote it
        if (body.length < 4096) body += d;
      });
      res.on('end', () => resolve({
        kind: 'answered', address, port, status: res.statusCode ?? 0, body,
        ...(typeof res.headers.server === 'string' ? { server: res.headers.server } : {}),
        ...(typeof res.headers.location === 'string' ? { location: res.headers.location } : {}),
      }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', (e) => resolve({ kind: 'failed', address, port, code: code(e) }));
    req.end();
  });
}

/** meta.caaIdentities of the ACME directory; throws with a sentence when it cannot be read. */
export function fetchCAAIdentities(directoryUrl: string, caPem: string | undefined, skipTLSVerify: boolean, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const u = new URL(directoryUrl);
    const get = u.protocol === 'https:' ? https.get : http.get;
    const req = get(u, { agent: false, timeout: timeoutMs, ...(u.protocol === 'https:' ? { ca: caPem, rejectUnauthorized: !skipTLSVerify } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${directoryUrl}: HTTP ${res.statusCode}`));
        try {
          const ids = (JSON.parse(body) as { meta?: { caaIdentities?: unknown } }).meta?.caaIdentities;
          resolve(Array.isArray(ids) ? ids.filter((i): i is string => typeof i === 'string') : []);
        } catch {
          reject(new Error(`GET ${directoryUrl}: not JSON`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${directoryUrl}: timed out`)));
    req.on('error', (e) => reject(new Error(`GET ${directoryUrl}: ${e.message}`)));
  });
}

/** What the DNS-01 self-check sees: the same checkDNS01 the controller runs, kept per server. */
export async function txtVisibility(fqdn: string, expected: string, where: TXTVisibility['where'], servers: string[], authoritativePort: number): Promise<TXTVisibility> {
  const r = await checkDNS01({ fqdn, value: expected, nameservers: servers, authoritativeOnly: where === 'authoritative', authoritativePort });
  // checkDNS01 reports a lookup that failed (rather than a value that differs) as "DNS lookup of ..."
  const failed = !r.ok && r.reason?.startsWith('DNS lookup of');
  return { fqdn, expected, where, seen: r.seen, ...(failed ? { error: r.reason!.replace(/^DNS lookup of \S+: /, '') } : {}) };
}
