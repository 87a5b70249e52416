// A loopback stand-in for DigitalOcean's API v2 Domains and Domain Records, following the
// documented requests and responses:
//   https://docs.digitalocean.com/reference/api/digitalocean/#tag/Domains          GET /v2/domains/{domain_name}
//   https://docs.digitalocean.com/reference/api/digitalocean/#tag/Domain-Records   GET/POST /v2/domains/{domain_name}/records, DELETE .../{record_id}
//   https://docs.digitalocean.com/reference/api/digitalocean/#section/Introduction/Authentication   Authorization: Bearer <token>
//   https://docs.digitalocean.com/reference/api/digitalocean/#section/Introduction/Rate-Limit       429, RateLimit-Reset
// Errors are DigitalOcean's {id, message} bodies (401 unauthorized, 404 not_found, 422
// unprocessable_entity). The record list filter `name` takes the full name, records carry names
// relative to the domain. TXT records are written through to pebble-challtestsrv.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';

export interface DORecord {
  id: number;
  domain: string;
  type: string;
  name: string;
  data: string;
  ttl: number;
}

export interface DigitalOceanAPI {
  url: string;
  records: DORecord[];
  requests: { method: string; path: string; authorized: boolean }[];
  /** the next n requests get 429 with RateLimit-Reset `seconds` ahead (DigitalOcean sends no Retry-After) */
  throttle(n: number, seconds?: number): void;
  addRecord(domain: string, r: { type: string; name: string; data: string }): DORecord;
  stop(): Promise<void>;
}

export async function startDigitalOceanAPI(opts: { domains: string[]; token: string; challtestsrv: ChallTestSrv }): Promise<DigitalOceanAPI> {
  const records: DORecord[] = [];
  const requests: DigitalOceanAPI['requests'] = [];
  let nextId = 1000;
  let throttled = 0;
  let throttleSeconds = 1;
  const fqdn = (r: DORecord) => (r.name === '@' ? r.domain : `${r.name}.${r.domain}`);
  const sync = async (name: string) => {
    await opts.challtestsrv.clearTXT(name);
    for (const r of records.filter((x) => x.type === 'TXT' && fqdn(x) === name)) await opts.challtestsrv.setTXT(name, r.data);
  };
  const addRecord = (domain: string, r: { type: string; name: string; data: string; ttl?: number }) => {
    const rec = { id: nextId++, domain, ttl: 1800, ...r };
    records.push(rec);
    return rec;
  };
  const send = (res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, status: number, id: string, message: string, headers: Record<string, string> = {}) => send(res, status, { id, message }, headers);

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    const authorized = req.headers.authorization === `Bearer ${opts.token}`;
    requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, authorized });
    if (throttled > 0) {
      throttled--;
      return error(res, 429, 'too_many_requests', 'API Rate limit exceeded.', { 'ratelimit-limit': '5000', 'ratelimit-remaining': '0', 'ratelimit-reset': String(Math.ceil(Date.now() / 1000) + throttleSeconds) });
    }
    if (!authorized) return error(res, 401, 'Unauthorized', 'Unable to authenticate you');
    const m = /^\/v2\/domains\/([^/]+)(?:\/records(?:\/(\d+))?)?$/.exec(url.pathname);
    const domain = m && opts.domains.find((d) => d === decodeURIComponent(m[1]));
    if (!m || !domain) return error(res, 404, 'not_found', 'The resource you were accessing could not be found.');
    const isRecords = url.pathname.includes('/records');
    if (req.method === 'GET' && !isRecords) return send(res, 200, { domain: { name: domain, ttl: 1800, zone_file: '' } });
    if (req.method === 'GET' && !m[2]) {
      const type = url.searchParams.get('type');
      const name = url.searchParams.get('name');
      const list = records.filter((r) => r.domain === domain && (!type || r.type === type) && (!name || fqdn(r) === name));
      return send(res, 200, { domain_records: list, links: {}, meta: { total: list.length } });
    }
    if (req.method === 'POST' && !m[2]) {
      let b: { type?: string; name?: string; data?: string; ttl?: number };
      try {
        b = JSON.parse(body);
      } catch {
        return error(res, 400, 'bad_request', 'unexpected end of JSON input');
      }
      if (!b.type || !b.name || !b.data) return error(res, 422, 'unprocessable_entity', 'Name, type and data are required');
      if (b.name.endsWith('.')) return error(res, 422, 'unprocessable_entity', 'Name must be relative to the domain');
      const rec = addRecord(domain, { type: b.type, name: b.name, data: b.data, ttl: b.ttl ?? 1800 });
      if (rec.type === 'TXT') await sync(fqdn(rec));
      return send(res, 201, { domain_record: rec });
    }
    if (req.method === 'DELETE' && m[2]) {
      const i = records.findIndex((r) => r.domain === domain && r.id === Number(m[2]));
      if (i < 0) return error(res, 404, 'not_found', 'The resource you were accessing could not be found.');
      const [rec] = records.splice(i, 1);
      if (rec.type === 'TXT') await sync(fqdn(rec));
      return send(res, 204);
    }
    return error(res, 405, 'method_not_allowed', 'Method not allowed');
  }

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => void handle(req, res, body).catch((e) => error(res, 500, 'server_error', String(e))));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    records,
    requests,
    throttle(n, seconds = 1) {
      throttled = n;
      throttleSeconds = seconds;
    },
    addRecord,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
