// A loopback stand-in for the Microsoft identity platform's token endpoint, the Azure Instance
// Metadata Service's managed identity endpoint and the Azure DNS ARM API (2018-05-01), for the
// parts a DNS-01 solver uses, following the documented requests, responses and errors:
//   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow                  POST /{tenant}/oauth2/v2.0/token (client_credentials, scope {arm}/.default)
//   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow#third-case-access-token-request-with-a-federated-credential
//       the same endpoint with client_assertion_type urn:ietf:params:oauth:client-assertion-type:jwt-bearer and client_assertion (Workload Identity)
//   https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes                               AADSTS7000215 invalid client secret, AADSTS700016 unknown client, AADSTS90002 unknown tenant
//   https://learn.microsoft.com/en-us/entra/identity/managed-identities-azure-resources/how-to-use-vm-token      GET /metadata/identity/oauth2/token?api-version=2018-02-01&resource= (Metadata: true)
//   https://learn.microsoft.com/en-us/rest/api/dns/zones/get?view=rest-dns-2018-05-01                            GET  /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Network/dnsZones/{zone}
//   https://learn.microsoft.com/en-us/rest/api/dns/record-sets/get?view=rest-dns-2018-05-01                      GET  .../dnsZones/{zone}/TXT/{relativeRecordSetName}
//   https://learn.microsoft.com/en-us/rest/api/dns/record-sets/create-or-update?view=rest-dns-2018-05-01         PUT  ... (If-Match / If-None-Match)
//   https://learn.microsoft.com/en-us/rest/api/dns/record-sets/delete?view=rest-dns-2018-05-01                   DELETE ... (If-Match)
//   https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling     429 with Retry-After
// Azure Private DNS (Microsoft.Network/privateDnsZones, api-version 2018-09-01), the same operations
// with the private zone's own paths, API version and camelCase record set properties (ttl, txtRecords):
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/private-zones/get?view=rest-dns-privatedns-2018-09-01     GET  /subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Network/privateDnsZones/{privateZoneName}
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/record-sets/get?view=rest-dns-privatedns-2018-09-01      GET  .../privateDnsZones/{zone}/TXT/{relativeRecordSetName}
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/record-sets/create-or-update?view=rest-dns-privatedns-2018-09-01   PUT (If-Match / If-None-Match)
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/record-sets/delete?view=rest-dns-privatedns-2018-09-01   DELETE (If-Match)
// ARM errors are {error: {code, message}}. The API takes only bearer tokens this server issued for
// the ARM resource. TXT values are written through to pebble-challtestsrv, private zones' too (a
// real private zone answers only inside its linked virtual networks; here Pebble stands in for a
// client inside one).
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ChallTestSrv } from './pebble.ts';

export interface AzureRecordSet {
  etag: string;
  TTL: number;
  values: string[];
}

export interface AzureDNSAPI {
  /** base URL of the authority, ARM and IMDS alike */
  url: string;
  /** zone name → relative record set name → TXT record set */
  zones: Map<string, Map<string, AzureRecordSet>>;
  /** the same for the Private DNS zones */
  privateZones: Map<string, Map<string, AzureRecordSet>>;
  /** every ARM request: method, path with query, If-Match/If-None-Match, and whether its token was one this server issued */
  requests: { method: string; path: string; ifMatch?: string; ifNoneMatch?: string; authorized: boolean; txt?: string[] }[];
  /** the token requests: which grant and which client */
  tokens: { via: 'client_credentials' | 'federated' | 'imds'; client?: string }[];
  /** the next n ARM requests are answered 429 with Retry-After: seconds */
  throttle(n: number, seconds?: number): void;
  /** fully qualified names whose TXT record sets the API accepts but never publishes, so validation fails */
  unpublished: Set<string>;
  stop(): Promise<void>;
}

const ARM_RESOURCE = 'https://management.azure.com';

export async function startAzureDNSAPI(opts: {
  tenantID: string;
  clientID: string;
  clientSecret: string;
  /** the projected service account token a federated identity credential of clientID trusts now (Workload Identity) */
  federatedToken?: () => string;
  subscriptionID: string;
  resourceGroupName: string;
  zones: string[];
  /** Azure Private DNS zones (privateDnsZones), separate from the public ones even when a name is in both */
  privateZones?: string[];
  challtestsrv: ChallTestSrv;
}): Promise<AzureDNSAPI> {
  const issued = new Set<string>();
  const zones = new Map(opts.zones.map((z) => [z, new Map<string, AzureRecordSet>()]));
  const privateZones = new Map((opts.privateZones ?? []).map((z) => [z, new Map<string, AzureRecordSet>()]));
  const requests: AzureDNSAPI['requests'] = [];
  const tokens: AzureDNSAPI['tokens'] = [];
  let throttled = 0;
  let throttleSeconds = 1;
  const unpublished = new Set<string>();

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const armError = (res: http.ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}) => json(res, status, { error: { code, message } }, headers);
  const aadError = (res: http.ServerResponse, status: number, error: string, code: number, text: string) =>
    json(res, status, { error, error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${crypto.randomUUID()}\r\nCorrelation ID: ${crypto.randomUUID()}\r\nTimestamp: ${new Date().toISOString()}`, error_codes: [code], timestamp: new Date().toISOString() });
  const issue = (extra: Record<string, unknown> = {}) => {
    const t = `eyJ0eXAi.${crypto.randomBytes(24).toString('base64url')}`;
    issued.add(t);
    return { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: t, ...extra };
  };
  const fqdnOf = (zone: string, rel: string) => (rel === '@' ? zone : `${rel}.${zone}`);
  const sync = async (all: Map<string, Map<string, AzureRecordSet>>, zone: string, rel: string) => {
    const host = fqdnOf(zone, rel);
    if (unpublished.has(host)) return;
    await opts.challtestsrv.clearTXT(host);
    for (const v of all.get(zone)!.get(rel)?.values ?? []) await opts.challtestsrv.setTXT(host, v);
  };
  const recordSetBody = (priv: boolean, s: string, rg: string, zone: string, rel: string, r: AzureRecordSet) => priv
    ? {
      id: `/subscriptions/${s}/resourceGroups/${rg}/providers/Microsoft.Network/privateDnsZones/${zone}/TXT/${rel}`,
      name: rel, type: 'Microsoft.Network/privateDnsZones/TXT', etag: r.etag,
      properties: { ttl: r.TTL, fqdn: `${fqdnOf(zone, rel)}.`, isAutoRegistered: false, txtRecords: r.values.map((v) => ({ value: [v] })) },
    }
    : {
      id: `/subscriptions/${s}/resourceGroups/${rg}/providers/Microsoft.Network/dnszones/${zone}/TXT/${rel}`,
      name: rel, type: 'Microsoft.Network/dnszones/TXT', etag: r.etag,
      properties: { TTL: r.TTL, fqdn: `${fqdnOf(zone, rel)}.`, provisioningState: 'Succeeded', TXTRecords: r.values.map((v) => ({ value: [v] })) },
    };

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      void handle(req, res, body).catch((e) => armError(res, 500, 'InternalServerError', String(e)));
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    const tm = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (tm && req.method === 'POST') {
      const form = new URLSearchParams(body);
      const assertion = form.get('client_assertion');
      tokens.push({ via: assertion === null ? 'client_credentials' : 'federated', client: form.get('client_id') ?? undefined });
      if (decodeURIComponent(tm[1]) !== opts.tenantID) return aadError(res, 400, 'invalid_request', 90002, `Tenant '${tm[1]}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`);
      if (form.get('grant_type') !== 'client_credentials') return aadError(res, 400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
      if (form.get('client_id') !== opts.clientID) return aadError(res, 400, 'unauthorized_client', 700016, `Application with identifier '${form.get('client_id')}' was not found in the directory.`);
      if (assertion !== null) {
        if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') return aadError(res, 400, 'invalid_request', 900023, 'Specified client_assertion_type is not supported.');
        if (!opts.federatedToken || assertion !== opts.federatedToken()) return aadError(res, 400, 'invalid_client', 70021, 'No matching federated identity record found for presented assertion.');
      } else if (form.get('client_secret') !== opts.clientSecret) {
        return aadError(res, 401, 'invalid_client', 7000215, 'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.');
      }
      if (form.get('scope') !== `${ARM_RESOURCE}/.default`) return aadError(res, 400, 'invalid_scope', 1002012, `The provided value for scope ${form.get('scope')} is not valid.`);
      return json(res, 200, issue());
    }
    if (url.pathname === '/metadata/identity/oauth2/token' && req.method === 'GET') {
      tokens.push({ via: 'imds', client: url.searchParams.get('client_id') ?? undefined });
      if (req.headers.metadata !== 'true') return json(res, 400, { error: 'invalid_request', error_description: 'Required metadata header not specified' });
      if (url.searchParams.get('api-version') !== '2018-02-01') return json(res, 400, { error: 'invalid_request', error_description: 'Invalid api-version' });
      if (url.searchParams.get('resource') !== `${ARM_RESOURCE}/`) return json(res, 400, { error: 'invalid_resource', error_description: 'AADSTS500011: The resource principal was not found' });
      const t = issue({ resource: `${ARM_RESOURCE}/`, expires_on: String(Math.floor(Date.now() / 1000) + 3599), not_before: String(Math.floor(Date.now() / 1000)) });
      return json(res, 200, { ...t, expires_in: String(t.expires_in) });
    }

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorized = bearer !== undefined && issued.has(bearer);
    const entry: AzureDNSAPI['requests'][number] = { method: req.method ?? '', path: `${url.pathname}${url.search}`, ifMatch: req.headers['if-match'] as string | undefined, ifNoneMatch: req.headers['if-none-match'] as string | undefined, authorized };
    requests.push(entry);
    if (throttled > 0) {
      throttled--;
      return armError(res, 429, 'TooManyRequests', 'The request is being throttled as the limit has been reached for operation type - Write_ObservationWindow_00:05:00.', { 'retry-after': String(throttleSeconds) });
    }
    if (!bearer) return armError(res, 401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is missing.");
    if (!authorized) return armError(res, 401, 'InvalidAuthenticationToken', 'The access token is invalid.');
    const m = /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Network\/(dnsZones|privateDnsZones)\/([^/]+)(?:\/TXT\/([^/]+))?$/i.exec(url.pathname);
    if (!m) return armError(res, 404, 'NotFound', 'The requested resource was not found.');
    const [, s, rg, provider, zone, relRaw] = m.map((x) => (x === undefined ? undefined : decodeURIComponent(x)));
    const priv = provider!.toLowerCase() === 'privatednszones';
    const apiVersion = priv ? '2018-09-01' : '2018-05-01';
    if (url.searchParams.get('api-version') !== apiVersion) return armError(res, 400, 'InvalidApiVersionParameter', `The api-version '${url.searchParams.get('api-version')}' is invalid.`);
    const typeName = priv ? 'Microsoft.Network/privateDnsZones' : 'Microsoft.Network/dnszones';
    if (s !== opts.subscriptionID) return armError(res, 403, 'AuthorizationFailed', `The client does not have authorization to perform action '${priv ? 'Microsoft.Network/privateDnsZones/read' : 'Microsoft.Network/dnsZones/read'}' over scope '/subscriptions/${s}' or the scope is invalid.`);
    if (rg !== opts.resourceGroupName) return armError(res, 404, 'ResourceGroupNotFound', `Resource group '${rg}' could not be found.`);
    const all = priv ? privateZones : zones;
    const sets = all.get(zone!);
    if (!relRaw) {
      if (req.method !== 'GET') return armError(res, 405, 'MethodNotAllowed', 'Method not allowed');
      if (!sets) return armError(res, 404, 'ResourceNotFound', `The Resource '${typeName}/${zone}' under resource group '${rg}' was not found.`);
      return json(res, 200, { id: `/subscriptions/${s}/resourceGroups/${rg}/providers/${typeName}/${zone}`, name: zone, type: typeName, location: 'global', properties: priv ? { numberOfRecordSets: sets.size, provisioningState: 'Succeeded' } : { numberOfRecordSets: sets.size } });
    }
    if (!sets) return armError(res, 404, 'ParentResourceNotFound', `Can not perform requested operation on nested resource. Parent resource '${zone}' not found.`);
    const rel = relRaw.toLowerCase();
    const cur = sets.get(rel);
    const ifMatch = req.headers['if-match'];
    const ifNoneMatch = req.headers['if-none-match'];
    const precondition = () => (ifMatch !== undefined && (!cur || (ifMatch !== '*' && ifMatch !== cur.etag))) || (ifNoneMatch === '*' && cur);
    if (req.method === 'GET') {
      if (!cur) return armError(res, 404, 'NotFound', `The resource record '${rel}' does not exist in resource group '${rg}' of subscription '${s}'.`);
      return json(res, 200, recordSetBody(priv, s!, rg!, zone!, rel, cur));
    }
    if (req.method === 'PUT') {
      if (precondition()) return armError(res, 412, 'PreconditionFailed', 'The condition specified using HTTP conditional header(s) is not met.');
      let b: { properties?: { TTL?: number; TXTRecords?: { value?: string[] }[]; ttl?: number; txtRecords?: { value?: string[] }[] } };
      try {
        b = JSON.parse(body);
      } catch {
        return armError(res, 400, 'InvalidRequestFormat', 'Cannot parse the request.');
      }
      // each API spells the properties its own way; the other spelling is not read
      const recs = priv ? b.properties?.txtRecords : b.properties?.TXTRecords;
      const recsName = priv ? 'txtRecords' : 'TXTRecords';
      if (!Array.isArray(recs) || recs.some((r) => !Array.isArray(r.value) || r.value.some((v) => typeof v !== 'string' || v.length > 255))) return armError(res, 400, 'BadRequest', `${recsName} must be a list of {value: [string ≤ 255]}.`);
      const next = { etag: crypto.randomUUID(), TTL: (priv ? b.properties?.ttl : b.properties?.TTL) ?? 3600, values: recs.map((r) => r.value!.join('')) };
      entry.txt = next.values;
      sets.set(rel, next);
      await sync(all, zone!, rel);
      return json(res, cur ? 200 : 201, recordSetBody(priv, s!, rg!, zone!, rel, next));
    }
    if (req.method === 'DELETE') {
      if (precondition()) return armError(res, 412, 'PreconditionFailed', 'The condition specified using HTTP conditional header(s) is not met.');
      if (!cur) return json(res, 204, undefined);
      sets.delete(rel);
      await sync(all, zone!, rel);
      return json(res, 200, undefined);
    }
    return armError(res, 405, 'MethodNotAllowed', 'Method not allowed');
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    zones,
    privateZones,
    requests,
    tokens,
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
