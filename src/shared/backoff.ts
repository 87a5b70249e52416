// Exponential backoff between failed issuances (seed 000, cert-manager's
// shouldBackoffReissuingOnFailure): the next attempt waits initial * 2^(attempts-1) after
// status.lastFailureTime, capped at max. Pure: the caller passes the times in.
import { createHash } from 'node:crypto';

export interface BackoffConfig {
  /** Delay after the first failure; default 1h. */
  initialMs: number;
  /** Ceiling for the delay; default 32h. */
  maxMs: number;
}

const HOUR_MS = 3_600_000;

export const defaultBackoff: BackoffConfig = Object.freeze({ initialMs: HOUR_MS, maxMs: 32 * HOUR_MS });

/** Share of the delay that spreadOffset may add. */
export const SPREAD_FRACTION = 0.1;

/**
 * Applies cert-manager's flag rules (--certificate-request-minimum/maximum-backoff-duration):
 * a missing or zero value takes the default; negative values and max < initial are rejected.
 */
export function resolveBackoffConfig(partial: Partial<BackoffConfig> = {}): BackoffConfig {
  const initialMs = partial.initialMs || defaultBackoff.initialMs;
  const maxMs = partial.maxMs || defaultBackoff.maxMs;
  if (!(initialMs > 0) || !(maxMs > 0)) throw new Error('backoff durations must not be negative');
  if (maxMs < initialMs) throw new Error('the maximum backoff must not be shorter than the minimum backoff');
  return { initialMs, maxMs };
}

/** failures within one minute from this many Certificates look like an outage: spread their retries */
export const SPREAD_THRESHOLD = 10;

/** The bucket a failure falls in for the spread rule: the minute of status.lastFailureTime. */
export function failureMinuteOf(lastFailureTime: string): number {
  return Math.floor(Date.parse(lastFailureTime) / 60_000);
}

/** How many of `certificates` failed in the same minute as `lastFailureTime` (itself included when listed). */
export function failuresInSameMinute(lastFailureTime: string, certificates: readonly { status?: { lastFailureTime?: string } }[]): number {
  const minute = failureMinuteOf(lastFailureTime);
  return certificates.filter((c) => c.status?.lastFailureTime && failureMinuteOf(c.status.lastFailureTime) === minute).length;
}

/** Whether retries get spreadOffset: this many Certificates failed in the same minute (an outage). */
export function spreadsRetries(failuresInSameMinute: number): boolean {
  return failuresInSameMinute >= SPREAD_THRESHOLD;
}

/** failedAttempts, 0 when neither counter is set. */
export function failedAttemptsOf(status: { issuanceAttempts?: number; failedIssuanceAttempts?: number } | undefined): number {
  return status?.issuanceAttempts ?? status?.failedIssuanceAttempts ?? 0;
}

/**
 * The number of consecutive failed issuances. The seed's status.issuanceAttempts wins;
 * cert-manager's status.failedIssuanceAttempts is read when the seed's field is absent.
 */
export function failedAttempts(status: { issuanceAttempts?: number; failedIssuanceAttempts?: number }): number | undefined {
  if (typeof status.issuanceAttempts === 'number') return status.issuanceAttempts;
  if (typeof status.failedIssuanceAttempts === 'number') return status.failedIssuanceAttempts;
  return undefined;
}

/**
 * initial * 2^(attempts-1), capped at max. A missing or zero counter (objects written before
 * the counter existed, i.e. an upgrade) waits the initial delay, so failing certificates are
 * not all retried at once after an upgrade.
 */
export function backoffDelay(attempts: number | undefined, cfg: BackoffConfig = defaultBackoff): number {
  const { initialMs, maxMs } = cfg;
  if (attempts === undefined || !Number.isFinite(attempts) || attempts < 1) return initialMs;
  // 2^1023 is the last finite power, and anything past ~60 doublings exceeds every sane max.
  const doublings = Math.min(Math.floor(attempts) - 1, 1000);
  const raw = initialMs * 2 ** doublings;
  return Math.max(Math.min(raw, maxMs), initialMs);
}

/**
 * A deterministic extra wait in [0, 10% of delay), derived from the object's uid, so that
 * certificates that failed together (an issuer outage) do not all retry in the same instant,
 * and one certificate gets the same offset after every controller restart.
 */
export function spreadOffset(uid: string, delayMs: number): number {
  if (!(delayMs > 0)) return 0;
  const digest = createHash('sha256').update(uid).digest();
  const fraction = digest.readUIntBE(0, 6) / 2 ** 48; // [0, 1)
  return Math.floor(fraction * SPREAD_FRACTION * delayMs);
}

export interface NextAttemptInput {
  lastFailureTime: Date;
  attempts?: number;
  uid: string;
  cfg?: BackoffConfig;
  /** Add spreadOffset; default false, which matches cert-manager exactly. */
  spread?: boolean;
  /** Expiry of the certificate in use, if any: bounds the delay (expiryBoundedDelay). */
  notAfter?: Date;
}

/** Shortest retry delay the expiry bound may produce: near expiry, attempts still do not hammer the CA. */
export const MIN_EXPIRY_BOUNDED_DELAY_MS = 60_000;

/**
 * Seed 000's delay, unless the certificate in use would expire before a retry after it could
 * still be followed by another: with `left` = notAfter - lastFailureTime, the delay stays the
 * seed's while left > 2 * delay, and is left / 2 otherwise (never under a minute), so each
 * retry lands halfway to expiry and leaves time for the next. An expired certificate, or none,
 * gets the seed's numbers: there is nothing left to save by hurrying.
 */
export function expiryBoundedDelay(delayMs: number, lastFailureTime: Date, notAfter: Date | undefined): number {
  if (!notAfter) return delayMs;
  const left = notAfter.getTime() - lastFailureTime.getTime();
  if (!(left > 0) || left > 2 * delayMs) return delayMs;
  return Math.min(delayMs, Math.max(MIN_EXPIRY_BOUNDED_DELAY_MS, Math.floor(left / 2)));
}

/** When issuance may be tried again: lastFailureTime + backoffDelay (bounded by expiry when notAfter is given). */
export function nextAttemptTime(o: NextAttemptInput): Date {
  const delay = expiryBoundedDelay(backoffDelay(o.attempts, o.cfg ?? defaultBackoff), o.lastFailureTime, o.notAfter);
  const extra = o.spread ? spreadOffset(o.uid, delay) : 0;
  return new Date(o.lastFailureTime.getTime() + delay + extra);
}

/** How long to keep backing off at `now`; 0 once the next attempt is due (elapsed >= delay). */
export function remainingBackoffMs(o: NextAttemptInput & { now: Date }): number {
  return Math.max(0, nextAttemptTime(o).getTime() - o.now.getTime());
}

/**
 * The Normal Event the trigger controller records while a Certificate backs off: written by the
 * controller, read back by `certsmith status`, which knows the server's next attempt from it
 * whatever --backoff-initial the server runs with.
 */
export const BACKOFF_EVENT_REASON = 'Backoff';
export function backoffEventMessage(attempts: number, at: string): string {
  return `Backing off from re-issuance after ${attempts} failed attempt(s): the next attempt will be at ${at}`;
}

/** The failed attempts and the next attempt a Backoff Event's message names, if it names them. */
export function backoffEventOf(message: string | undefined): { attempts: number; nextAttempt: Date } | undefined {
  const m = /^Backing off from re-issuance after (\d+) failed attempt\(s\): the next attempt will be at (.+)$/.exec(message ?? '');
  const t = m ? Date.parse(m[2]) : NaN;
  return Number.isNaN(t) ? undefined : { attempts: Number(m![1]), nextAttempt: new Date(t) };
}
