// A loopback stand-in for Google's OAuth 2.0 token endpoint and the Cloud DNS API v1, for the
// parts a DNS-01 solver uses, following the documented requests, responses and errors:
//   https://developers.google.com/identity/protocols/oauth2/service-account#httprest   POST token_uri, grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer, RS256 JWT assertion
//   https://cloud.google.com/compute/docs/access/authenticate-workloads#applications  GET /computeMetadata/v1/instance/service-accounts/default/token (Metadata-Flavor: Google)
//   https://cloud.google.com/dns/docs/reference/rest/v1/managedZones/get              GET  /dns/v1/projects/{project}/managedZones/{managedZone}
//   https://cloud.google.com/dns/docs/reference/rest/v1/managedZones/list             GET  /dns/v1/projects/{project}/managedZones?dnsName=
//   https://cloud.google.com/dns/docs/reference/rest/v1/resourceRecordSets/list       GET  .../managedZones/{managedZone}/rrsets?name=&type=
//   https://cloud.google.com/dns/docs/reference/rest/v1/changes/create                POST .../managedZones/{managedZone}/changes (deletions must match exactly)
//   https://cloud.google.com/dns/docs/reference/rest/v1/changes/get                   GET  .../managedZones/{managedZone}/changes/{changeId}
//   https://cloud.google.com/apis/design/errors                                        {error: {code, message, errors: [{domain, reason, message}], status}}
// The assertion's signature is verified with the service account's public key, its iss, aud and
// scope checked; the API takes only bearer tokens this server issued. A change is "pending" when
// created and "done" at the next look. TXT values are written through to pebble-challtestsrv.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';

export interface RRSet {
  name: string;
  type: string;
  ttl: number;
  rrdatas: string[];
}

export interface CloudDNSAPI {
  /** API base URL, as https://dns.googleapis.com */
  url: string;
  /** the token endpoint, a service account key's token_uri */
  tokenUri: string;
  /** zone name → its rrsets */
  rrsets: Map<string, RRSet[]>;
  /** every request: method, path with query, and whether it carried a token this server issued */
  requests: { method: string; path: string; authorized: boolean }[];
  /** the changes created, in order */
  changes: { zone: string; additions: RRSet[]; deletions: RRSet[] }[];
  /** a service account key JSON this server accepts (its private key signs the assertion) */
  serviceAccountKey(email?: string): string;
  /** the next n API requests are answered 429 with Retry-After: seconds */
  throttle(n: number, seconds?: number): void;
  /** token exchanges answered (granted or refused) */
  tokenRequests: number;
  /** names (with the trailing dot) whose rrsets the API accepts but never publishes, so validation fails */
  unpublished: Set<string>;
  stop(): Promise<void>;
}

export async function startCloudDNSAPI(opts: {
  project: string;
  /** managed zones: name and dnsName (with the trailing dot) */
  zones: { name: string; dnsName: string }[];
  challtestsrv: ChallTestSrv;
}): Promise<CloudDNSAPI> {
  const accounts = new Map<string, crypto.KeyObject>();
  const issued = new Set<string>();
  const rrsets = new Map(opts.zones.map((z) => [z.name, [] as RRSet[]]));
  const changes: CloudDNSAPI['changes'] = [];
  const pending = new Map<string, { id: string; status: string; additions: RRSet[]; deletions: RRSet[]; startTime: string; kind: string }>();
  const requests: CloudDNSAPI['requests'] = [];
  let throttled = 0;
  let throttleSeconds = 1;
  let seq = 0;
  let base = '';
  let tokenRequests = 0;
  const unpublished = new Set<string>();

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    res.end(JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, code: number, status: string, reason: string, message: string, headers: Record<string, string> = {}) =>
    json(res, code, { error: { code, message, errors: [{ message, domain: 'global', reason }], status } }, headers);
  const tokenError = (res: http.ServerResponse, err: string, description: string) => json(res, 400, { error: err, error_description: description });
  const unquote = (v: string) => v.replace(/^"(.*)"$/, '$1');
  // challtestsrv serves every value added for a host; rewrite the host's set from the rrset
  const sync = async (name: string, rr: RRSet | undefined) => {
    if (unpublished.has(name)) return;
    const host = name.replace(/\.$/, '');
    await opts.challtestsrv.clearTXT(host);
    for (const v of rr?.rrdatas ?? []) await opts.challtestsrv.setTXT(host, unquote(v));
  };
  const issue = () => {
    const t = `ya29.${crypto.randomBytes(24).toString('base64url')}`;
    issued.add(t);
    return { access_token: t, expires_in: 3599, token_type: 'Bearer' };
  };

  function verifyAssertion(assertion: string): string | undefined {
    const [h, c, s] = assertion.split('.');
    if (!h || !c || !s) return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.';
    let head: { alg?: string }, claims: { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number };
    try {
      head = JSON.parse(Buffer.from(h, 'base64url').toString());
      claims = JSON.parse(Buffer.from(c, 'base64url').toString());
    } catch {
      return 'Invalid JWT: malformed.';
    }
    if (head.alg !== 'RS256') return 'Invalid JWT: unsupported algorithm.';
    const pub = claims.iss ? accounts.get(claims.iss) : undefined;
    if (!pub) return 'Invalid JWT Signature.';
    if (!crypto.verify('sha256', Buffer.from(`${h}.${c}`), pub, Buffer.from(s, 'base64url'))) return 'Invalid JWT Signature.';
    if (claims.aud !== `${base}/token`) return 'Invalid JWT: aud is not the token endpoint.';
    const now = Math.floor(Date.now() / 1000);
    if (!claims.iat || !claims.exp || claims.exp - claims.iat > 3600 || claims.exp < now || claims.iat > now + 300) return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.';
    if (!claims.scope?.split(' ').includes('https://www.googleapis.com/auth/ndev.clouddns.readwrite')) return 'Invalid JWT: missing the Cloud DNS scope.';
    return undefined;
  }

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      void handle(req, res, body).catch((e) => error(res, 500, 'INTERNAL', 'backendError', String(e)));
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/token') {
      tokenRequests++;
      const form = new URLSearchParams(body);
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return tokenError(res, 'unsupported_grant_type', 'Invalid grant_type: ' + (form.get('grant_type') ?? ''));
      const bad = verifyAssertion(form.get('assertion') ?? '');
      if (bad) return tokenError(res, 'invalid_grant', bad);
      return json(res, 200, issue());
    }
    if (req.method === 'GET' && url.pathname === '/computeMetadata/v1/instance/service-accounts/default/token') {
      if (req.headers['metadata-flavor'] !== 'Google') {
        res.writeHead(403, { 'content-type': 'text/html' });
        return res.end('Missing Metadata-Flavor:Google header.');
      }
      return json(res, 200, issue());
    }

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorized = bearer !== undefined && issued.has(bearer);
    requests.push({ method: req.method ?? '', path: `${url.pathname}${url.search}`, authorized });
    if (throttled > 0) {
      throttled--;
      return error(res, 429, 'RESOURCE_EXHAUSTED', 'rateLimitExceeded', 'Rate limit exceeded.', { 'retry-after': String(throttleSeconds) });
    }
    if (!authorized) return error(res, 401, 'UNAUTHENTICATED', 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' });

    const m = /^\/dns\/v1\/projects\/([^/]+)\/managedZones(?:\/([^/]+)(?:\/(rrsets|changes)(?:\/([^/]+))?)?)?$/.exec(url.pathname);
    if (!m) return error(res, 404, 'NOT_FOUND', 'notFound', 'Not Found');
    const [, project, zoneName, sub, id] = m.map((x) => (x === undefined ? undefined : decodeURIComponent(x)));
    if (project !== opts.project) return error(res, 403, 'PERMISSION_DENIED', 'forbidden', `Forbidden: the caller does not have permission on project ${project}`);
    if (!zoneName) {
      if (req.method !== 'GET') return error(res, 405, 'INVALID_ARGUMENT', 'badRequest', 'Method not allowed');
      const dnsName = url.searchParams.get('dnsName');
      const zs = opts.zones.filter((z) => !dnsName || z.dnsName === dnsName);
      return json(res, 200, { kind: 'dns#managedZonesListResponse', managedZones: zs.map((z, i) => ({ kind: 'dns#managedZone', name: z.name, dnsName: z.dnsName, id: String(1000 + i), visibility: 'public' })) });
    }
    const zone = opts.zones.find((z) => z.name === zoneName);
    if (!zone) return error(res, 404, 'NOT_FOUND', 'notFound', `The 'parameters.managedZone' resource named '${zoneName}' does not exist.`);
    const sets = rrsets.get(zone.name)!;
    if (!sub && req.method === 'GET') return json(res, 200, { kind: 'dns#managedZone', name: zone.name, dnsName: zone.dnsName, visibility: 'public' });
    if (sub === 'rrsets' && req.method === 'GET' && !id) {
      const name = url.searchParams.get('name');
      const type = url.searchParams.get('type');
      return json(res, 200, { kind: 'dns#resourceRecordSetsListResponse', rrsets: sets.filter((r) => (!name || r.name === name) && (!type || r.type === type)).map((r) => ({ kind: 'dns#resourceRecordSet', ...r })) });
    }
    if (sub === 'changes' && req.method === 'GET' && id) {
      const ch = pending.get(id);
      if (!ch) return error(res, 404, 'NOT_FOUND', 'notFound', `The 'parameters.changeId' resource named '${id}' does not exist.`);
      ch.status = 'done';
      return json(res, 200, ch);
    }
    if (sub === 'changes' && req.method === 'POST' && !id) {
      let b: { additions?: RRSet[]; deletions?: RRSet[] };
      try {
        b = JSON.parse(body);
      } catch {
        return error(res, 400, 'INVALID_ARGUMENT', 'parseError', 'Parse Error');
      }
      const additions = b.additions ?? [];
      const deletions = b.deletions ?? [];
      const same = (a: RRSet, x: RRSet) => a.name === x.name && a.type === x.type;
      for (const r of [...additions, ...deletions]) {
        if (!r.name?.endsWith(zone.dnsName)) return error(res, 400, 'INVALID_ARGUMENT', 'invalid', `Invalid value for 'entity.change.additions[0].name': '${r.name}'`);
      }
      for (const d of deletions) {
        const cur = sets.find((r) => same(r, d));
        // "the deleted record set must match the existing one exactly"
        if (!cur || cur.ttl !== d.ttl || JSON.stringify([...cur.rrdatas].sort()) !== JSON.stringify([...d.rrdatas].sort())) {
          return error(res, 412, 'FAILED_PRECONDITION', 'conditionNotMet', `Precondition not met for 'entity.change.deletions[${d.name}][${d.type}]'`);
        }
      }
      for (const a of additions) {
        if (sets.some((r) => same(r, a)) && !deletions.some((d) => same(d, a))) return error(res, 409, 'ALREADY_EXISTS', 'alreadyExists', `The resource 'entity.change.additions[${a.name}][${a.type}]' named '${a.name} (${a.type})' already exists`);
      }
      for (const d of deletions) sets.splice(sets.findIndex((r) => same(r, d)), 1);
      for (const a of additions) sets.push({ name: a.name, type: a.type, ttl: a.ttl, rrdatas: [...a.rrdatas] });
      changes.push({ zone: zone.name, additions, deletions });
      for (const name of new Set([...additions, ...deletions].filter((r) => r.type === 'TXT').map((r) => r.name))) await sync(name, sets.find((r) => r.name === name && r.type === 'TXT'));
      const ch = { kind: 'dns#change', id: String(++seq), status: 'pending', additions, deletions, startTime: new Date().toISOString() };
      pending.set(ch.id, ch);
      return json(res, 200, ch);
    }
    return error(res, 405, 'INVALID_ARGUMENT', 'badRequest', 'Method not allowed');
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    tokenUri: `${base}/token`,
    rrsets,
    requests,
    changes,
    serviceAccountKey(email = `certsmith@${opts.project}.iam.gserviceaccount.com`) {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      accounts.set(email, publicKey);
      return JSON.stringify({
        type: 'service_account', project_id: opts.project, private_key_id: crypto.randomBytes(20).toString('hex'),
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), client_email: email, client_id: String(Date.now()),
        auth_uri: 'https://accounts.google.com/o/oauth2/auth', token_uri: `${base}/token`,
      });
    },
    get tokenRequests() {
      return tokenRequests;
    },
    unpublished,
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
