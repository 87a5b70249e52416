// DNS-01 through an acme-dns server (https://github.com/joohoi/acme-dns), as cert-manager's
// `dns01.acmeDNS` does: `host` is the acme-dns base URL, `accountSecretRef` holds the JSON that
// `acme-dns register` returns, keyed by domain:
//   {"example.com": {"username": "...", "password": "...", "fulldomain": "....auth.example.org", "subdomain": "...", "allowfrom": []}}
// The user points `_acme-challenge.<domain>` at `fulldomain` with a CNAME once; each challenge then
// is one POST /update (X-Api-User, X-Api-Key, {subdomain, txt}). acme-dns keeps the two latest
// values per account and has no delete call, so cleanup does nothing (cert-manager's behaviour).
//   https://github.com/joohoi/acme-dns#update-endpoint
import { ProviderConfigError } from './secret-ref.ts';
import { fetchWaitingOutThrottling } from './throttling.ts';

export interface AcmeDNSAccount {
  username: string;
  password: string;
  fulldomain: string;
  subdomain: string;
}

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
  const errorMessage = (status: number, text: string): string => {
    let error = '';
    try {
      error = (JSON.parse(text) as { error?: string }).error ?? '';
    } catch {
      // not JSON: the status says enough
    }
    return `acme-dns update at ${url.origin}: HTTP ${status}${error ? ` ${error}` : ''}`;
  };
  const { res, text } = await fetchWaitingOutThrottling({
    send: () => fetch(url, {
      method: 'POST',
      headers: { 'x-api-user': account.username, 'x-api-key': account.password, 'content-type': 'application/json' },
      body: JSON.stringify({ subdomain: account.subdomain, txt: value }),
      signal: AbortSignal.timeout(30_000),
    }),
    errorMessage: (r, t) => errorMessage(r.status, t),
  });
  if (res.ok) return;
  const message = errorMessage(res.status, text);
  if (res.status === 401 || res.status === 403) throw new ProviderConfigError(message);
  throw new Error(message);
}
