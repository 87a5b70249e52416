// DNS-01 through DigitalOcean's API v2 with plain fetch: cert-manager's `dns01.digitalocean`
// (`tokenSecretRef`, a personal access token sent as a Bearer token). The zone is the closest
// enclosing domain of the account (GET /v2/domains/{name}); one TXT record with exactly the
// challenge value is created, and only records of that name, type and value are deleted. 429 is
// waited out (Retry-After or RateLimit-Reset, up to 10 s), then left to the per-Challenge backoff.
//   https://docs.digitalocean.com/reference/api/digitalocean/#tag/Domains
//   https://docs.digitalocean.com/reference/api/digitalocean/#tag/Domain-Records
//   https://docs.digitalocean.com/reference/api/digitalocean/#section/Introduction/Rate-Limit
import { ProviderConfigError } from './secret-ref.ts';
import { fetchWaitingOutThrottling } from './throttling.ts';

export const DIGITALOCEAN_API = 'https://api.digitalocean.com';

interface DomainRecord {
  id: number;
  type: string;
  /** relative to the domain ("_acme-challenge.www", "@") */
  name: string;
  data: string;
}

export class DigitalOceanError extends Error {
  constructor(readonly status: number, readonly id: string | undefined, detail: string, what: string) {
    super(`DigitalOcean ${what}: HTTP ${status}${id ? ` ${id}` : ''}${detail ? `: ${detail}` : ''}`);
    this.name = 'DigitalOceanError';
  }
}

const MAX_PAGES = 20;

/** DigitalOcean's error body ({id, message}) of a failed answer; a body that is not JSON leaves the status alone. */
function digitalOceanError(status: number, text: string, what: string): DigitalOceanError {
  let e: { id?: string; message?: string } = {};
  try {
    e = JSON.parse(text) as typeof e;
  } catch {
    // not JSON: the status says enough
  }
  return new DigitalOceanError(status, e.id, e.message ?? '', what);
}

/** Without Retry-After, DigitalOcean's ratelimit-reset (epoch seconds) says when the window reopens. */
function resetMs(h: Headers): number | undefined {
  const reset = Number(h.get('ratelimit-reset'));
  return Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : undefined;
}

export class DigitalOceanClient {
  constructor(private readonly token: string, private readonly base = DIGITALOCEAN_API) {}

  /** undefined for a 404 when `missingOk` (zone lookup asks for names that are not domains) */
  private async call<T>(method: string, path: string, what: string, body?: unknown, missingOk = false): Promise<T | undefined> {
    const { res, text } = await fetchWaitingOutThrottling({
      send: () => fetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      }),
      errorMessage: (r, t) => digitalOceanError(r.status, t, what).message,
      askedMs: resetMs,
    });
    if (res.status === 404 && missingOk) return undefined;
    if (!res.ok) {
      const err = digitalOceanError(res.status, text, what);
      if (res.status === 401 || res.status === 403) throw new ProviderConfigError(err.message);
      throw err;
    }
    return (res.status === 204 || !text ? undefined : JSON.parse(text)) as T;
  }

  async zoneFor(fqdn: string): Promise<string> {
    const labels = fqdn.replace(/\.$/, '').split('.');
    for (let i = labels[0] === '_acme-challenge' ? 1 : 0; i < labels.length - 1; i++) {
      const name = labels.slice(i).join('.');
      const found = await this.call<{ domain: { name: string } }>('GET', `/v2/domains/${encodeURIComponent(name)}`, `domain lookup of ${name}`, undefined, true);
      if (found?.domain?.name === name) return name;
    }
    throw new ProviderConfigError(`DigitalOcean: no domain of this account contains ${fqdn.replace(/^_acme-challenge\./, '')}`);
  }

  private async matching(zone: string, fqdn: string, value: string): Promise<DomainRecord[]> {
    const name = fqdn.replace(/\.$/, '');
    const relative = name === zone ? '@' : name.slice(0, -(zone.length + 1));
    const out: DomainRecord[] = [];
    let path: string | undefined = `/v2/domains/${encodeURIComponent(zone)}/records?type=TXT&name=${encodeURIComponent(name)}&per_page=200`;
    for (let page = 0; path && page < MAX_PAGES; page++) {
      const r: { domain_records: DomainRecord[]; links?: { pages?: { next?: string } } } | undefined = await this.call('GET', path, `listing TXT ${name}`);
      out.push(...(r?.domain_records ?? []));
      const next: string | undefined = r?.links?.pages?.next;
      path = next ? new URL(next).pathname + new URL(next).search : undefined;
    }
    // filter again: never delete a record the API returned for a filter it ignored
    return out.filter((r) => r.type === 'TXT' && r.name === relative && r.data === value);
  }

  async present(fqdn: string, value: string, ttl = 60): Promise<void> {
    const zone = await this.zoneFor(fqdn);
    if ((await this.matching(zone, fqdn, value)).length) return;
    const name = fqdn.replace(/\.$/, '');
    await this.call('POST', `/v2/domains/${encodeURIComponent(zone)}/records`, `creating TXT ${name}`, { type: 'TXT', name: name.slice(0, -(zone.length + 1)), data: value, ttl });
  }

  async cleanUp(fqdn: string, value: string): Promise<void> {
    const zone = await this.zoneFor(fqdn);
    for (const r of await this.matching(zone, fqdn, value)) {
      await this.call('DELETE', `/v2/domains/${encodeURIComponent(zone)}/records/${r.id}`, `deleting TXT ${fqdn}`);
    }
  }
}
