/** An RFC 7807 problem from an ACME server, or a failed authorization/order carrying one. */
export interface AcmeProblem {
  type: string;
  detail?: string;
  status?: number;
  identifier?: { type: string; value: string };
  subproblems?: AcmeProblem[];
}

export class AcmeError extends Error {
  readonly type: string;
  readonly detail: string;
  readonly status: number;
  readonly subproblems: AcmeProblem[];
  /** The Retry-After the server sent with this error, in ms, if any. */
  readonly retryAfterMs?: number;

  constructor(problem: AcmeProblem & { status?: number }, opts: { context?: string; retryAfterMs?: number } = {}) {
    const type = problem.type || 'about:blank';
    const detail = problem.detail ?? '';
    const subs = (problem.subproblems ?? [])
      .map((s) => `${s.identifier ? `${s.identifier.value}: ` : ''}${s.type}: ${s.detail ?? ''}`)
      .join('; ');
    const head = opts.context ? `${opts.context}: ` : '';
    super(`${head}${type}: ${detail}${problem.status ? ` (HTTP ${problem.status})` : ''}${subs ? ` [${subs}]` : ''}`);
    this.name = 'AcmeError';
    this.type = type;
    this.detail = detail;
    this.status = problem.status ?? 0;
    this.subproblems = problem.subproblems ?? [];
    this.retryAfterMs = opts.retryAfterMs;
  }

  /** The type without the `urn:ietf:params:acme:error:` prefix, e.g. `badNonce`. */
  get shortType(): string {
    return this.type.replace(/^urn:ietf:params:acme:error:/, '');
  }
}

/**
 * A problem the CA states about a request (a 4xx) that goes away by asking again later: a rate
 * limit (RFC 8555 §6.6), or a refused nonce (§6.5, which a client "SHOULD" retry). The client
 * retries a badNonce itself a few times; one still refused after those is a CA refusing nonces in
 * bulk, not a fault of the certificate, so it is retried later with backoff, as a 5xx is.
 */
export function isTransientProblem(e: AcmeError): boolean {
  return e.shortType === 'rateLimited' || e.shortType === 'badNonce';
}

/** A problem the CA stated (4xx) that asking again will not change. */
export function isRefusal(e: unknown): e is AcmeError {
  return e instanceof AcmeError && e.status >= 400 && e.status < 500 && !isTransientProblem(e);
}

/** How long to send nothing more after a 429 (RFC 8555 §6.6): Retry-After (at least a second), or 15 minutes when the server gave none. */
export function rateLimitWaitMs(retryAfterMs: number | undefined): number {
  return retryAfterMs === undefined ? 15 * 60_000 : Math.max(1000, retryAfterMs);
}
