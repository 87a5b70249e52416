// A loopback stand-in for Akamai Edge DNS (Config DNS API v2), authenticating every request with
// EdgeGrid v1 the way Akamai's API gateway does, following the documentation:
//   https://techdocs.akamai.com/developer/docs/authenticate-with-edgegrid
//     Authorization: EG1-HMAC-SHA256 client_token=..;access_token=..;timestamp=yyyyMMddTHH:mm:ss+0000;nonce=..;signature=..
//     signing key = base64(HMAC-SHA256(key = client_secret, timestamp))
//     data to sign = METHOD \t scheme \t host \t path?query \t canonical headers \t content hash \t auth header without signature
//     content hash = base64(SHA-256(POST body, first max-body bytes)), empty for other methods
//     signature = base64(HMAC-SHA256(key = signing key, data to sign))
//   https://techdocs.akamai.com/edge-dns/reference/get-zone                                   GET    /config-dns/v2/zones/{zone}
//   https://techdocs.akamai.com/edge-dns/reference/get-zones-zone-names-name-types-type       GET    /config-dns/v2/zones/{zone}/names/{name}/types/{type}
//   https://techdocs.akamai.com/edge-dns/reference/post-zones-zone-names-name-types-type      POST   (409 when it exists)
//   https://techdocs.akamai.com/edge-dns/reference/put-zones-zone-names-name-types-type       PUT    (404 when it does not)
//   https://techdocs.akamai.com/edge-dns/reference/delete-zones-zone-names-name-types-type    DELETE (204)
//   https://techdocs.akamai.com/developer/docs/rate-limiting                                  429
// Errors are problem documents (application/problem+json: type, title, detail, status). The
// signature is recomputed here from the algorithm above, independently of the client's code; a
// bad signature, an unknown client/access token, a timestamp more than 30 s off, a reused nonce
// and a POST body whose hash does not match are refused (401). TXT values are written through to
// pebble-challtestsrv.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';

export interface AkamaiRecordSet {
  name: string;
  type: string;
  ttl: number;
  rdata: string[];
}

export interface AkamaiAPI {
  url: string;
  /** record sets by `${zone}/${name}/${type}` */
  recordSets: Map<string, AkamaiRecordSet>;
  requests: { method: string; path: string; authorized: boolean; refusal?: string }[];
  throttle(n: number, retryAfterSeconds?: number): void;
  putRecordSet(zone: string, rs: AkamaiRecordSet): Promise<void>;
  stop(): Promise<void>;
}

export interface AkamaiCredentialsForRig {
  clientToken: string;
  clientSecret: string;
  accessToken: string;
}

const MAX_BODY = 131072;
const b64hmac = (key: string, data: string) => crypto.createHmac('sha256', key).update(data).digest('base64');

/** The timestamp's time in ms, or NaN when it is not yyyyMMddTHH:mm:ss+0000. */
function parseTimestamp(t: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2}):(\d{2}):(\d{2})\+0000$/.exec(t);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
}

export async function startAkamaiAPI(opts: {
  zones: string[];
  credentials: AkamaiCredentialsForRig;
  challtestsrv: ChallTestSrv;
  /**
   * The origin the client signs for (e.g. https://akab-test.luna.akamaiapis.net) when its requests
   * reach the rig redirected (test/rig/fetch-redirect.ts): the signature covers that scheme and
   * host, not the rig's. Default: plain http and the request's own Host, as when the client is
   * handed the rig's URL.
   */
  signedFor?: string;
}): Promise<AkamaiAPI> {
  const signedFor = opts.signedFor === undefined ? undefined : new URL(opts.signedFor);
  const recordSets = new Map<string, AkamaiRecordSet>();
  const requests: AkamaiAPI['requests'] = [];
  const nonces = new Set<string>();
  let throttled = 0;
  let throttleSeconds = 1;
  const txtValue = (r: string) => [...r.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]).join('');
  const sync = async (name: string) => {
    await opts.challtestsrv.clearTXT(name);
    for (const [k, rs] of recordSets) if (k.endsWith(`/${name}/TXT`)) for (const r of rs.rdata) await opts.challtestsrv.setTXT(name, txtValue(r));
  };
  const send = (res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const problem = (res: http.ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}) =>
    send(res, status, { type: `https://problems.luna.akamaiapis.net/-/${title.toLowerCase().replace(/\s+/g, '-')}`, title, detail, status }, headers);

  /** Why the request's EdgeGrid authorization is refused, or undefined when it is valid. */
  function refusal(req: http.IncomingMessage, body: string): string | undefined {
    const h = req.headers.authorization ?? '';
    const m = /^EG1-HMAC-SHA256 (.*)$/.exec(h);
    if (!m) return 'not an EG1-HMAC-SHA256 authorization';
    const fields = new Map(m[1].split(';').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]));
    const c = opts.credentials;
    if (fields.get('client_token') !== c.clientToken || fields.get('access_token') !== c.accessToken) return 'invalid client or access token';
    const ts = fields.get('timestamp') ?? '';
    const at = parseTimestamp(ts);
    if (Number.isNaN(at)) return 'malformed timestamp';
    if (Math.abs(Date.now() - at) > 30_000) return 'timestamp out of the allowed window';
    const nonce = fields.get('nonce') ?? '';
    if (!nonce) return 'missing nonce';
    if (nonces.has(nonce)) return 'nonce reused';
    const unsigned = h.slice(0, h.indexOf('signature='));
    const contentHash = req.method === 'POST' && body ? crypto.createHash('sha256').update(Buffer.from(body).subarray(0, MAX_BODY)).digest('base64') : '';
    const scheme = signedFor ? signedFor.protocol.replace(':', '') : 'http';
    const host = signedFor ? signedFor.host : req.headers.host ?? '';
    const data = [req.method, scheme, host, req.url ?? '', '', contentHash, unsigned].join('\t');
    const want = b64hmac(b64hmac(c.clientSecret, ts), data);
    const got = fields.get('signature') ?? '';
    if (got.length !== want.length || !crypto.timingSafeEqual(Buffer.from(got), Buffer.from(want))) return 'signature does not match';
    nonces.add(nonce);
    return undefined;
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    const why = refusal(req, body);
    requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, authorized: !why, refusal: why });
    if (throttled > 0) {
      throttled--;
      return problem(res, 429, 'Too Many Requests', 'The rate limit for this API client has been exceeded.', { 'retry-after': String(throttleSeconds) });
    }
    if (why) return problem(res, 401, 'Not authorized', `The signature does not match: ${why}`);
    const zm = /^\/config-dns\/v2\/zones\/([^/]+)(?:\/names\/([^/]+)\/types\/([^/]+))?$/.exec(url.pathname);
    const zone = zm && opts.zones.find((z) => z === decodeURIComponent(zm[1]).toLowerCase());
    if (!zm || !zone) return problem(res, 404, 'Not Found', `Zone "${zm ? decodeURIComponent(zm[1]) : ''}" does not exist`);
    if (!zm[2]) {
      if (req.method !== 'GET') return problem(res, 405, 'Method Not Allowed', 'Method not allowed');
      return send(res, 200, { zone, type: 'PRIMARY', signAndServe: false, activationState: 'ACTIVE' });
    }
    const name = decodeURIComponent(zm[2]).toLowerCase();
    const type = decodeURIComponent(zm[3]).toUpperCase();
    if (name !== zone && !name.endsWith(`.${zone}`)) return problem(res, 400, 'Bad Request', `Record name ${name} is not in zone ${zone}`);
    const key = `${zone}/${name}/${type}`;
    const cur = recordSets.get(key);
    if (req.method === 'GET') return cur ? send(res, 200, cur) : problem(res, 404, 'Not Found', `Record set ${name} ${type} does not exist`);
    if (req.method === 'DELETE') {
      if (!cur) return problem(res, 404, 'Not Found', `Record set ${name} ${type} does not exist`);
      recordSets.delete(key);
      if (type === 'TXT') await sync(name);
      return send(res, 204);
    }
    if (req.method === 'POST' || req.method === 'PUT') {
      let b: Partial<AkamaiRecordSet>;
      try {
        b = JSON.parse(body) as Partial<AkamaiRecordSet>;
      } catch {
        return problem(res, 400, 'Bad Request', 'Malformed JSON');
      }
      if (b.name?.toLowerCase() !== name || b.type?.toUpperCase() !== type || typeof b.ttl !== 'number' || !Array.isArray(b.rdata) || !b.rdata.length) {
        return problem(res, 400, 'Bad Request', 'name and type must match the URL; ttl and a non-empty rdata are required');
      }
      if (type === 'TXT' && b.rdata.some((r) => !/^"/.test(r))) return problem(res, 400, 'Bad Request', 'TXT rdata must be quoted character-strings');
      if (req.method === 'POST' && cur) return problem(res, 409, 'Conflict', `Record set ${name} ${type} already exists`);
      if (req.method === 'PUT' && !cur) return problem(res, 404, 'Not Found', `Record set ${name} ${type} does not exist`);
      const rs = { name, type, ttl: b.ttl, rdata: b.rdata };
      recordSets.set(key, rs);
      if (type === 'TXT') await sync(name);
      return send(res, req.method === 'POST' ? 201 : 200, rs);
    }
    return problem(res, 405, 'Method Not Allowed', 'Method not allowed');
  }

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => void handle(req, res, body).catch((e) => problem(res, 500, 'Internal Server Error', String(e))));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    recordSets,
    requests,
    throttle(n, seconds = 1) {
      throttled = n;
      throttleSeconds = seconds;
    },
    async putRecordSet(zone, rs) {
      recordSets.set(`${zone}/${rs.name}/${rs.type}`, rs);
      if (rs.type === 'TXT') await sync(rs.name);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
