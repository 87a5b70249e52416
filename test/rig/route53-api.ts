// A loopback stand-in for the Route 53 REST API (2013-04-01), for the calls a DNS-01 solver makes,
// following the documented requests, XML responses and errors:
//   https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListHostedZonesByName.html
//   https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListResourceRecordSets.html
//   https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html
//   https://docs.aws.amazon.com/Route53/latest/APIReference/API_GetChange.html
//   https://docs.aws.amazon.com/Route53/latest/APIReference/CommonErrors.html
//   https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html   (Signature Version 4)
// Every request's SigV4 signature is recomputed here, independently of the SDK's signer, from the
// canonical request and the secret key of the access key it names: an unknown key is
// InvalidClientTokenId, a wrong signature SignatureDoesNotMatch (both 403). `throttle(n)` answers
// the next n calls with 400 Throttling, as Route 53 does. A change is PENDING until its first
// GetChange. TXT record sets are published into pebble-challtestsrv.
// `allowedActions` plays an IAM policy that allows only those actions (e.g. the one cert-manager
// documents for its route53 solver: GetChange, ChangeResourceRecordSets, ListResourceRecordSets,
// ListHostedZonesByName, https://cert-manager.io/docs/configuration/acme/dns01/route53/#set-up-an-iam-policy);
// any other action is 403 AccessDenied, as IAM answers:
//   https://docs.aws.amazon.com/IAM/latest/UserGuide/troubleshoot_access-denied.html
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';

export interface RRSet {
  name: string;
  type: string;
  ttl: number;
  values: string[];
}

export interface Route53API {
  url: string;
  zones: { id: string; name: string; private: boolean }[];
  sets: Map<string, RRSet[]>;
  /** keyId: the access key id the request was signed with */
  requests: { method: string; path: string; status: number; code?: string; keyId?: string }[];
  throttle(n: number): void;
  stop(): Promise<void>;
}

const NS = 'https://route53.amazonaws.com/doc/2013-04-01/';
const sha256 = (d: string | Buffer) => crypto.createHash('sha256').update(d).digest('hex');
const hmac = (k: Buffer | string, d: string) => crypto.createHmac('sha256', k).update(d).digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const absolute = (n: string) => (n.endsWith('.') ? n : `${n}.`);
/** Route 53 orders names with their labels reversed */
const sortKey = (name: string, type = '') => `${absolute(name).split('.').reverse().join('.')}\u0000${type}`;

/** SigV4 check of one request: undefined when valid, else the error code and message */
export function verifySigV4(
  req: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }, keys: Record<string, string>, service: string, now = Date.now(),
  /** temporary credentials (STS): access key id → the session token that must come, signed, as X-Amz-Security-Token */
  sessionTokens: Record<string, string> = {},
): { code: string; message: string } | undefined {
  const auth = req.headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { code: 'IncompleteSignature', message: 'Authorization header requires Credential, SignedHeaders and Signature' };
  const [, keyId, date, region, svc, signedHeaders, signature] = m;
  const secret = keys[keyId];
  if (secret === undefined) return { code: 'InvalidClientTokenId', message: 'The security token included in the request is invalid.' };
  const token = sessionTokens[keyId];
  if (token !== undefined && (req.headers['x-amz-security-token'] !== token || !m[5].split(';').includes('x-amz-security-token'))) {
    return { code: 'InvalidClientTokenId', message: 'The security token included in the request is invalid.' };
  }
  if (svc !== service) return { code: 'SignatureDoesNotMatch', message: `Credential should be scoped to correct service: '${service}'.` };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const t = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!amzDate.startsWith(date) || !Number.isFinite(t) || Math.abs(now - t) > 15 * 60_000) return { code: 'SignatureDoesNotMatch', message: 'Signature expired or not yet current' };
  const payloadHash = sha256(req.body);
  const claimed = req.headers['x-amz-content-sha256'];
  if (claimed !== undefined && claimed !== payloadHash) return { code: 'SignatureDoesNotMatch', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  const url = new URL(req.url, 'http://x');
  const path = url.pathname.split('/').map((seg) => rfc3986(decodeURIComponent(seg))).join('/');
  const query = [...url.searchParams.entries()].map(([k, v]) => [rfc3986(k), rfc3986(v)]).sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join('&');
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return { code: 'SignatureDoesNotMatch', message: 'host must be signed' };
  const canonicalHeaders = names.map((h) => `${h}:${String(req.headers[h] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, path, query, canonicalHeaders, signedHeaders, claimed ?? payloadHash].join('\n');
  const scope = `${date}/${region}/${svc}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), svc), 'aws4_request');
  const expected = hmac(key, toSign).toString('hex');
  if (!crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    return { code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' };
  }
  return undefined;
}

const tag = (xml: string, name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml)?.[1];
const tags = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((x) => x[1]);
const unesc = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function setXML(s: RRSet): string {
  return `<ResourceRecordSet><Name>${esc(s.name)}</Name><Type>${s.type}</Type><TTL>${s.ttl}</TTL><ResourceRecords>${s.values.map((v) => `<ResourceRecord><Value>${esc(v)}</Value></ResourceRecord>`).join('')}</ResourceRecords></ResourceRecordSet>`;
}

/** The Route 53 action a request is, for `allowedActions`. */
function actionOf(method: string, path: string): string {
  if (path === '/2013-04-01/hostedzonesbyname') return 'ListHostedZonesByName';
  if (/^\/2013-04-01\/change\//.test(path)) return 'GetChange';
  if (/^\/2013-04-01\/hostedzone\/[^/]+\/rrset$/.test(path)) return method === 'POST' ? 'ChangeResourceRecordSets' : 'ListResourceRecordSets';
  if (/^\/2013-04-01\/hostedzone\/[^/]+$/.test(path)) return 'GetHostedZone';
  return 'Unknown';
}

/** zones: a name is a public hosted zone; { name, private: true } a private one (a VPC's, which the CA cannot see) */
export async function startRoute53API(opts: { zones: (string | { name: string; private: true })[]; keys: Record<string, string>; sessionTokens?: Record<string, string>; allowedActions?: string[]; challtestsrv: ChallTestSrv }): Promise<Route53API> {
  const zones = opts.zones.map((z) => ({ id: `Z${crypto.randomBytes(8).toString('hex').toUpperCase()}`, name: absolute(typeof z === 'string' ? z : z.name), private: typeof z !== 'string' }));
  const sets = new Map<string, RRSet[]>(zones.map((z) => [z.id, []]));
  const changes = new Map<string, { status: string; submitted: string }>();
  const requests: Route53API['requests'] = [];
  let throttled = 0;

  const reply = (res: http.ServerResponse, r: { method: string; path: string; keyId?: string }, status: number, xml: string, code?: string) => {
    requests.push({ ...r, status, code });
    res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': crypto.randomUUID() });
    res.end(`<?xml version="1.0" encoding="UTF-8"?>\n${xml}`);
  };
  const error = (res: http.ServerResponse, r: { method: string; path: string }, status: number, code: string, message: string) =>
    reply(res, r, status, `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${esc(message)}</Message></Error><RequestId>${crypto.randomUUID()}</RequestId></ErrorResponse>`, code);
  const publish = async (name: string, zoneId: string) => {
    const host = name.replace(/\.$/, '');
    await opts.challtestsrv.clearTXT(host);
    const set = sets.get(zoneId)!.find((s) => s.name === name && s.type === 'TXT');
    for (const v of set?.values ?? []) await opts.challtestsrv.setTXT(host, v.replace(/^"|"$/g, ''));
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) {
    const url = new URL(req.url ?? '/', 'http://x');
    const r = { method: req.method ?? '', path: `${url.pathname}${url.search}`, keyId: /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] };
    const bad = verifySigV4({ method: r.method, url: req.url ?? '/', headers: req.headers, body }, opts.keys, 'route53', Date.now(), opts.sessionTokens);
    if (bad) return error(res, r, 403, bad.code, bad.message);
    if (throttled > 0) {
      throttled--;
      return error(res, r, 400, 'Throttling', 'Rate exceeded');
    }
    const p = url.pathname.replace(/\/$/, '');
    const action = actionOf(r.method, p);
    if (opts.allowedActions && !opts.allowedActions.includes(action)) {
      return error(res, r, 403, 'AccessDenied', `User: arn:aws:iam::123456789012:user/${r.keyId} is not authorized to perform: route53:${action} on resource: ${p} because no identity-based policy allows the route53:${action} action`);
    }
    if (r.method === 'GET' && p === '/2013-04-01/hostedzonesbyname') {
      const from = sortKey(url.searchParams.get('dnsname') ?? '');
      const max = Number(url.searchParams.get('maxitems') ?? 100);
      const list = zones.filter((z) => sortKey(z.name) >= from).sort((a, b) => (sortKey(a.name) < sortKey(b.name) ? -1 : 1)).slice(0, max);
      return reply(res, r, 200, `<ListHostedZonesByNameResponse xmlns="${NS}"><HostedZones>${list.map((z) => `<HostedZone><Id>/hostedzone/${z.id}</Id><Name>${z.name}</Name><CallerReference>rig</CallerReference><Config><PrivateZone>${z.private}</PrivateZone></Config><ResourceRecordSetCount>${sets.get(z.id)!.length + 2}</ResourceRecordSetCount></HostedZone>`).join('')}</HostedZones><DNSName>${esc(url.searchParams.get('dnsname') ?? '')}</DNSName><IsTruncated>false</IsTruncated><MaxItems>${max}</MaxItems></ListHostedZonesByNameResponse>`);
    }
    const change = /^\/2013-04-01\/change\/(.+)$/.exec(p);
    if (r.method === 'GET' && change) {
      const c = changes.get(change[1]);
      if (!c) return error(res, r, 404, 'NoSuchChange', `A change with the specified change ID does not exist: ${change[1]}`);
      const status = c.status;
      c.status = 'INSYNC';
      return reply(res, r, 200, `<GetChangeResponse xmlns="${NS}"><ChangeInfo><Id>/change/${change[1]}</Id><Status>${status}</Status><SubmittedAt>${c.submitted}</SubmittedAt></ChangeInfo></GetChangeResponse>`);
    }
    const rrset = /^\/2013-04-01\/hostedzone\/([^/]+)\/rrset$/.exec(p);
    const zone = rrset && zones.find((z) => z.id === rrset[1]);
    if (rrset && !zone) return error(res, r, 404, 'NoSuchHostedZone', `No hosted zone found with ID: ${rrset[1]}`);
    if (r.method === 'GET' && zone) {
      const from = sortKey(url.searchParams.get('name') ?? '', url.searchParams.get('type') ?? '');
      const max = Number(url.searchParams.get('maxitems') ?? 300);
      const list = sets.get(zone.id)!.filter((s) => sortKey(s.name, s.type) >= from).sort((a, b) => (sortKey(a.name, a.type) < sortKey(b.name, b.type) ? -1 : 1)).slice(0, max);
      return reply(res, r, 200, `<ListResourceRecordSetsResponse xmlns="${NS}"><ResourceRecordSets>${list.map(setXML).join('')}</ResourceRecordSets><IsTruncated>false</IsTruncated><MaxItems>${max}</MaxItems></ListResourceRecordSetsResponse>`);
    }
    if (r.method === 'POST' && zone) {
      const xml = body.toString();
      const zoneSets = sets.get(zone.id)!;
      const touched = new Set<string>();
      // the whole batch is checked before anything is applied, as Route 53 applies it atomically
      const next = zoneSets.map((s) => ({ ...s, values: [...s.values] }));
      for (const c of tags(xml, 'Change')) {
        const action = tag(c, 'Action');
        const setXml = tag(c, 'ResourceRecordSet') ?? '';
        const s: RRSet = { name: absolute(unesc(tag(setXml, 'Name') ?? '')), type: tag(setXml, 'Type') ?? '', ttl: Number(tag(setXml, 'TTL') ?? 300), values: tags(setXml, 'Value').map(unesc) };
        if (!s.name.endsWith(`.${zone.name}`) && s.name !== zone.name) return error(res, r, 400, 'InvalidChangeBatch', `RRSet with DNS name ${s.name} is not permitted in zone ${zone.name}`);
        if (s.type === 'TXT' && s.values.some((v) => !/^".*"$/.test(v))) return error(res, r, 400, 'InvalidChangeBatch', 'Invalid Resource Record: FATAL problem: InvalidCharacterString (Value should be enclosed in quotation marks)');
        const i = next.findIndex((x) => x.name === s.name && x.type === s.type);
        if (action === 'UPSERT') {
          if (i >= 0) next[i] = s;
          else next.push(s);
        } else if (action === 'CREATE') {
          if (i >= 0) return error(res, r, 400, 'InvalidChangeBatch', `Tried to create resource record set [name='${s.name}', type='${s.type}'] but it already exists`);
          next.push(s);
        } else if (action === 'DELETE') {
          const cur = next[i];
          if (!cur || cur.ttl !== s.ttl || cur.values.join('\n') !== s.values.join('\n')) {
            return error(res, r, 400, 'InvalidChangeBatch', `Tried to delete resource record set [name='${s.name}', type='${s.type}'] but ${cur ? 'the values provided do not match the current values' : 'it was not found'}`);
          }
          next.splice(i, 1);
        } else {
          return error(res, r, 400, 'InvalidInput', `Invalid action ${action}`);
        }
        touched.add(s.name);
      }
      sets.set(zone.id, next);
      for (const n of touched) await publish(n, zone.id);
      const id = `C${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
      const submitted = new Date().toISOString();
      changes.set(id, { status: 'PENDING', submitted });
      return reply(res, r, 200, `<ChangeResourceRecordSetsResponse xmlns="${NS}"><ChangeInfo><Id>/change/${id}</Id><Status>PENDING</Status><SubmittedAt>${submitted}</SubmittedAt></ChangeInfo></ChangeResourceRecordSetsResponse>`);
    }
    return error(res, r, 404, 'UnknownOperationException', `${r.method} ${p}`);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => void handle(req, res, Buffer.concat(chunks)).catch((e) => error(res, { method: req.method ?? '', path: req.url ?? '' }, 500, 'InternalFailure', String(e))));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    zones,
    sets,
    requests,
    throttle(n) {
      throttled = n;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
