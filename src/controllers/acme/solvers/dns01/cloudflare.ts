// DNS-01 through Cloudflare's API v4 with plain fetch (a handful of REST calls; Cloudflare's SDK
// would bring nothing we use): cert-manager's `dns01.cloudflare` fields, `apiTokenSecretRef`
// (Bearer token) or `apiKeySecretRef` + `email` (X-Auth-Key/X-Auth-Email, the legacy global key).
// The zone is the closest enclosing name Cloudflare knows (GET /zones?name=...), the record is
// created with exactly the challenge value (quoted, as the API documents TXT content) and only
// records with that name, type and value are ever deleted. 429 answers are waited out
// (Retry-After, up to 10 s), then left to the controller's per-Challenge backoff as a
// ProviderThrottledError carrying the wait the server asked for.
//   https://developers.cloudflare.com/api/resources/zones/methods/list/
//   https://developers.cloudflare.com/api/resources/dns/subresources/records/
import { ProviderConfigError } from './secret-ref.ts';
import { fetchWaitingOutThrottling } from './throttling.ts';
import { quotedTxt, txtValue } from './txt-rdata.ts';

export const CLOUDFLARE_API = 'https://api.cloudflare.com/client/v4';

export type CloudflareAuth = { token: string } | { apiKey: string; email: string };

interface Envelope<T> {
  success: boolean;
  errors?: { code: number; message: string }[];
  result: T;
}

interface DNSRecord {
  id: string;
  type: string;
  name: string;
  content: string;
}

/** Cloudflare refused the request: its error codes and messages, and the HTTP status. */
export class CloudflareError extends Error {
  constructor(readonly status: number, readonly errors: { code: number; message: string }[], what: string) {
    super(`Cloudflare ${what}: HTTP ${status}${errors.length ? `: ${errors.map((e) => `${e.code} ${e.message}`).join('; ')}` : ''}`);
    this.name = 'CloudflareError';
  }
}

/** Cloudflare's answer envelope, or undefined when the body is not JSON. */
function envelope<T>(text: string): Envelope<T> | undefined {
  try {
    return JSON.parse(text) as Envelope<T>;
  } catch {
    return undefined;
  }
}

export class CloudflareClient {
  constructor(private readonly auth: CloudflareAuth, private readonly base = CLOUDFLARE_API) {}

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if ('token' in this.auth) h.authorization = `Bearer ${this.auth.token}`;
    else {
      h['x-auth-key'] = this.auth.apiKey;
      h['x-auth-email'] = this.auth.email;
    }
    return h;
  }

  private async call<T>(method: string, path: string, what: string, body?: unknown): Promise<T> {
    const { res, text } = await fetchWaitingOutThrottling({
      send: () => fetch(`${this.base}${path}`, { method, headers: this.headers(), body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) }),
      errorMessage: (r, t) => new CloudflareError(r.status, envelope(t)?.errors ?? [], what).message,
    });
    const env = envelope<T>(text);
    if (!res.ok || !env?.success) {
      const err = new CloudflareError(res.status, env?.errors ?? [], what);
      // credentials refused: no retry will fix it until someone changes the Secret
      if (res.status === 401 || res.status === 403) throw new ProviderConfigError(err.message);
      throw err;
    }
    return env.result;
  }

  /** The zone id of the closest enclosing zone of fqdn, asking name by name from the most specific. */
  async zoneFor(fqdn: string): Promise<{ id: string; name: string }> {
    const labels = fqdn.replace(/\.$/, '').split('.');
    // a zone is at least two labels; the challenge label itself is never a zone
    for (let i = labels[0] === '_acme-challenge' ? 1 : 0; i < labels.length - 1; i++) {
      const name = labels.slice(i).join('.');
      const zones = await this.call<{ id: string; name: string }[]>('GET', `/zones?name=${encodeURIComponent(name)}&status=active`, `zone lookup of ${name}`);
      const zone = zones.find((z) => z.name === name);
      if (zone) return zone;
    }
    throw new ProviderConfigError(`Cloudflare: no zone of this account contains ${fqdn.replace(/^_acme-challenge\./, '')}`);
  }

  /**
   * Our records at fqdn: listed by name and type, and matched on the value their content stands
   * for, since content is quoted character-strings as documented (and as the dashboard writes it)
   * or, written unquoted, the value itself; the API's content filter compares the text.
   */
  private async matching(zoneId: string, fqdn: string, value: string): Promise<DNSRecord[]> {
    const name = fqdn.replace(/\.$/, '');
    const records = await this.call<DNSRecord[]>('GET', `/zones/${zoneId}/dns_records?type=TXT&name=${encodeURIComponent(name)}&per_page=100`, `listing TXT ${name}`);
    // filter again: an API that ignored a filter must not make us delete someone else's record
    return records.filter((r) => r.type === 'TXT' && r.name === name && txtValue(r.content) === value);
  }

  async present(fqdn: string, value: string, ttl = 120): Promise<void> {
    const zone = await this.zoneFor(fqdn);
    if ((await this.matching(zone.id, fqdn, value)).length) return;
    try {
      await this.call('POST', `/zones/${zone.id}/dns_records`, `creating TXT ${fqdn}`, { type: 'TXT', name: fqdn.replace(/\.$/, ''), content: quotedTxt(value), ttl });
    } catch (e) {
      // 81058: an identical record already exists (a retry after a lost answer): what we wanted
      if (e instanceof CloudflareError && e.errors.some((x) => x.code === 81058 || x.code === 81057)) return;
      throw e;
    }
  }

  async cleanUp(fqdn: string, value: string): Promise<void> {
    const zone = await this.zoneFor(fqdn);
    for (const r of await this.matching(zone.id, fqdn, value)) {
      await this.call('DELETE', `/zones/${zone.id}/dns_records/${r.id}`, `deleting TXT ${fqdn}`);
    }
  }
}
