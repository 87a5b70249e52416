// DNS-01 through Akamai Edge DNS (Config DNS API v2) with cert-manager's `dns01.akamai` fields:
// `serviceConsumerDomain` (the API client's host, akab-....luna.akamaiapis.net) and the three
// EdgeGrid credentials in Secrets (`clientTokenSecretRef`, `clientSecretSecretRef`,
// `accessTokenSecretRef`).
//
// Plain fetch and node:crypto rather than Akamai's edgegrid package: the signing is two HMACs and
// a hash, and five REST calls are all that is used.
//
// EdgeGrid v1 (EG1-HMAC-SHA256): the signing key is base64(HMAC-SHA256(client_secret, timestamp));
// the signature is base64(HMAC-SHA256(signing key, data to sign)), where the data to sign is, tab
// separated: method, scheme, host, the path with its query, the canonical signed headers (none
// here), the base64 SHA-256 of a POST body (its first max-body bytes; empty otherwise) and the
// Authorization header up to and including `nonce=...;`.
//
// A TXT record set holds every TXT value of a name: presenting adds exactly this value and
// cleaning up removes exactly it (PUT of the rest, DELETE when nothing is left), re-reading when
// someone created the record set meanwhile (409). TXT rdata are quoted strings in Edge DNS.
//   https://techdocs.akamai.com/developer/docs/authenticate-with-edgegrid
//   https://techdocs.akamai.com/edge-dns/reference/get-zone
//   https://techdocs.akamai.com/edge-dns/reference/get-zones-zone-names-name-types-type
//   https://techdocs.akamai.com/edge-dns/reference/post-zones-zone-names-name-types-type
//   https://techdocs.akamai.com/edge-dns/reference/put-zones-zone-names-name-types-type
//   https://techdocs.akamai.com/edge-dns/reference/delete-zones-zone-names-name-types-type
//   https://techdocs.akamai.com/developer/docs/rate-limiting
import crypto from 'node:crypto';
import { ProviderConfigError, type SecretKeyRef } from './secret-ref.ts';
import { fetchWaitingOutThrottling } from './throttling.ts';
import { txtValue } from './txt-rdata.ts';

export interface AkamaiConfig {
  serviceConsumerDomain: string;
  clientTokenSecretRef: SecretKeyRef;
  clientSecretSecretRef: SecretKeyRef;
  accessTokenSecretRef: SecretKeyRef;
}

/** The `dns01.akamai` block, checked field by field (the schema keeps it open). */
export function akamaiConfig(raw: unknown): AkamaiConfig {
  const o = (raw ?? {}) as Record<string, unknown>;
  const scd = o.serviceConsumerDomain;
  if (typeof scd !== 'string' || !scd) throw new ProviderConfigError('akamai.serviceConsumerDomain is required');
  // a host name only: the credentials must not be sent to a path or a scheme someone else picked
  if (!/^[A-Za-z0-9.-]+$/.test(scd)) throw new ProviderConfigError('akamai.serviceConsumerDomain must be a host name (akab-....luna.akamaiapis.net), without scheme or path');
  const ref = (f: string): SecretKeyRef => {
    const v = o[f] as SecretKeyRef | undefined;
    if (!v || typeof v !== 'object' || typeof v.name !== 'string' || !v.name) throw new ProviderConfigError(`akamai.${f} is required (a Secret name and key)`);
    return v;
  };
  return { serviceConsumerDomain: scd, clientTokenSecretRef: ref('clientTokenSecretRef'), clientSecretSecretRef: ref('clientSecretSecretRef'), accessTokenSecretRef: ref('accessTokenSecretRef') };
}

export interface EdgeGridCredentials {
  clientToken: string;
  clientSecret: string;
  accessToken: string;
}

/** EdgeGrid's maximum body length covered by the content hash (the .edgerc default). */
export const EDGEGRID_MAX_BODY = 131072;

/** yyyyMMddTHH:mm:ss+0000 in UTC. */
export function edgeGridTimestamp(at: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}T${p(at.getUTCHours())}:${p(at.getUTCMinutes())}:${p(at.getUTCSeconds())}+0000`;
}

const hmac = (key: string, data: string) => crypto.createHmac('sha256', key).update(data, 'utf8').digest('base64');

/** The Authorization header of one request (EG1-HMAC-SHA256, no signed headers). */
export function edgeGridAuthorization(creds: EdgeGridCredentials, req: { method: string; url: URL; body?: string }, timestamp: string, nonce: string): string {
  const unsigned = `EG1-HMAC-SHA256 client_token=${creds.clientToken};access_token=${creds.accessToken};timestamp=${timestamp};nonce=${nonce};`;
  const method = req.method.toUpperCase();
  const contentHash = method === 'POST' && req.body ? crypto.createHash('sha256').update(Buffer.from(req.body, 'utf8').subarray(0, EDGEGRID_MAX_BODY)).digest('base64') : '';
  const data = [method, req.url.protocol.replace(':', ''), req.url.host, `${req.url.pathname}${req.url.search}`, '', contentHash, unsigned].join('\t');
  return `${unsigned}signature=${hmac(hmac(creds.clientSecret, timestamp), data)}`;
}

/** Edge DNS refused the request: the status and the problem document's title/detail. */
export class AkamaiError extends Error {
  constructor(readonly status: number, detail: string, what: string) {
    super(`Akamai Edge DNS ${what}: HTTP ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'AkamaiError';
  }
}

/** Edge DNS's problem document (title, detail) of a failed answer; a body that is not one leaves the status alone. */
function akamaiError(status: number, text: string, what: string): AkamaiError {
  let p: { title?: string; detail?: string } = {};
  try {
    p = JSON.parse(text) as typeof p;
  } catch {
    // not a problem document: the status says enough
  }
  return new AkamaiError(status, [p.title, p.detail].filter(Boolean).join(': '), what);
}

interface RecordSet {
  name: string;
  type: string;
  ttl: number;
  rdata: string[];
}

/** tries of a write whose record set someone changed meanwhile (409/404), in all */
const MAX_ATTEMPTS = 3;

/** Per API host and record set: the last edit queued from this process (see AkamaiDNSClient.edit). */
const setEdits = new Map<string, Promise<void>>();

export class AkamaiDNSClient {
  private readonly base: string;
  constructor(private readonly creds: EdgeGridCredentials, serviceConsumerDomain: string, base?: string, private readonly now: () => number = Date.now) {
    this.base = base ?? `https://${serviceConsumerDomain}`;
  }

  /** undefined for a 404 when `missingOk` */
  private async call<T>(method: string, path: string, what: string, body?: unknown, missingOk = false): Promise<T | undefined> {
    const url = new URL(`${this.base}${path}`);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const { res, text: out } = await fetchWaitingOutThrottling({
      // signed at each attempt: the timestamp and nonce are the request's own
      send: () => fetch(url, {
        method,
        headers: {
          authorization: edgeGridAuthorization(this.creds, { method, url, body: text }, edgeGridTimestamp(new Date(this.now())), crypto.randomUUID()),
          accept: 'application/json',
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: text,
        signal: AbortSignal.timeout(30_000),
      }),
      errorMessage: (r, t) => akamaiError(r.status, t, what).message,
    });
    if (res.status === 404 && missingOk) return undefined;
    if (!res.ok) {
      const err = akamaiError(res.status, out, what);
      // credentials refused: no retry will fix it until someone changes the Secrets
      if (res.status === 401 || res.status === 403) throw new ProviderConfigError(err.message);
      throw err;
    }
    return (out ? JSON.parse(out) : undefined) as T;
  }

  /** The closest enclosing Edge DNS zone of fqdn, asking name by name from the most specific. */
  async zoneFor(fqdn: string): Promise<string> {
    const labels = fqdn.replace(/\.$/, '').toLowerCase().split('.');
    for (let i = labels[0] === '_acme-challenge' ? 1 : 0; i < labels.length - 1; i++) {
      const name = labels.slice(i).join('.');
      const zone = await this.call<{ zone: string }>('GET', `/config-dns/v2/zones/${encodeURIComponent(name)}`, `zone lookup of ${name}`, undefined, true);
      if (zone?.zone?.toLowerCase() === name) return name;
    }
    throw new ProviderConfigError(`Akamai Edge DNS: no zone of this API client contains ${fqdn.replace(/^_acme-challenge\./, '').replace(/\.$/, '')}`);
  }

  /**
   * Edit API v2 replaces a record set whole (PUT) with no precondition: two edits of one set that
   * read it at once would each write back a set without the other's value. Edits of one set from
   * this process therefore go one after another.
   */
  private async edit(fqdn: string, what: string, next: (values: string[]) => string[] | undefined): Promise<void> {
    const name = fqdn.replace(/\.$/, '').toLowerCase();
    const zone = await this.zoneFor(name);
    const path = `/config-dns/v2/zones/${encodeURIComponent(zone)}/names/${encodeURIComponent(name)}/types/TXT`;
    const key = `${this.base}${path}`;
    const before = setEdits.get(key) ?? Promise.resolve();
    const mine = before.then(() => this.editNow(path, name, what, next));
    const settled = mine.catch(() => {});
    setEdits.set(key, settled);
    try {
      return await mine;
    } finally {
      if (setEdits.get(key) === settled) setEdits.delete(key);
    }
  }

  private async editNow(path: string, name: string, what: string, next: (values: string[]) => string[] | undefined): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const cur = await this.call<RecordSet>('GET', path, `reading TXT ${name}`, undefined, true);
      const values = (cur?.rdata ?? []).map(txtValue);
      const want = next(values);
      if (!want) return;
      // the other values go back exactly as they were read; only ours is added or left out
      const keep = (cur?.rdata ?? []).filter((r) => want.includes(txtValue(r)));
      const added = want.filter((v) => !values.includes(v)).map((v) => `"${v}"`);
      const rdata = [...keep, ...added];
      try {
        if (!rdata.length) await this.call('DELETE', path, `${what} ${name}`, undefined, true);
        else if (cur) await this.call('PUT', path, `${what} ${name}`, { name, type: 'TXT', ttl: cur.ttl, rdata });
        else await this.call('POST', path, `${what} ${name}`, { name, type: 'TXT', ttl: 60, rdata });
        return;
      } catch (e) {
        // 409: created by someone else since we read it (or 404: deleted); read again
        if (e instanceof AkamaiError && (e.status === 409 || e.status === 404) && attempt < MAX_ATTEMPTS) continue;
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
