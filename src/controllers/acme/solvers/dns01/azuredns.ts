// DNS-01 through Azure DNS (ARM, api-version 2018-05-01) with cert-manager's `dns01.azureDNS`
// fields: `subscriptionID`, `resourceGroupName`, `hostedZoneName`, `environment`, `zoneType`
// (cert-manager v1.21: AzurePublicZone, the default, or AzurePrivateZone, whose record sets live
// under Microsoft.Network/privateDnsZones, api-version 2018-09-01, with camelCase `ttl` and
// `txtRecords` in the body), and either a
// service principal (`clientID`, `clientSecretSecretRef`, `tenantID`: client credentials at the
// Microsoft identity platform's v2 token endpoint) or, as ambient credentials (ClusterIssuers
// unless --issuer-ambient-credentials), Azure Workload Identity when AZURE_FEDERATED_TOKEN_FILE is
// set (the projected service account token as a client assertion at the same endpoint; client and
// tenant from `managedIdentity`, else AZURE_CLIENT_ID and AZURE_TENANT_ID; AZURE_AUTHORITY_HOST),
// else the managed identity of the host (IMDS): cert-manager's order.
//
// Plain fetch rather than @azure/identity + @azure/arm-dns: one token request and one REST
// resource (a TXT record set) are all that is used, and the SDKs would add a large dependency
// tree for exactly those calls.
//
// A TXT record set holds every TXT value of a name: presenting adds this value and cleaning up
// removes only it, read-modify-write with If-Match on the record set's etag (If-None-Match: * when
// creating), re-reading when someone changed it meanwhile (412).
//   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow
//   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow#third-case-access-token-request-with-a-federated-credential
//   https://azure.github.io/azure-workload-identity/docs/topics/service-account-labels-and-annotations.html (the environment variables)
//   https://learn.microsoft.com/en-us/entra/identity/managed-identities-azure-resources/how-to-use-vm-token#get-a-token-using-http
//   https://learn.microsoft.com/en-us/rest/api/dns/zones/get?view=rest-dns-2018-05-01
//   https://learn.microsoft.com/en-us/rest/api/dns/record-sets/get?view=rest-dns-2018-05-01
//   https://learn.microsoft.com/en-us/rest/api/dns/record-sets/create-or-update?view=rest-dns-2018-05-01
//   https://learn.microsoft.com/en-us/rest/api/dns/record-sets/delete?view=rest-dns-2018-05-01
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/private-zones/get?view=rest-dns-privatedns-2018-09-01
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/record-sets/get?view=rest-dns-privatedns-2018-09-01
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/record-sets/create-or-update?view=rest-dns-privatedns-2018-09-01
//   https://learn.microsoft.com/en-us/rest/api/dns/privatedns/record-sets/delete?view=rest-dns-privatedns-2018-09-01
//   https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling
import { readFile } from 'node:fs/promises';
import { ProviderConfigError, type SecretKeyRef } from './secret-ref.ts';
import { fetchWaitingOutThrottling } from './throttling.ts';
import { cachedToken, requestToken } from './oauth-token.ts';

export const AZURE_API_VERSION = '2018-05-01';
/** Azure Private DNS (Microsoft.Network/privateDnsZones) has API versions of its own */
export const AZURE_PRIVATE_DNS_API_VERSION = '2018-09-01';
export const AZURE_ZONE_TYPES = ['AzurePublicZone', 'AzurePrivateZone'] as const;
export type AzureZoneType = (typeof AZURE_ZONE_TYPES)[number];
export const AZURE_IMDS = 'http://169.254.169.254';

/** The identity platform authority and the ARM endpoint of each cloud (cert-manager's `environment` values). */
export const AZURE_ENVIRONMENTS: Record<string, { authority: string; arm: string }> = {
  AzurePublicCloud: { authority: 'https://login.microsoftonline.com', arm: 'https://management.azure.com' },
  AzureChinaCloud: { authority: 'https://login.chinacloudapi.cn', arm: 'https://management.chinacloudapi.cn' },
  AzureUSGovernmentCloud: { authority: 'https://login.microsoftonline.us', arm: 'https://management.usgovcloudapi.net' },
  AzureGermanCloud: { authority: 'https://login.microsoftonline.de', arm: 'https://management.microsoftazure.de' },
};

export interface AzureDNSConfig {
  subscriptionID: string;
  resourceGroupName: string;
  hostedZoneName: string;
  environment: string;
  zoneType: AzureZoneType;
  clientID?: string;
  clientSecretSecretRef?: SecretKeyRef;
  tenantID?: string;
  managedIdentity?: { clientID?: string; resourceID?: string; tenantID?: string };
}

/** The `dns01.azureDNS` block, checked field by field (the schema keeps it open, as upstream's CRD). */
export function azureDNSConfig(raw: unknown): AzureDNSConfig {
  const o = (raw ?? {}) as Record<string, unknown>;
  const str = (f: string, required: boolean): string | undefined => {
    const v = o[f];
    if (v === undefined || v === '') {
      if (required) throw new ProviderConfigError(`azureDNS.${f} is required`);
      return undefined;
    }
    if (typeof v !== 'string') throw new ProviderConfigError(`azureDNS.${f} must be a string`);
    return v;
  };
  const environment = str('environment', false) ?? 'AzurePublicCloud';
  if (!AZURE_ENVIRONMENTS[environment]) throw new ProviderConfigError(`azureDNS.environment must be one of ${Object.keys(AZURE_ENVIRONMENTS).join(', ')}`);
  const zoneType = (str('zoneType', false) ?? 'AzurePublicZone') as AzureZoneType;
  if (!AZURE_ZONE_TYPES.includes(zoneType)) throw new ProviderConfigError(`azureDNS.zoneType must be one of ${AZURE_ZONE_TYPES.join(', ')}`);
  const mi = o.managedIdentity as { clientID?: unknown; resourceID?: unknown; tenantID?: unknown } | undefined;
  if (mi !== undefined && (typeof mi !== 'object' || [mi.clientID, mi.resourceID, mi.tenantID].some((v) => v !== undefined && typeof v !== 'string'))) {
    throw new ProviderConfigError('azureDNS.managedIdentity takes clientID or resourceID, and tenantID (strings)');
  }
  if (mi?.clientID && mi.resourceID) throw new ProviderConfigError('azureDNS.managedIdentity: set clientID or resourceID, not both');
  const ref = o.clientSecretSecretRef as SecretKeyRef | undefined;
  return {
    subscriptionID: str('subscriptionID', true)!,
    resourceGroupName: str('resourceGroupName', true)!,
    hostedZoneName: str('hostedZoneName', true)!,
    environment,
    zoneType,
    clientID: str('clientID', false),
    tenantID: str('tenantID', false),
    clientSecretSecretRef: ref,
    managedIdentity: mi as AzureDNSConfig['managedIdentity'],
  };
}

/** Where an ARM token comes from: a service principal's secret, a workload identity's projected token, or the host's managed identity. */
export type AzureCredentialSource =
  | { clientSecret: { authority: string; tenantID: string; clientID: string; secret: string } }
  | { workloadIdentity: { authority: string; tenantID: string; clientID: string; tokenFile: string } }
  | { managedIdentity: { imds: string; clientID?: string; resourceID?: string } };

const tokenEndpoint = (authority: string, tenantID: string) => `${authority}/${encodeURIComponent(tenantID)}/oauth2/v2.0/token`;
const formPost = (form: URLSearchParams): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });

/** The projected service account token, read at each exchange: the kubelet replaces it before it expires. */
async function projectedToken(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (e) {
    throw new ProviderConfigError(`azureDNS: reading the workload identity token ${file} (AZURE_FEDERATED_TOKEN_FILE): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** A bearer token for ARM (`resource` is the ARM endpoint of the environment, whatever URL the calls go to). */
export function azureAccessToken(src: AzureCredentialSource, resource: string, now: () => number): Promise<string> {
  return cachedToken([src, resource], now, async () => {
    if ('clientSecret' in src) {
      const s = src.clientSecret;
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: s.clientID, client_secret: s.secret, scope: `${resource}/.default` });
      return requestToken(tokenEndpoint(s.authority, s.tenantID), formPost(form), `Azure token request for client ${s.clientID}`);
    }
    if ('workloadIdentity' in src) {
      const w = src.workloadIdentity;
      const form = new URLSearchParams({
        grant_type: 'client_credentials', client_id: w.clientID, scope: `${resource}/.default`,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await projectedToken(w.tokenFile),
      });
      return requestToken(tokenEndpoint(w.authority, w.tenantID), formPost(form), `Azure workload identity token request for client ${w.clientID}`);
    }
    const m = src.managedIdentity;
    const q = new URLSearchParams({ 'api-version': '2018-02-01', resource: `${resource}/` });
    if (m.clientID) q.set('client_id', m.clientID);
    if (m.resourceID) q.set('msi_res_id', m.resourceID);
    return requestToken(`${m.imds}/metadata/identity/oauth2/token?${q}`, { headers: { metadata: 'true' } }, 'Azure managed identity token (IMDS)');
  });
}

/** ARM refused the request: the status and ARM's error code. */
export class AzureDNSError extends Error {
  constructor(readonly status: number, readonly code: string, detail: string, what: string) {
    super(`Azure DNS ${what}: HTTP ${status}${code ? `: ${code}` : ''}${detail ? `: ${detail}` : ''}`);
    this.name = 'AzureDNSError';
  }
}

/** An answer's JSON body; undefined when it is empty or not JSON. */
function jsonBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** ARM's error body ({error: {code, message}}) of a failed answer; any other body leaves the status alone. */
function azureDNSError(status: number, body: unknown, what: string): AzureDNSError {
  const err = (body as { error?: { code?: string; message?: string } } | undefined)?.error ?? {};
  return new AzureDNSError(status, err.code ?? '', err.message ?? '', what);
}

/** A TXT record set as Azure DNS (TTL, TXTRecords) or Azure Private DNS (ttl, txtRecords) spells it. */
interface TXTRecordSet {
  etag?: string;
  properties: { TTL?: number; TXTRecords?: { value: string[] }[]; ttl?: number; txtRecords?: { value: string[] }[] };
}

/** tries of a write whose record set someone changed meanwhile (412), in all */
const MAX_ATTEMPTS = 3;

export class AzureDNSClient {
  private readonly resource: string;
  constructor(
    private readonly creds: AzureCredentialSource,
    private readonly cfg: Pick<AzureDNSConfig, 'subscriptionID' | 'resourceGroupName' | 'hostedZoneName' | 'environment'> & { zoneType?: AzureZoneType },
    private readonly arm?: string,
    private readonly now: () => number = Date.now,
  ) {
    this.resource = AZURE_ENVIRONMENTS[cfg.environment].arm;
  }

  private get isPrivate(): boolean {
    return this.cfg.zoneType === 'AzurePrivateZone';
  }

  private get zonePath(): string {
    const c = this.cfg;
    const zones = this.isPrivate ? 'privateDnsZones' : 'dnsZones';
    return `/subscriptions/${encodeURIComponent(c.subscriptionID)}/resourceGroups/${encodeURIComponent(c.resourceGroupName)}/providers/Microsoft.Network/${zones}/${encodeURIComponent(c.hostedZoneName)}`;
  }

  private async call(method: string, path: string, what: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: unknown }> {
    const { res, text } = await fetchWaitingOutThrottling({
      // the token at each attempt: the cached one, or a fresh one once it nears expiry
      send: async () => fetch(`${this.arm ?? this.resource}${this.zonePath}${path}${path.includes('?') ? '&' : '?'}api-version=${this.isPrivate ? AZURE_PRIVATE_DNS_API_VERSION : AZURE_API_VERSION}`, {
        method,
        headers: { authorization: `Bearer ${await azureAccessToken(this.creds, this.resource, this.now)}`, accept: 'application/json', ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(30_000),
      }),
      errorMessage: (r, t) => azureDNSError(r.status, jsonBody(t), what).message,
      // 503: the service is busy or down, waited out the same way, but not reported as throttling
      alsoWaitOut: [503],
    });
    const body = jsonBody(text);
    if (res.ok) return { status: res.status, body };
    const e = azureDNSError(res.status, body, what);
    if (res.status === 401 || res.status === 403) throw new ProviderConfigError(e.message);
    throw e;
  }

  /** The zone exists and the credentials may read it. */
  async checkZone(): Promise<void> {
    try {
      await this.call('GET', '', `zone ${this.cfg.hostedZoneName}`);
    } catch (e) {
      if (e instanceof AzureDNSError && e.status === 404) {
        throw new ProviderConfigError(`Azure DNS: ${this.isPrivate ? 'private ' : ''}zone "${this.cfg.hostedZoneName}" not found in resource group "${this.cfg.resourceGroupName}" of subscription "${this.cfg.subscriptionID}"`);
      }
      throw e;
    }
  }

  /** The record set's name relative to the zone ('@' at the apex). */
  relativeName(fqdn: string): string {
    const name = fqdn.replace(/\.$/, '').toLowerCase();
    const zone = this.cfg.hostedZoneName.replace(/\.$/, '').toLowerCase();
    if (name === zone) return '@';
    if (!name.endsWith(`.${zone}`)) throw new ProviderConfigError(`Azure DNS: ${fqdn.replace(/^_acme-challenge\./, '').replace(/\.$/, '')} is not in zone "${this.cfg.hostedZoneName}"`);
    return name.slice(0, -zone.length - 1);
  }

  private async edit(fqdn: string, what: string, next: (values: string[]) => string[] | undefined): Promise<void> {
    const path = `/TXT/${encodeURIComponent(this.relativeName(fqdn))}`;
    for (let attempt = 1; ; attempt++) {
      let cur: TXTRecordSet | undefined;
      try {
        cur = (await this.call('GET', path, `reading TXT ${fqdn}`)).body as TXTRecordSet;
      } catch (e) {
        // 404 NotFound: no record set at the name yet; any other 404 (ParentResourceNotFound,
        // ResourceGroupNotFound) means the zone itself is missing, reported as configuration
        const absent = e instanceof AzureDNSError && e.status === 404 && e.code === 'NotFound';
        if (!absent) {
          if (e instanceof AzureDNSError && e.status === 404) await this.checkZone();
          throw e;
        }
      }
      // each TXT record is a list of strings (a value longer than 255 is split): one record per value
      const records = (this.isPrivate ? cur?.properties.txtRecords : cur?.properties.TXTRecords) ?? [];
      const values = records.map((r) => r.value.join(''));
      const ttl = (this.isPrivate ? cur?.properties.ttl : cur?.properties.TTL) ?? 60;
      const want = next(values);
      if (!want) return;
      try {
        if (want.length) {
          await this.call('PUT', path, `${what} ${fqdn}`, {
            body: { properties: this.isPrivate ? { ttl, txtRecords: want.map((v) => ({ value: [v] })) } : { TTL: ttl, TXTRecords: want.map((v) => ({ value: [v] })) } },
            headers: cur?.etag ? { 'if-match': cur.etag } : { 'if-none-match': '*' },
          });
        } else {
          await this.call('DELETE', path, `${what} ${fqdn}`, { headers: cur?.etag ? { 'if-match': cur.etag } : {} });
        }
        return;
      } catch (e) {
        // 412 PreconditionFailed: the record set is not the one we read
        if (e instanceof AzureDNSError && e.status === 412 && attempt < MAX_ATTEMPTS) continue;
        throw e;
      }
    }
  }

  async present(fqdn: string, value: string): Promise<void> {
    await this.edit(fqdn, 'adding TXT to', (vs) => (vs.includes(value) ? undefined : [...vs, value]));
  }

  async cleanUp(fqdn: string, value: string): Promise<void> {
    await this.edit(fqdn, 'removing TXT from', (vs) => (vs.includes(value) ? vs.filter((v) => v !== value) : undefined));
  }
}
