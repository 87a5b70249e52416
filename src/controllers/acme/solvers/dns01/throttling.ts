// How the DNS providers' clients answer throttling (HTTP 429, and 503 where a vendor documents it
// with Retry-After): wait as long as the server asks, up to 10 s, as an issuance waits; beyond
// that, or once the attempts are spent, give up with a ProviderThrottledError carrying the wait,
// and the Challenge's backoff takes over.
import { parseRetryAfter } from '../../../../runtime/retry-after.ts';
import { ProviderThrottledError } from './secret-ref.ts';

const MAX_RETRY_AFTER_MS = 10_000;

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
