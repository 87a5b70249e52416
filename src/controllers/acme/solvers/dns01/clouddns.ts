// DNS-01 through Google Cloud DNS (API v1) with cert-manager's `dns01.cloudDNS` fields: `project`,
// `hostedZoneName` (else the managed zone is found by DNS name) and `serviceAccountSecretRef` (a
// service account key JSON), or application default credentials for ClusterIssuers.
//
// Plain fetch and node:crypto rather than google-auth-library + @google-cloud/dns: what we need is
// one token exchange (an RS256-signed JWT assertion POSTed to the key's own token_uri, RFC 7523)
// and one REST resource (managedZones/rrsets/changes). The SDKs would add a large dependency tree
// for those same calls, and the token endpoint must be the key's `token_uri` as written.
//
// A TXT rrset holds every TXT value at a name, so presenting adds this value to the existing set
// and cleaning up removes only this value, each as one atomic change (deletion of the old rrset,
// addition of the new one: Cloud DNS refuses it if the rrset changed meanwhile, and we re-read).
//   https://developers.google.com/identity/protocols/oauth2/service-account#httprest
//   https://cloud.google.com/dns/docs/reference/rest/v1/managedZones/list
//   https://cloud.google.com/dns/docs/reference/rest/v1/resourceRecordSets/list
//   https://cloud.google.com/dns/docs/reference/rest/v1/changes/create
//   https://cloud.google.com/dns/docs/reference/rest/v1/changes/get
//   https://cloud.google.com/docs/authentication/application-default-credentials
import crypto from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ProviderConfigError, type SecretKeyRef } from './secret-ref.ts';
import { fetchWaitingOutThrottling } from './throttling.ts';
import { cachedToken, requestToken } from './oauth-token.ts';
import { quotedTxt, txtValue } from './txt-rdata.ts';

export const CLOUDDNS_API = 'https://dns.googleapis.com';
export const GCE_METADATA = 'http://metadata.google.internal';
export const CLOUDDNS_SCOPE = 'https://www.googleapis.com/auth/ndev.clouddns.readwrite';

export interface CloudDNSConfig {
  project: string;
  hostedZoneName?: string;
  serviceAccountSecretRef?: SecretKeyRef;
}

/** The `dns01.cloudDNS` block, checked field by field (the schema keeps it open, as upstream's CRD). */
export function cloudDNSConfig(raw: unknown): CloudDNSConfig {
  const o = (raw ?? {}) as Record<string, unknown>;
  if (typeof o.project !== 'string' || !o.project) throw new ProviderConfigError('cloudDNS.project is required');
  if (o.hostedZoneName !== undefined && typeof o.hostedZoneName !== 'string') throw new ProviderConfigError('cloudDNS.hostedZoneName must be a string');
  const ref = o.serviceAccountSecretRef as SecretKeyRef | undefined;
  if (ref !== undefined && (typeof ref !== 'object' || typeof ref.name !== 'string' || !ref.name)) throw new ProviderConfigError('cloudDNS.serviceAccountSecretRef.name is required');
  return { project: o.project, hostedZoneName: (o.hostedZoneName as string) || undefined, serviceAccountSecretRef: ref };
}

interface ServiceAccountKey {
  type: 'service_account';
  client_email: string;
  private_key: string;
  token_uri: string;
}
interface AuthorizedUser {
  type: 'authorized_user';
  client_id: string;
  client_secret: string;
  refresh_token: string;
}

/** A service account key (or, from GOOGLE_APPLICATION_CREDENTIALS, gcloud's user credentials); `where` names its source, never its content. */
export function parseGoogleCredentials(json: string, where: string): ServiceAccountKey | AuthorizedUser {
  let k: Record<string, unknown>;
  try {
    k = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new ProviderConfigError(`${where}: not a JSON service account key`);
  }
  if (k.type === 'authorized_user') {
    for (const f of ['client_id', 'client_secret', 'refresh_token']) if (typeof k[f] !== 'string' || !k[f]) throw new ProviderConfigError(`${where}: authorized_user credentials lack "${f}"`);
    return k as unknown as AuthorizedUser;
  }
  for (const f of ['client_email', 'private_key']) if (typeof k[f] !== 'string' || !k[f]) throw new ProviderConfigError(`${where}: the service account key lacks "${f}"`);
  try {
    crypto.createPrivateKey(k.private_key as string);
  } catch {
    throw new ProviderConfigError(`${where}: "private_key" is not a PEM private key`);
  }
  return { type: 'service_account', client_email: k.client_email as string, private_key: k.private_key as string, token_uri: (k.token_uri as string) || 'https://oauth2.googleapis.com/token' };
}

/** Where a bearer token comes from: a key (service account or user) or the GCE metadata server. */
export type GoogleCredentialSource = { key: ServiceAccountKey | AuthorizedUser } | { metadata: string };

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** The RS256 JWT assertion of RFC 7523 §2.1 Google's token endpoint takes for a service account. */
export function serviceAccountAssertion(key: ServiceAccountKey, nowSec: number): string {
  const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iss: key.client_email, scope: CLOUDDNS_SCOPE, aud: key.token_uri, iat: nowSec, exp: nowSec + 3600 }));
  const sig = crypto.sign('sha256', Buffer.from(`${head}.${claims}`), key.private_key);
  return `${head}.${claims}.${b64url(sig)}`;
}


/** A bearer token for Cloud DNS from src, cached until a minute before it expires. */
export function googleAccessToken(src: GoogleCredentialSource, now: () => number): Promise<string> {
  return cachedToken(src, now, () => {
    if ('metadata' in src) {
      const q = new URLSearchParams({ scopes: CLOUDDNS_SCOPE });
      return requestToken(`${src.metadata}/computeMetadata/v1/instance/service-accounts/default/token?${q}`, { headers: { 'metadata-flavor': 'Google' } }, 'Google metadata server token');
    }
    const post = (url: string, form: URLSearchParams, what: string) =>
      requestToken(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }, what);
    if (src.key.type === 'authorized_user') {
      return post('https://oauth2.googleapis.com/token', new URLSearchParams({ grant_type: 'refresh_token', client_id: src.key.client_id, client_secret: src.key.client_secret, refresh_token: src.key.refresh_token }), 'Google token refresh');
    }
    const assertion = serviceAccountAssertion(src.key, Math.floor(now() / 1000));
    return post(src.key.token_uri, new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }), `Google token exchange for ${src.key.client_email}`);
  });
}

/** Application default credentials: the GOOGLE_APPLICATION_CREDENTIALS file, else the metadata server. */
export async function applicationDefaultCredentials(metadataBase = GCE_METADATA): Promise<GoogleCredentialSource> {
  const file = process.env.GOOGLE_APPLICATION_CREDENTIALS;
  if (file) {
    const json = await readFile(file, 'utf8').catch(() => {
      throw new ProviderConfigError(`cloudDNS: GOOGLE_APPLICATION_CREDENTIALS names a file that cannot be read`);
    });
    return { key: parseGoogleCredentials(json, 'cloudDNS: GOOGLE_APPLICATION_CREDENTIALS') };
  }
  return { metadata: metadataBase };
}

/** Cloud DNS refused the request: the status and its error reasons. */
export class CloudDNSError extends Error {
  constructor(readonly status: number, readonly reasons: string[], detail: string, what: string) {
    super(`Cloud DNS ${what}: HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'CloudDNSError';
  }
}

/** Google's error body ({error: {message, errors: [{reason}]}}) of a failed answer; any other body leaves the status alone. */
function cloudDNSError(status: number, text: string, what: string): CloudDNSError {
  let err: { message?: string; errors?: { reason?: string }[] } = {};
  try {
    err = (JSON.parse(text) as { error?: typeof err }).error ?? {};
  } catch {
    // not Google's error body: reported by status
  }
  return new CloudDNSError(status, (err.errors ?? []).map((x) => x.reason ?? ''), err.message ?? '', what);
}

interface RRSet {
  name: string;
  type: string;
  ttl: number;
  rrdatas: string[];
}
interface Change {
  id: string;
  status: 'pending' | 'done';
}

/** tries of a change whose rrset someone changed meanwhile (409/412), in all */
const MAX_ATTEMPTS = 3;
/** How many 1 s looks a change may stay pending before the Challenge is left to retry (Cloud DNS applies them in seconds). */
const CHANGE_POLLS = 60;
const CHANGE_POLL_MS = 1000;

const dotted = (n: string) => (n.endsWith('.') ? n : `${n}.`);

export class CloudDNSClient {
  constructor(
    private readonly creds: GoogleCredentialSource,
    private readonly project: string,
    private readonly hostedZoneName: string | undefined,
    private readonly base = CLOUDDNS_API,
    private readonly now: () => number = Date.now,
  ) {}

  private get projectPath(): string {
    return `/dns/v1/projects/${encodeURIComponent(this.project)}`;
  }

  private async call<T>(method: string, path: string, what: string, body?: unknown): Promise<T> {
    const { res, text } = await fetchWaitingOutThrottling({
      // the token at each attempt: the cached one, or a fresh one once it nears expiry
      send: async () => fetch(`${this.base}${this.projectPath}${path}`, {
        method,
        headers: { authorization: `Bearer ${await googleAccessToken(this.creds, this.now)}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      }),
      errorMessage: (r, t) => cloudDNSError(r.status, t, what).message,
      // 503: the service is busy or down, waited out the same way, but not reported as throttling
      alsoWaitOut: [503],
    });
    if (res.ok) return JSON.parse(text) as T;
    const e = cloudDNSError(res.status, text, what);
    // refused credentials or a project/zone the account cannot see: a retry will not fix it
    if (res.status === 401 || res.status === 403) throw new ProviderConfigError(e.message);
    throw e;
  }

  /** The managed zone holding fqdn: hostedZoneName when set (checked to exist), else the zone whose dnsName is the closest enclosing name. */
  async zoneFor(fqdn: string): Promise<string> {
    if (this.hostedZoneName) {
      try {
        await this.call('GET', `/managedZones/${encodeURIComponent(this.hostedZoneName)}`, `managed zone ${this.hostedZoneName}`);
      } catch (e) {
        if (e instanceof CloudDNSError && e.status === 404) throw new ProviderConfigError(`Cloud DNS: managed zone "${this.hostedZoneName}" not found in project "${this.project}"`);
        throw e;
      }
      return this.hostedZoneName;
    }
    const labels = fqdn.replace(/\.$/, '').split('.');
    for (let i = labels[0] === '_acme-challenge' ? 1 : 0; i < labels.length - 1; i++) {
      const name = `${labels.slice(i).join('.')}.`;
      const got = await this.call<{ managedZones?: { name: string; dnsName: string; visibility?: string }[] }>('GET', `/managedZones?dnsName=${encodeURIComponent(name)}`, `zone lookup of ${name}`);
      // a private zone is not what the CA resolves
      const zone = (got.managedZones ?? []).find((z) => z.dnsName === name && z.visibility !== 'private');
      if (zone) return zone.name;
    }
    throw new ProviderConfigError(`Cloud DNS: no managed zone of project "${this.project}" contains ${fqdn.replace(/^_acme-challenge\./, '').replace(/\.$/, '')}`);
  }

  private async rrset(zone: string, name: string): Promise<RRSet | undefined> {
    const got = await this.call<{ rrsets?: RRSet[] }>('GET', `/managedZones/${encodeURIComponent(zone)}/rrsets?name=${encodeURIComponent(name)}&type=TXT`, `listing TXT ${name}`);
    return (got.rrsets ?? []).find((r) => r.name === name && r.type === 'TXT');
  }

  /** Apply one change and wait until Cloud DNS reports it done. */
  private async change(zone: string, deletions: RRSet[], additions: RRSet[], what: string): Promise<void> {
    const z = `/managedZones/${encodeURIComponent(zone)}/changes`;
    let ch = await this.call<Change>('POST', z, what, { kind: 'dns#change', additions, deletions });
    for (let polls = 0; ch.status !== 'done'; polls++) {
      if (polls >= CHANGE_POLLS) throw new Error(`Cloud DNS ${what}: change ${ch.id} still ${ch.status} after ${CHANGE_POLLS} looks`);
      await new Promise((r) => setTimeout(r, CHANGE_POLL_MS));
      ch = await this.call<Change>('GET', `${z}/${encodeURIComponent(ch.id)}`, `${what} (change ${ch.id})`);
    }
  }

  /** Read-modify-write of the TXT rrset; a conflict (someone changed it meanwhile) re-reads, a few times. */
  private async edit(fqdn: string, what: string, next: (values: string[]) => string[] | undefined, ttl = 60): Promise<void> {
    const zone = await this.zoneFor(fqdn);
    const name = dotted(fqdn);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.rrset(zone, name);
      const values = next(cur?.rrdatas ?? []);
      if (!values) return;
      const additions = values.length ? [{ name, type: 'TXT', ttl: cur?.ttl ?? ttl, rrdatas: values }] : [];
      try {
        await this.change(zone, cur ? [cur] : [], additions, `${what} ${name}`);
        return;
      } catch (e) {
        // 409 alreadyExists / 412 conditionNotMet: the rrset is not what we read
        if (e instanceof CloudDNSError && (e.status === 409 || e.status === 412) && attempt < MAX_ATTEMPTS) continue;
        throw e;
      }
    }
  }

  async present(fqdn: string, value: string): Promise<void> {
    await this.edit(fqdn, 'adding TXT to', (vs) => (vs.some((v) => txtValue(v) === value) ? undefined : [...vs, quotedTxt(value)]));
  }

  async cleanUp(fqdn: string, value: string): Promise<void> {
    await this.edit(fqdn, 'removing TXT from', (vs) => (vs.some((v) => txtValue(v) === value) ? vs.filter((v) => txtValue(v) !== value) : undefined));
  }
}
