import crypto from 'node:crypto';
import { parseRetryAfter } from '../runtime/retry-after.ts';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { AcmeError, type AcmeProblem } from './errors.ts';
import { base64url, externalAccountBinding, jwkThumbprint, publicJwk, signJws } from './jws.ts';
import { parseRenewalInfo, type RenewalInfo } from './ari.ts';

export { AcmeError, type AcmeProblem } from './errors.ts';
export { generateAccountKey, jwkThumbprint } from './jws.ts';

export type AcmeStatus = 'pending' | 'ready' | 'processing' | 'valid' | 'invalid' | 'expired' | 'deactivated' | 'revoked';

export interface AcmeIdentifier {
  type: 'dns' | 'ip';
  value: string;
}

export interface AcmeDirectory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
  revokeCert?: string;
  keyChange?: string;
  renewalInfo?: string;
  meta?: {
    termsOfService?: string;
    website?: string;
    caaIdentities?: string[];
    externalAccountRequired?: boolean;
    profiles?: Record<string, string>;
  };
}

export interface AcmeAccount {
  url: string;
  status: string;
  /** the account's contact URLs (`mailto:...`), as the CA holds them */
  contact?: string[];
}

type AccountBody = { status?: string; contact?: unknown; orders?: string };

/** An account object as the CA answered it; a missing status is "valid" (RFC 8555 §7.1.2). */
function accountOf(url: string, body: AccountBody): AcmeAccount {
  const contact = Array.isArray(body.contact) ? body.contact.filter((c): c is string => typeof c === 'string') : undefined;
  return { url, status: body.status ?? 'valid', ...(contact ? { contact } : {}) };
}

export interface AcmeOrder {
  /** The order URL (from Location, or the URL it was fetched from). */
  url: string;
  status: AcmeStatus;
  expires?: string;
  identifiers: AcmeIdentifier[];
  authorizations: string[];
  finalize: string;
  certificate?: string;
  notBefore?: string;
  notAfter?: string;
  profile?: string;
  replaces?: string;
  error?: AcmeProblem;
}

export interface AcmeChallenge {
  type: string;
  url: string;
  status: AcmeStatus;
  token: string;
  validated?: string;
  error?: AcmeProblem;
}

export interface AcmeAuthorization {
  url: string;
  identifier: AcmeIdentifier;
  status: AcmeStatus;
  expires?: string;
  wildcard?: boolean;
  challenges: AcmeChallenge[];
}

export interface AcmeRequestInfo {
  method: string;
  url: string;
  status: number;
  durationMs: number;
}

export interface AcmeClientOptions {
  directoryUrl: string;
  accountKeyPem: string;
  /** Known account URL (kid); without it the first account-bound request looks the account up. */
  accountUrl?: string;
  /** PEM bundle trusted for the ACME server's TLS certificate (Issuer.spec.acme.caBundle); default: Node's trust store. */
  caPem?: string;
  skipTLSVerify?: boolean;
  onRequest?: (info: AcmeRequestInfo) => void;
  /** Injectable for tests that must not wait for real. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock the directory's age is measured on (ms since the epoch); Date.now by default. */
  now?: () => number;
  /**
   * Poll schedule for authorizations and orders. Pebble never sends Retry-After and validates in milliseconds,
   * so a short first interval saves both time and requests.
   */
  poll?: { initialMs?: number; maxMs?: number; timeoutMs?: number };
  /** Upper bound on any single wait the server asks for (Retry-After); longer requests fail instead. */
  maxRetryAfterMs?: number;
  maxBadNonceRetries?: number;
  maxRateLimitRetries?: number;
  requestTimeoutMs?: number;
  userAgent?: string;
}

interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

const PROBLEM = 'urn:ietf:params:acme:error:';
/** how long a directory read is used before it is read again */
const DIRECTORY_MAX_AGE_MS = 3_600_000;
const MAX_BODY = 4 * 1024 * 1024;

/** The URLs of `Link: <url>;rel="<rel>"` headers, resolved against base. */
export function linkUrls(rawHeaders: string[], rel: string, base: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() !== 'link') continue;
    for (const part of rawHeaders[i + 1].split(/,(?=\s*<)/)) {
      const m = /^\s*<([^>]*)>(.*)$/.exec(part);
      if (!m) continue;
      const rels = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(m[2])?.[1].split(/\s+/) ?? [];
      if (rels.includes(rel)) out.push(new URL(m[1], base).toString());
    }
  }
  return out;
}

/** The issuer CN of the top-most certificate of a PEM chain, which is what preferredChain is matched against. */
export function topIssuerCommonName(chainPem: string): string | undefined {
  const pems = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const top = pems.at(-1);
  if (!top) return undefined;
  const issuer = new crypto.X509Certificate(top).issuer;
  return issuer
    .split('\n')
    .find((l) => l.startsWith('CN='))
    ?.slice(3);
}

/** The error an invalid or expired order stands for (its problem document, named with the order); undefined otherwise. */
export function failedOrderProblem(order: AcmeOrder): AcmeError | undefined {
  if (order.status !== 'invalid' && order.status !== 'expired') return undefined;
  return new AcmeError(order.error ?? { type: `${PROBLEM}orderNotReady`, detail: 'order failed without a problem' }, {
    context: `order ${order.url} for ${order.identifiers.map((i) => i.value).join(', ')} is ${order.status}`,
  });
}

/**
 * A small RFC 8555 client. It keeps every Replay-Nonce it is given, caches the directory and polls on a short
 * schedule, so that a single-name certificate with a known account costs 7-8 requests rather than the 14+ of
 * clients that fetch a fresh nonce before every POST.
 */
export class AcmeClient {
  readonly directoryUrl: string;
  private accountUrlValue?: string;
  private readonly accountKey: crypto.KeyObject;
  private readonly agent: http.Agent;
  private readonly opts: AcmeClientOptions;
  private readonly sleep: (ms: number) => Promise<void>;
  private directory?: Promise<AcmeDirectory>;
  private directoryReadAt = 0;
  private nonces: string[] = [];
  private thumbprint?: string;

  constructor(opts: AcmeClientOptions) {
    this.opts = opts;
    this.directoryUrl = opts.directoryUrl;
    this.accountUrlValue = opts.accountUrl;
    this.accountKey = crypto.createPrivateKey(opts.accountKeyPem);
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.agent = opts.directoryUrl.startsWith('https:')
      ? new https.Agent({ keepAlive: true, maxSockets: 16, ca: opts.caPem, rejectUnauthorized: !opts.skipTLSVerify })
      : new http.Agent({ keepAlive: true, maxSockets: 16 });
  }

  get accountUrl(): string | undefined {
    return this.accountUrlValue;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  keyAuthorization(token: string): string {
    this.thumbprint ??= jwkThumbprint(this.accountKey);
    return `${token}.${this.thumbprint}`;
  }

  dns01TxtValue(token: string): string {
    return base64url(crypto.createHash('sha256').update(this.keyAuthorization(token)).digest());
  }

  /**
   * The directory, read again once it is an hour old: a CA that starts offering renewalInfo or
   * changes its profiles (meta.profiles) is seen by a running certsmith, not only after a restart.
   */
  getDirectory(): Promise<AcmeDirectory> {
    const now = (this.opts.now ?? Date.now)();
    if (this.directory && now - this.directoryReadAt >= DIRECTORY_MAX_AGE_MS) this.directory = undefined;
    if (!this.directory) {
      this.directoryReadAt = now;
      this.directory = (async () => {
        const res = await this.request('GET', this.directoryUrl);
        this.keepNonce(res);
        if (res.status !== 200) throw this.problemFrom(res, `fetching ACME directory ${this.directoryUrl}`);
        return JSON.parse(res.body.toString('utf8')) as AcmeDirectory;
      })();
      // A failed fetch must not poison the cache.
      this.directory.catch(() => (this.directory = undefined));
    }
    return this.directory;
  }

  async registerAccount(opts: {
    email?: string;
    termsOfServiceAgreed: true;
    eab?: { keyId: string; hmacKeyBase64: string };
  }): Promise<AcmeAccount> {
    const dir = await this.getDirectory();
    const payload: Record<string, unknown> = { termsOfServiceAgreed: opts.termsOfServiceAgreed };
    if (opts.email) payload.contact = [`mailto:${opts.email}`];
    if (opts.eab) payload.externalAccountBinding = externalAccountBinding(this.accountKey, opts.eab, dir.newAccount);
    return this.accountRequest(dir.newAccount, payload);
  }

  /** Looks up the account of this key without creating one; AcmeError accountDoesNotExist when there is none. */
  async findAccount(): Promise<AcmeAccount> {
    const dir = await this.getDirectory();
    return this.accountRequest(dir.newAccount, { onlyReturnExisting: true });
  }

  private async accountRequest(url: string, payload: unknown): Promise<AcmeAccount> {
    const res = await this.post(url, payload, { useJwk: true });
    const location = res.headers.location;
    if (!location) throw new Error('ACME server returned no account URL (Location header)');
    this.accountUrlValue = new URL(location, url).toString();
    return accountOf(this.accountUrlValue, JSON.parse(res.body.toString('utf8')) as AccountBody);
  }

  /** Replaces the account's contact URLs (RFC 8555 §7.3.2); an empty list removes them all. */
  async updateAccountContact(contact: string[]): Promise<AcmeAccount> {
    const url = await this.kid();
    return accountOf(url, this.json(await this.post(url, { contact })) as AccountBody);
  }

  /** The account object (POST-as-GET of the account URL); `orders` is the URL of its orders list, when the CA offers one. */
  async getAccount(): Promise<AcmeAccount & { orders?: string }> {
    const url = await this.kid();
    const body = this.json(await this.post(url, undefined)) as AccountBody;
    return { ...accountOf(url, body), ...(body.orders ? { orders: new URL(body.orders, url).toString() } : {}) };
  }

  /** Deactivates the account (RFC 8555 §7.3.6); the server refuses it from then on. */
  async deactivateAccount(): Promise<AcmeAccount> {
    const url = await this.kid();
    const body = this.json(await this.post(url, { status: 'deactivated' })) as { status?: string };
    return { url, status: body.status ?? 'deactivated' };
  }

  /**
   * Revokes a certificate (RFC 8555 §7.6), by default one this account ordered, signed with the
   * account key. reason: an RFC 5280 CRLReason code (0 unspecified, 1 keyCompromise, 4 superseded,
   * 5 cessationOfOperation, ...). `signedBy: 'certificate key'`: this client was made with the
   * certificate's own private key for its "account key", and the request carries that key's JWK
   * instead of an account URL, so no account is needed: for a certificate whose account is lost
   * or is another's.
   */
  async revokeCertificate(certificateDer: Buffer, reason?: number, signedBy: 'account' | 'certificate key' = 'account'): Promise<void> {
    const dir = await this.getDirectory();
    if (!dir.revokeCert) throw new Error(`ACME server ${this.directoryUrl} offers no revokeCert`);
    await this.post(dir.revokeCert, { certificate: base64url(certificateDer), ...(reason !== undefined ? { reason } : {}) }, { useJwk: signedBy === 'certificate key' });
  }

  /**
   * Account key rollover (RFC 8555 §7.3.5): the inner JWS, signed by the new key with its JWK and
   * no nonce, names the account and the old key; the outer JWS is signed by the old key. On
   * success the server knows the account by the new key only; this client keeps the old one, so
   * the caller builds a new client.
   */
  async changeAccountKey(newKeyPem: string): Promise<void> {
    const dir = await this.getDirectory();
    if (!dir.keyChange) throw new Error(`ACME server ${this.directoryUrl} offers no keyChange`);
    const account = await this.kid();
    const inner = signJws(crypto.createPrivateKey(newKeyPem), { url: dir.keyChange }, { account, oldKey: publicJwk(this.accountKey) });
    await this.post(dir.keyChange, inner);
  }

  /**
   * The order URLs of the account's orders list (RFC 8555 §7.1.2.1), following `Link: rel="next"`
   * for at most maxPages pages; `complete` says whether the list ended within them.
   */
  async listOrders(ordersUrl: string, maxPages = 10): Promise<{ urls: string[]; complete: boolean }> {
    const urls: string[] = [];
    let next: string | undefined = ordersUrl;
    for (let page = 0; next && page < maxPages; page++) {
      const res = await this.post(next, undefined);
      const body = this.json(res) as { orders?: string[] };
      urls.push(...(body.orders ?? []).map((u) => new URL(u, next).toString()));
      next = linkUrls(res.rawHeaders, 'next', next)[0];
    }
    return { urls, complete: !next };
  }

  async createOrder(opts: {
    identifiers: (string | AcmeIdentifier)[];
    profile?: string;
    notBefore?: Date | string;
    notAfter?: Date | string;
    /** RFC 9773 §5: the ARI CertID of the certificate this order replaces. */
    replaces?: string;
  }): Promise<AcmeOrder> {
    const dir = await this.getDirectory();
    const payload: Record<string, unknown> = {
      identifiers: opts.identifiers.map((id) =>
        typeof id === 'string' ? { type: net.isIP(id) ? 'ip' : 'dns', value: id } : id,
      ),
    };
    if (opts.notBefore) payload.notBefore = new Date(opts.notBefore).toISOString();
    if (opts.notAfter) payload.notAfter = new Date(opts.notAfter).toISOString();
    if (opts.profile) payload.profile = opts.profile;
    if (opts.replaces) payload.replaces = opts.replaces;
    const res = await this.post(dir.newOrder, payload);
    const location = res.headers.location;
    if (!location) throw new Error('ACME server returned no order URL (Location header)');
    return { ...(this.json(res) as AcmeOrder), url: new URL(location, dir.newOrder).toString() };
  }

  /**
   * RFC 9773 §4.2: GET (unauthenticated, no nonce spent) of the renewalInfo resource for a CertID.
   * Undefined when the directory has no renewalInfo. Throws AcmeError for an error answer
   * (retryAfterMs set when the server sent Retry-After) and Error for a malformed body.
   */
  async getRenewalInfo(certId: string): Promise<(RenewalInfo & { retryAfterMs?: number; url: string }) | undefined> {
    const dir = await this.getDirectory();
    if (!dir.renewalInfo) return undefined;
    const url = `${dir.renewalInfo.replace(/\/+$/, '')}/${certId}`;
    const res = await this.request('GET', url);
    if (res.status !== 200) throw this.problemFrom(res, `GET ${url}`);
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new Error(`GET ${url}: renewalInfo answer is not JSON`);
    }
    return { ...parseRenewalInfo(body), retryAfterMs: parseRetryAfter(header(res, 'retry-after')), url };
  }

  async getOrder(url: string): Promise<AcmeOrder> {
    return (await this.getResource<AcmeOrder>(url)).value;
  }

  async getAuthorization(url: string): Promise<AcmeAuthorization> {
    return (await this.getResource<AcmeAuthorization>(url)).value;
  }

  /** One look at an order that is being waited on, with the Retry-After the server asked for before the next. */
  async lookAtOrder(url: string): Promise<{ order: AcmeOrder; retryAfterMs?: number }> {
    const { value, retryAfterMs } = await this.getResource<AcmeOrder>(url);
    return { order: value, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }

  /** One look at an authorization that is being waited on, with the Retry-After the server asked for before the next. */
  async lookAtAuthorization(url: string): Promise<{ authorization: AcmeAuthorization; retryAfterMs?: number }> {
    const { value, retryAfterMs } = await this.getResource<AcmeAuthorization>(url);
    return { authorization: value, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }

  async getChallenge(url: string): Promise<AcmeChallenge> {
    return (await this.getResource<AcmeChallenge>(url)).value;
  }

  /** Tells the server the challenge is ready to be validated. */
  async respondChallenge(url: string): Promise<AcmeChallenge> {
    return { ...(this.json(await this.post(url, {})) as AcmeChallenge), url };
  }

  async deactivateAuthorization(url: string): Promise<AcmeAuthorization> {
    return { ...(this.json(await this.post(url, { status: 'deactivated' })) as AcmeAuthorization), url };
  }

  /**
   * Polls until the authorization leaves `pending`. Resolves with a valid authorization; any other final state
   * rejects with an AcmeError that names the identifier and the challenge's problem.
   */
  async waitForAuthorization(url: string): Promise<AcmeAuthorization> {
    const authz = await this.pollUntil<AcmeAuthorization>(url, (a) => a.status !== 'pending', 'authorization');
    if (authz.status === 'valid') return authz;
    const failed = authz.challenges.find((c) => c.error) ?? authz.challenges.find((c) => c.status === 'invalid');
    const problem = failed?.error ?? { type: `${PROBLEM}unauthorized`, detail: 'no challenge error given' };
    throw new AcmeError(problem, {
      context: `authorization for ${authz.identifier.value} is ${authz.status}${failed ? ` (${failed.type})` : ''}`,
    });
  }

  /** Polls until the order reaches one of `until` or a final state; `invalid` rejects with the order's problem. */
  async waitForOrder(url: string, until: AcmeStatus[] = ['valid']): Promise<AcmeOrder> {
    const order = await this.pollUntil<AcmeOrder>(
      url,
      (o) => until.includes(o.status) || ['valid', 'invalid', 'expired', 'deactivated', 'revoked'].includes(o.status),
      'order',
    );
    const failed = failedOrderProblem(order);
    if (failed) throw failed;
    return order;
  }

  /**
   * Submits the CSR (DER, or PEM which is converted). With `wait` (default) and a known order URL, polls while
   * the order is `processing` and resolves with the final order.
   */
  async finalizeOrder(
    finalizeUrl: string,
    csr: Buffer | string,
    opts: { orderUrl?: string; wait?: boolean } = {},
  ): Promise<AcmeOrder> {
    const der = csrToDer(csr);
    const res = await this.post(finalizeUrl, { csr: base64url(der) });
    const location = res.headers.location ? new URL(res.headers.location, finalizeUrl).toString() : opts.orderUrl;
    const order = { ...(this.json(res) as AcmeOrder), url: location ?? '' };
    if (order.status === 'invalid') {
      throw new AcmeError(order.error ?? { type: `${PROBLEM}badCSR`, detail: 'order invalid after finalize' }, {
        context: 'finalizing order',
      });
    }
    if ((opts.wait ?? true) && order.status !== 'valid' && location) return this.waitForOrder(location, ['valid']);
    return order;
  }

  /**
   * Downloads the PEM chain. With preferredChain, the default chain is kept when its top-most certificate's
   * issuer CN matches; otherwise each `Link: rel="alternate"` chain is fetched in turn until one matches,
   * and the default is returned when none does (as cert-manager does).
   */
  async downloadCertificate(url: string, opts: { preferredChain?: string } = {}): Promise<string> {
    const res = await this.post(url, undefined, { accept: 'application/pem-certificate-chain' });
    const pem = res.body.toString('utf8');
    if (!opts.preferredChain || topIssuerCommonName(pem) === opts.preferredChain) return pem;
    for (const alt of linkUrls(res.rawHeaders, 'alternate', url)) {
      const altRes = await this.post(alt, undefined, { accept: 'application/pem-certificate-chain' });
      const altPem = altRes.body.toString('utf8');
      if (topIssuerCommonName(altPem) === opts.preferredChain) return altPem;
    }
    return pem;
  }

  private async pollUntil<T>(url: string, done: (v: T) => boolean, what: string): Promise<T & { url: string }> {
    const initial = this.opts.poll?.initialMs ?? 50;
    const max = this.opts.poll?.maxMs ?? 1000;
    const timeout = this.opts.poll?.timeoutMs ?? 120_000;
    let waited = 0;
    let delay = initial;
    let retryAfter: number | undefined;
    for (;;) {
      // Waiting before the first look too: the caller has just triggered the change it waits for.
      const wait = Math.min(retryAfter ?? delay, this.maxRetryAfter());
      await this.sleep(wait);
      waited += wait;
      const { value, retryAfterMs } = await this.getResource<T>(url);
      if (done(value)) return value;
      if (waited >= timeout) {
        throw new Error(`timed out after ${Math.round(waited)}ms waiting for ${what} ${url} (status ${(value as { status?: string }).status})`);
      }
      retryAfter = retryAfterMs;
      delay = Math.min(delay * 2, max);
    }
  }

  private maxRetryAfter(): number {
    return this.opts.maxRetryAfterMs ?? 60_000;
  }

  private async getResource<T>(url: string): Promise<{ value: T & { url: string }; retryAfterMs?: number }> {
    const res = await this.post(url, undefined);
    return { value: { ...(this.json(res) as T), url }, retryAfterMs: parseRetryAfter(header(res, 'retry-after')) };
  }

  private json(res: HttpResponse): unknown {
    try {
      return JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new Error(`ACME server sent a non-JSON body (HTTP ${res.status}, ${res.headers['content-type'] ?? 'no content type'})`);
    }
  }

  private async kid(): Promise<string> {
    if (!this.accountUrlValue) await this.findAccount();
    return this.accountUrlValue!;
  }

  private async takeNonce(): Promise<string> {
    const pooled = this.nonces.pop();
    if (pooled) return pooled;
    const dir = await this.getDirectory();
    const fromDir = this.nonces.pop();
    if (fromDir) return fromDir;
    const res = await this.request('HEAD', dir.newNonce);
    const nonce = header(res, 'replay-nonce');
    if (nonce) return nonce;
    // an answer to HEAD has no body: the resource also answers GET (RFC 8555 §7.2), whose problem document says why
    if (res.status >= 400) {
      const got = await this.request('GET', dir.newNonce).catch(() => undefined);
      throw this.problemFrom(got && got.status >= 400 ? got : res, 'new nonce');
    }
    throw new Error(`ACME server sent no Replay-Nonce from ${dir.newNonce} (HTTP ${res.status})`);
  }

  private keepNonce(res: HttpResponse): void {
    const nonce = header(res, 'replay-nonce');
    // Only the latest few matter; an unbounded pool would hold nonces the server has long expired.
    if (nonce) this.nonces = [...this.nonces.slice(-7), nonce];
  }

  /** A signed POST (payload undefined = POST-as-GET), retrying badNonce and server-requested waits within bounds. */
  private async post(url: string, payload: unknown, opts: { useJwk?: boolean; accept?: string } = {}): Promise<HttpResponse> {
    const maxBadNonce = this.opts.maxBadNonceRetries ?? 10;
    const maxRateLimited = this.opts.maxRateLimitRetries ?? 3;
    let badNonces = 0;
    let rateLimited = 0;
    for (;;) {
      const nonce = await this.takeNonce();
      const kid = opts.useJwk ? undefined : await this.kid();
      const jws = signJws(this.accountKey, { url, nonce, kid }, payload);
      const res = await this.request('POST', url, JSON.stringify(jws), {
        'content-type': 'application/jose+json',
        ...(opts.accept ? { accept: opts.accept } : {}),
      });
      this.keepNonce(res);
      if (res.status < 400) return res;
      const err = this.problemFrom(res, `POST ${url}`);
      if (err.type === `${PROBLEM}badNonce` && badNonces < maxBadNonce) {
        badNonces++;
        continue;
      }
      const wait = err.retryAfterMs;
      if (
        (err.type === `${PROBLEM}rateLimited` || res.status === 503) &&
        wait !== undefined &&
        wait <= this.maxRetryAfter() &&
        rateLimited < maxRateLimited
      ) {
        rateLimited++;
        await this.sleep(wait);
        continue;
      }
      throw err;
    }
  }

  private problemFrom(res: HttpResponse, context: string): AcmeError {
    const retryAfterMs = parseRetryAfter(header(res, 'retry-after'));
    let problem: AcmeProblem;
    try {
      problem = JSON.parse(res.body.toString('utf8')) as AcmeProblem;
      if (typeof problem.type !== 'string') throw new Error('not a problem document');
    } catch {
      problem = { type: 'about:blank', detail: res.body.toString('utf8').slice(0, 200).trim() };
    }
    return new AcmeError({ ...problem, status: res.status }, { context, retryAfterMs });
  }

  private async request(method: string, url: string, body?: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
    try {
      return await this.requestOnce(method, url, body, headers);
    } catch (e) {
      // A keep-alive socket the server closed while idle fails on first write; one fresh attempt is safe.
      if ((e as { reusedSocket?: boolean }).reusedSocket) return this.requestOnce(method, url, body, headers);
      throw e;
    }
  }

  private requestOnce(method: string, url: string, body: string | undefined, headers: Record<string, string>): Promise<HttpResponse> {
    const started = performance.now();
    const lib = url.startsWith('https:') ? https : http;
    return new Promise<HttpResponse>((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            'user-agent': this.opts.userAgent ?? 'certsmith-acme',
            ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (d: Buffer) => {
            size += d.length;
            if (size > MAX_BODY) req.destroy(new Error(`response from ${url} exceeds ${MAX_BODY} bytes`));
            else chunks.push(d);
          });
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            this.opts.onRequest?.({ method, url, status, durationMs: performance.now() - started });
            resolve({ status, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) });
          });
          res.on('error', reject);
        },
      );
      req.setTimeout(this.opts.requestTimeoutMs ?? 30_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
      req.on('error', (e) => {
        this.opts.onRequest?.({ method, url, status: 0, durationMs: performance.now() - started });
        reject(Object.assign(new Error(`${method} ${url}: ${e.message}`, { cause: e }), { reusedSocket: req.reusedSocket }));
      });
      req.end(body);
    });
  }
}

function header(res: HttpResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function csrToDer(csr: Buffer | string): Buffer {
  const text = typeof csr === 'string' ? csr : csr.subarray(0, 40).toString('latin1');
  if (text.includes('-----BEGIN')) {
    const pem = typeof csr === 'string' ? csr : csr.toString('utf8');
    const b64 = /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([\s\S]+?)-----END/.exec(pem)?.[1];
    if (!b64) throw new Error('CSR PEM has no CERTIFICATE REQUEST block');
    return Buffer.from(b64.replace(/\s+/g, ''), 'base64');
  }
  return typeof csr === 'string' ? Buffer.from(csr, 'base64') : csr;
}
