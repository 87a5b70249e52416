// DNS-01 through an acme-dns server (https://github.com/joohoi/acme-dns), as cert-manager's
// `dns01.acmeDNS` does: `host` is the acme-dns base URL, `accountSecretRef` holds the JSON that
// `acme-dns register` returns, keyed by domain:
//   {"example.com": {"username": "...", "password": "...", "fulldomain": "....auth.example.org", "subdomain": "...", "allowfrom": []}}
// The user points `_acme-challenge.<domain>` at `fulldomain` with a CNAME once; each challenge then
// is one POST /update (X-Api-User, X-Api-Key, {subdomain, txt}). acme-dns keeps the two latest
// values per account and has no delete call, so cleanup does nothing (cert-manager's behaviour).
//   https://github.com/joohoi/acme-dns#update-endpoint
import { ProviderConfigError } from './secret-ref.ts';
import { throttledError, throttledRetryMs } from './throttling.ts';

export interface AcmeDNSAccount {
  username: string;
  password: string;
  fulldomain: string;
  subdomain: string;
}

const MAX_ATTEMPTS = 3;

/** The account for a domain from the accounts JSON; the message names the domain, never the password. */
export function accountFor(json: string, domain: string, where: string): AcmeDNSAccount {
  let accounts: Record<string, Partial<AcmeDNSAccount>>;
  try {
    accounts = JSON.parse(json) as typeof accounts;
  } catch {
    throw new ProviderConfigError(`acmeDNS: ${where} is not the JSON that acme-dns register gives`);
  }
  const a = accounts?.[domain] ?? accounts?.[`*.${domain}`];
  if (!a) throw new ProviderConfigError(`acmeDNS: ${where} has no account for ${domain}`);
  if (!a.username || !a.password || !a.subdomain || !a.fulldomain) throw new ProviderConfigError(`acmeDNS: the account for ${domain} in ${where} lacks username, password, subdomain or fulldomain`);
  return a as AcmeDNSAccount;
}

export async function acmeDNSUpdate(host: string, account: AcmeDNSAccount, value: string): Promise<void> {
  let url: URL;
  try {
    url = new URL('update', host.endsWith('/') ? host : `${host}/`);
  } catch {
    throw new ProviderConfigError(`acmeDNS: host ${JSON.stringify(host)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ProviderConfigError(`acmeDNS: host ${host} is not http(s)`);
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'x-api-user': account.username, 'x-api-key': account.password, 'content-type': 'application/json' },
      body: JSON.stringify({ subdomain: account.subdomain, txt: value }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const wait = res.status === 429 ? throttledRetryMs(res.headers.get('retry-after'), attempt < MAX_ATTEMPTS) : undefined;
    if (wait !== undefined) {
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    if (res.ok) return;
    let error = '';
    try {
      error = (JSON.parse(text) as { error?: string }).error ?? '';
    } catch {
      // not JSON: the status says enough
    }
    const message = `acme-dns update at ${url.origin}: HTTP ${res.status}${error ? ` ${error}` : ''}`;
    if (res.status === 401 || res.status === 403) throw new ProviderConfigError(message);
    if (res.status === 429) throw throttledError(message, res.headers.get('retry-after'));
    throw new Error(message);
  }
}
