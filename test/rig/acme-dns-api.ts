// A loopback stand-in for an acme-dns server's update API, as its README documents it
// (https://github.com/joohoi/acme-dns#update-endpoint): POST /update with X-Api-User and X-Api-Key,
// body {"subdomain", "txt"}; 200 {"txt"} on success, 401 {"error": "forbidden"} for a wrong user
// or key, 401 {"error": "bad_subdomain"} for another account's subdomain, 400 {"error": "bad_txt"}
// for a value that is not 43 characters. It keeps the two latest values per account and publishes
// them at the account's fulldomain in pebble-challtestsrv.
// acme-dns itself never throttles; deployments that do put a reverse proxy in front (nginx
// limit_req with `limit_req_status 429`, https://nginx.org/en/docs/http/ngx_http_limit_req_module.html),
// so `throttle(n, seconds)` answers the next n requests as such a proxy would: 429 Too Many Requests
// (RFC 6585 section 4) with Retry-After (RFC 9110 section 10.2.3) and a body that is not acme-dns's JSON.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';

export interface AcmeDNSAccountJSON {
  username: string;
  password: string;
  fulldomain: string;
  subdomain: string;
  allowfrom: string[];
}

export interface AcmeDNSAPI {
  url: string;
  /** what `acme-dns register` would have returned */
  register(): AcmeDNSAccountJSON;
  /** latest values per subdomain */
  values: Map<string, string[]>;
  /** at: when the answer was sent (ms since the epoch) */
  requests: { path: string; status: number; at: number }[];
  /** the next n requests are answered 429 with Retry-After: seconds */
  throttle(n: number, seconds?: number): void;
  stop(): Promise<void>;
}

export async function startAcmeDNSAPI(opts: { authDomain: string; challtestsrv: ChallTestSrv }): Promise<AcmeDNSAPI> {
  const accounts = new Map<string, AcmeDNSAccountJSON>();
  const values = new Map<string, string[]>();
  const requests: AcmeDNSAPI['requests'] = [];
  let throttled = 0;
  let throttleSeconds = 1;
  const send = (res: http.ServerResponse, path: string, status: number, body: unknown) => {
    requests.push({ path, status, at: Date.now() });
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => void (async () => {
      const path = req.url ?? '/';
      if (throttled > 0) {
        throttled--;
        requests.push({ path, status: 429, at: Date.now() });
        res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(throttleSeconds) });
        return res.end('Too Many Requests');
      }
      if (req.method !== 'POST' || path !== '/update') return send(res, path, 404, { error: 'not_found' });
      const account = accounts.get(String(req.headers['x-api-user'] ?? ''));
      if (!account || req.headers['x-api-key'] !== account.password) return send(res, path, 401, { error: 'forbidden' });
      let b: { subdomain?: string; txt?: string };
      try {
        b = JSON.parse(body);
      } catch {
        return send(res, path, 400, { error: 'malformed_json_payload' });
      }
      if (b.subdomain !== account.subdomain) return send(res, path, 401, { error: 'bad_subdomain' });
      if (typeof b.txt !== 'string' || b.txt.length !== 43) return send(res, path, 400, { error: 'bad_txt' });
      const kept = [...(values.get(account.subdomain) ?? []), b.txt].slice(-2);
      values.set(account.subdomain, kept);
      await opts.challtestsrv.clearTXT(account.fulldomain);
      for (const v of kept) await opts.challtestsrv.setTXT(account.fulldomain, v);
      return send(res, path, 200, { txt: b.txt });
    })().catch((e) => send(res, req.url ?? '/', 500, { error: String(e) })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    register() {
      const subdomain = crypto.randomUUID();
      const a = { username: crypto.randomUUID(), password: crypto.randomBytes(30).toString('base64url').slice(0, 40), fulldomain: `${subdomain}.${opts.authDomain}`, subdomain, allowfrom: [] };
      accounts.set(a.username, a);
      return a;
    },
    values,
    requests,
    throttle(n, seconds = 1) {
      throttled = n;
      throttleSeconds = seconds;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
