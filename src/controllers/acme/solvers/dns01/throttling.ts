// How the DNS providers' clients answer throttling (HTTP 429, and 503 where a vendor documents it
// with Retry-After): wait as long as the server asks, up to 10 s, as an issuance waits; beyond
// that, or once the attempts are spent, give up with a ProviderThrottledError carrying the wait,
// and the Challenge's backoff takes over.
import { parseRetryAfter } from '../../../../runtime/retry-after.ts';
import { ProviderThrottledError } from './secret-ref.ts';

const MAX_RETRY_AFTER_MS = 10_000;
/** Requests of one call in all, the first included, while throttled answers are waited out. */
const THROTTLED_ATTEMPTS = 3;

/**
 * How long a DNS provider's client waits before retrying a throttled or failed call: the
 * server's Retry-After (RFC 9110), else fallbackMs; never more than 10 s, as an issuance waits.
 */
export function providerRetryDelayMs(retryAfter: string | null, fallbackMs = 1000, now = Date.now()): number {
  return Math.min(parseRetryAfter(retryAfter, now) ?? fallbackMs, MAX_RETRY_AFTER_MS);
}

/**
 * After a throttled answer: how long to wait before asking again, or undefined to give up at once,
 * when no attempt is left or the server asks for more than the 10 s a client waits (asking sooner
 * than it said only earns another throttled answer; the Challenge's backoff takes over).
 */
export function throttledRetryMs(retryAfter: string | null, attemptsLeft: boolean, fallbackMs = 1000, now = Date.now()): number | undefined {
  if (!attemptsLeft || (parseRetryAfter(retryAfter, now) ?? fallbackMs) > MAX_RETRY_AFTER_MS) return undefined;
  return providerRetryDelayMs(retryAfter, fallbackMs, now);
}

/** The error of a 429 given up on: the vendor's message, and the wait the server asked for (Retry-After, else askedMs), if any. */
export function throttledError(message: string, retryAfter: string | null, askedMs?: number, now = Date.now()): ProviderThrottledError {
  const ms = parseRetryAfter(retryAfter, now) ?? askedMs;
  if (ms === undefined) return new ProviderThrottledError(`${message} (throttled)`, 0);
  return new ProviderThrottledError(`${message} (throttled: the API asks to wait ${Math.ceil(ms / 1000)} s)`, ms);
}

/** What a vendor's client tells fetchWaitingOutThrottling; the rest of the throttling rule is the same for all. */
export interface ThrottledCall {
  /** One request; called again for each attempt, so a signature or token is made afresh each time. */
  send: () => Promise<Response>;
  /** The vendor's message for a failed answer, its error body read as that vendor writes it: a 429 given up on is reported with it. */
  errorMessage: (res: Response, text: string) => string;
  /** Requests in all (3 unless told). */
  attempts?: number;
  /**
   * Statuses waited out like a 429, where the vendor documents Retry-After with them (503: busy or
   * down). Once given up on they are returned like any other failure: not reported as throttling.
   */
  alsoWaitOut?: readonly number[];
  /** The wait the vendor names besides Retry-After (DigitalOcean's RateLimit-Reset), taken when Retry-After is absent. */
  askedMs?: (headers: Headers) => number | undefined;
}

/**
 * One call to a vendor's API that waits out throttling: a 429 (or an alsoWaitOut status) is asked
 * again after the server's wait while attempts are left and the wait is at most 10 s
 * (throttledRetryMs); a 429 given up on is thrown as throttledError with the wait asked for.
 * Returns the first answer not waited out, its body read: a success or any other failure, which
 * the client reads as its vendor writes it.
 */
export async function fetchWaitingOutThrottling(call: ThrottledCall): Promise<{ res: Response; text: string }> {
  const attempts = call.attempts ?? THROTTLED_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const res = await call.send();
    const text = await res.text();
    if (res.status !== 429 && !call.alsoWaitOut?.includes(res.status)) return { res, text };
    const retryAfter = res.headers.get('retry-after');
    const askedMs = call.askedMs?.(res.headers);
    const wait = throttledRetryMs(retryAfter, attempt < attempts, askedMs);
    if (wait !== undefined) {
      // the global timer, looked up at each wait, so tests that fake it keep holding
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    if (res.status === 429) throw throttledError(call.errorMessage(res, text), retryAfter, askedMs);
    return { res, text };
  }
}
