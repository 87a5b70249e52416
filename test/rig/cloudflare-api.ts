// A loopback stand-in for Cloudflare's API v4, for the parts a DNS-01 solver uses, following the
// documented requests and responses:
//   https://developers.cloudflare.com/api/resources/zones/methods/list/            GET  /zones?name=&status=
//   https://developers.cloudflare.com/api/resources/dns/subresources/records/      GET/POST /zones/{zone_id}/dns_records, DELETE .../{dns_record_id}
//   https://developers.cloudflare.com/fundamentals/api/get-started/create-token/   Authorization: Bearer <token>
//   https://developers.cloudflare.com/fundamentals/api/get-started/keys/           X-Auth-Email + X-Auth-Key (global API key)
//   https://developers.cloudflare.com/fundamentals/api/reference/limits/           429 with Retry-After
// Every answer is the v4 envelope {success, errors: [{code, message}], messages, result}. Auth is
// checked on every request. TXT records are written through to pebble-challtestsrv, so Pebble's
// validation sees exactly what the API holds: the value content stands for, content being quoted
// RFC 1035 character-strings as documented, or the value itself when written unquoted.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';
import { txtValue } from '../../src/controllers/acme/solvers/dns01/txt-rdata.ts';

export interface CloudflareRecord {
  id: string;
  zone_id: string;
  type: string;
  name: string;
  content: string;
  ttl: number;
}

export interface CloudflareAPI {
  /** base URL, as https://api.cloudflare.com/client/v4 */
  url: string;
  records: CloudflareRecord[];
  /** every record created through the API, with its zone's name, deleted ones included */
  created: (CloudflareRecord & { zone: string })[];
  /** every request: method, path with query, and which credential it carried */
  requests: { method: string; path: string; auth: 'token' | 'key' | 'none' }[];
  /** the next n requests are answered 429 with Retry-After: seconds */
  throttle(n: number, seconds?: number): void;
  addRecord(zoneName: string, r: { type: string; name: string; content: string }): CloudflareRecord;
  /** names whose TXT records the API accepts but never publishes (so validation fails) */
  unpublished: Set<string>;
  stop(): Promise<void>;
}

export async function startCloudflareAPI(opts: {
  zones: string[];
  token?: string;
  apiKey?: { key: string; email: string };
  challtestsrv: ChallTestSrv;
}): Promise<CloudflareAPI> {
  const zones = opts.zones.map((name) => ({ id: crypto.randomBytes(16).toString('hex'), name, status: 'active' }));
  const records: CloudflareRecord[] = [];
  const created: CloudflareAPI['created'] = [];
  const requests: CloudflareAPI['requests'] = [];
  let throttled = 0;
  let throttleSeconds = 1;
  const unpublished = new Set<string>();

  const send = (res: http.ServerResponse, status: number, result: unknown, errors: { code: number; message: string }[] = [], headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ success: errors.length === 0, errors, messages: [], result: errors.length ? null : result }));
  };
  // challtestsrv serves every value added for a host; rewrite the host's set from what the API holds
  const sync = async (name: string) => {
    if (unpublished.has(name)) return;
    await opts.challtestsrv.clearTXT(name);
    for (const r of records.filter((x) => x.type === 'TXT' && x.name === name)) await opts.challtestsrv.setTXT(name, txtValue(r.content));
  };
  const addRecord = (zoneName: string, r: { type: string; name: string; content: string; ttl?: number }) => {
    const zone = zones.find((z) => z.name === zoneName)!;
    const rec = { id: crypto.randomBytes(16).toString('hex'), zone_id: zone.id, ttl: 1, ...r };
    records.push(rec);
    return rec;
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      void handle(req, res, body).catch((e) => send(res, 500, null, [{ code: 10000, message: String(e) }]));
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.replace(/^\/client\/v4/, '');
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const key = req.headers['x-auth-key'];
    const email = req.headers['x-auth-email'];
    requests.push({ method: req.method ?? '', path: `${path}${url.search}`, auth: bearer ? 'token' : key ? 'key' : 'none' });
    if (throttled > 0) {
      throttled--;
      return send(res, 429, null, [{ code: 971, message: 'Please wait and consider throttling your request speed' }], { 'retry-after': String(throttleSeconds) });
    }
    if (bearer !== undefined) {
      if (!opts.token || bearer !== opts.token) return send(res, 403, null, [{ code: 9109, message: 'Invalid access token' }]);
    } else if (key !== undefined || email !== undefined) {
      if (!opts.apiKey || key !== opts.apiKey.key || email !== opts.apiKey.email) return send(res, 403, null, [{ code: 9103, message: 'Unknown X-Auth-Key or X-Auth-Email' }]);
    } else {
      return send(res, 400, null, [{ code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' }]);
    }

    if (req.method === 'GET' && path === '/zones') {
      const name = url.searchParams.get('name');
      const status = url.searchParams.get('status');
      return send(res, 200, zones.filter((z) => (!name || z.name === name) && (!status || z.status === status)));
    }
    const m = /^\/zones\/([0-9a-f]+)\/dns_records(?:\/([0-9a-f]+))?$/.exec(path);
    const zone = m && zones.find((z) => z.id === m[1]);
    if (!m || !zone) return send(res, 404, null, [{ code: 7003, message: 'Could not route to ' + path + ', perhaps your object identifier is invalid?' }]);
    if (req.method === 'GET' && !m[2]) {
      const q = url.searchParams;
      return send(res, 200, records.filter((r) => r.zone_id === zone.id && (!q.get('type') || r.type === q.get('type')) && (!q.get('name') || r.name === q.get('name')) && (!q.get('content') || r.content === q.get('content'))));
    }
    if (req.method === 'POST' && !m[2]) {
      let b: { type?: string; name?: string; content?: string; ttl?: number };
      try {
        b = JSON.parse(body);
      } catch {
        return send(res, 400, null, [{ code: 9207, message: 'Request body is invalid.' }]);
      }
      if (!b.type || !b.name || b.content === undefined) return send(res, 400, null, [{ code: 9000, message: 'DNS name, type and content are required' }]);
      if (b.name !== zone.name && !b.name.endsWith(`.${zone.name}`)) return send(res, 400, null, [{ code: 9005, message: 'Content for name is not in the zone' }]);
      if (records.some((r) => r.zone_id === zone.id && r.type === b.type && r.name === b.name && r.content === b.content)) {
        return send(res, 400, null, [{ code: 81058, message: 'An identical record already exists.' }]);
      }
      const rec = addRecord(zone.name, { type: b.type, name: b.name, content: b.content, ttl: b.ttl ?? 1 });
      created.push({ ...rec, zone: zone.name });
      if (rec.type === 'TXT') await sync(rec.name);
      return send(res, 200, rec);
    }
    if (req.method === 'DELETE' && m[2]) {
      const i = records.findIndex((r) => r.zone_id === zone.id && r.id === m[2]);
      if (i < 0) return send(res, 404, null, [{ code: 81044, message: 'Record does not exist.' }]);
      const [rec] = records.splice(i, 1);
      if (rec.type === 'TXT') await sync(rec.name);
      return send(res, 200, { id: rec.id });
    }
    return send(res, 405, null, [{ code: 10000, message: 'Method not allowed' }]);
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/client/v4`,
    records,
    requests,
    created,
    throttle(n, seconds = 1) {
      throttled = n;
      throttleSeconds = seconds;
    },
    addRecord,
    unpublished,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
