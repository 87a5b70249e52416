// OAuth 2.0 access tokens for the cloud DNS APIs (Google Cloud DNS, Azure DNS): one reading of a
// token endpoint's answer (RFC 6749 §5.1 success, §5.2 error) and one cache of tokens per
// credential, reused until a minute before they expire, so every Challenge of an Issuer does not
// cost one more exchange.
import crypto from 'node:crypto';
import { ProviderConfigError } from './secret-ref.ts';

export interface TokenAnswer {
  access_token: string;
  expires_in?: number;
}

/**
 * POSTs or GETs a token endpoint. A refusal of the credentials (400/401/403: invalid_grant,
 * invalid_client, ...) is a ProviderConfigError, anything else an ordinary error to retry. Only the
 * first line of error_description is kept: Entra ID puts trace ids and times after it.
 */
export async function requestToken(url: string, init: RequestInit, what: string): Promise<TokenAnswer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: reported by status
  }
  if (!res.ok || typeof body.access_token !== 'string') {
    const desc = typeof body.error_description === 'string' ? body.error_description.split(/\r?\n/)[0] : '';
    const detail = [body.error, desc].filter((x) => typeof x === 'string' && x).join(': ');
    const msg = `${what}: HTTP ${res.status}${detail ? `: ${detail}` : ''}`;
    if (res.status === 400 || res.status === 401 || res.status === 403) throw new ProviderConfigError(msg);
    throw new Error(msg);
  }
  const expires = Number(body.expires_in);
  return { access_token: body.access_token, ...(Number.isFinite(expires) ? { expires_in: expires } : {}) };
}

const tokens = new Map<string, { token: string; until: number }>();

/** The cached token of this credential (any JSON-able description of it), else a fresh one from fetchToken. */
export async function cachedToken(credential: unknown, now: () => number, fetchToken: () => Promise<TokenAnswer>): Promise<string> {
  const id = crypto.createHash('sha256').update(JSON.stringify(credential)).digest('hex');
  const hit = tokens.get(id);
  if (hit && hit.until > now()) return hit.token;
  const got = await fetchToken();
  tokens.set(id, { token: got.access_token, until: now() + Math.max(0, (got.expires_in ?? 3600) - 60) * 1000 });
  return got.access_token;
}
