// When a certificate should be renewed: cert-manager's renewBefore arithmetic plus the renewal
// policy and windows of seed 003. Pure: every input, including the certificate's validity, is
// passed in, and nothing here reads a clock.
import { parseDuration } from '../../api/duration.ts';
import {
  lastWindowClosedBy, nextWindowStartAfter, parseWindows, windowContaining,
  type ParsedWindow, type RenewalWindowSpec, type WindowOccurrence,
} from './windows.ts';
import { isoTime } from '../../api/conditions.ts';
import { ariRenewalPoint } from '../../acme/ari.ts';

export { parseWindows, windowContaining, nextWindowStartAfter, lastWindowClosedBy } from './windows.ts';
export type { ParsedWindow, RenewalWindowSpec, WindowOccurrence } from './windows.ts';

export type RenewalPolicy = 'RenewBefore' | 'EarliestWindow' | 'Disabled';

export interface RenewalInput {
  notBefore: Date;
  notAfter: Date;
  /** Go duration. */
  renewBefore?: string;
  /** Integer 0..100. */
  renewBeforePercentage?: number;
  /** Default RenewBefore. */
  policy?: RenewalPolicy;
  windows?: RenewalWindowSpec[];
  /** The ACME server's suggested window for this very certificate (RFC 9773), when it gave one. */
  ari?: AriInput;
}

export interface AriInput {
  start: Date;
  end: Date;
  /** When the window was fetched: a window that had ended by then is the CA asking for renewal now. */
  fetchedAt: Date;
  /** Seeds the point chosen inside the window (the CertID), so restarts and replicas agree. */
  seed: string;
  explanationURL?: string;
}

export type RenewalReason = 'RenewBefore' | 'InsideWindow' | 'MovedIntoWindow' | 'EarliestWindow' | 'ExpiryImminent'
  /** a point in the ACME server's suggested window (RFC 9773), inside a maintenance window if there are any */
  | 'ARI'
  /** the ARI point was outside every maintenance window: moved to the next one */
  | 'ARIMovedIntoWindow'
  /** the suggested window had ended when fetched: the CA wants the certificate replaced now (e.g. revocation) */
  | 'ARIRenewNow';

export type RenewalDecision =
  | {
    kind: 'scheduled';
    renewalTime: Date;
    /** The plain renewBefore time, before any window was applied. */
    baseTime: Date;
    reason: RenewalReason;
    window?: WindowOccurrence;
    message: string;
  }
  | { kind: 'disabled'; message: string }
  | { kind: 'invalid'; message: string };

const SECOND_MS = 1000;
const POLICIES: readonly string[] = ['RenewBefore', 'EarliestWindow', 'Disabled'];

/** Below this life, the default renewal point is half the life instead of two thirds (issue 16). */
export const SHORT_LIFETIME_MS = 10 * 86_400_000;

/**
 * cert-manager's RenewalTime without ARI (pkg/util/pki/renewaltime.go): with life D =
 * notAfter - notBefore, renew `rb` before notAfter where rb is renewBefore if 0 < renewBefore < D,
 * else D*pct/100 if 0 < pct < 100, else D/3 (D/2 when D is under 10 days: certsmith's rule for
 * short-lived certificates); the result is truncated down to whole seconds.
 * renewBefore wins when both are given. Throws on an unparsable renewBefore string.
 */
export function baseRenewalTime(notBefore: Date, notAfter: Date, renewBefore?: string | number, renewBeforePercentage?: number): Date {
  const nb = notBefore.getTime();
  const na = notAfter.getTime();
  const life = na - nb;
  const rb = typeof renewBefore === 'string' ? parseDuration(renewBefore) : renewBefore;
  // Exact rational arithmetic before truncating, as Go's integer nanoseconds would give.
  let scaledRenewal: number; // the renewal instant in ms, times `scale`
  let scale: number;
  if (rb !== undefined && rb > 0 && rb < life) {
    scaledRenewal = na - rb;
    scale = 1;
  } else if (renewBeforePercentage !== undefined && renewBeforePercentage > 0 && renewBeforePercentage < 100) {
    scaledRenewal = na * 100 - life * renewBeforePercentage;
    scale = 100;
  } else if (life < SHORT_LIFETIME_MS) {
    // Let's Encrypt's guidance for short-lived (6-day) certificates: renew at half the life,
    // so a failure still leaves days for retries; two thirds would leave two.
    scaledRenewal = na * 2 - life;
    scale = 2;
  } else {
    scaledRenewal = na * 3 - life;
    scale = 3;
  }
  return new Date(Math.floor(scaledRenewal / (scale * SECOND_MS)) * SECOND_MS);
}

function describe(w: WindowOccurrence): string {
  return `window ${w.index} ("${w.cron}" ${w.timeZone}, ${isoTime(w.start)} to ${isoTime(w.end)})`;
}

/**
 * The renewal time for a certificate, following spec.renewal. Windows are half-open
 * [start, start + duration), so the last instant inside one is its end minus one second.
 *
 * - Disabled: no automatic renewal (windows are not even parsed).
 * - No windows, with either RenewBefore or EarliestWindow: the base time.
 * - RenewBefore with windows: the latest instant inside a window that is at or before the base
 *   time. That is the base time itself when a window contains it (InsideWindow); otherwise the
 *   last second of the latest window that closed by the base time, counting only windows that
 *   opened strictly after notBefore, since renewing in a window that was already open at
 *   issuance would just repeat the issuance; otherwise the start of the first window that opens
 *   after the base time (both MovedIntoWindow).
 * - EarliestWindow with windows: the start of the first window that opens strictly after
 *   notBefore, ignoring renewBefore (a window already open at issuance does not count).
 * - Safety: if no window gives a time before notAfter, renew at the base time anyway
 *   (ExpiryImminent) rather than let the certificate expire.
 */
export function computeRenewal(input: RenewalInput): RenewalDecision {
  const policy = input.policy ?? 'RenewBefore';
  if (!POLICIES.includes(policy)) {
    return { kind: 'invalid', message: `spec.renewal.policy: unsupported renewal policy "${policy}" (expected RenewBefore, EarliestWindow or Disabled)` };
  }
  if (policy === 'Disabled') {
    const urgent = input.ari && input.ari.end.getTime() <= input.ari.fetchedAt.getTime();
    return {
      kind: 'disabled',
      message: 'automatic renewal is disabled by spec.renewal.policy=Disabled; manual renewal still works' +
        (urgent ? `; the ACME server asks for this certificate to be replaced now (suggested window ended ${isoTime(input.ari!.end)}${input.ari!.explanationURL ? `, see ${input.ari!.explanationURL}` : ''})` : ''),
    };
  }

  const { notBefore, notAfter } = input;
  if (!(notAfter.getTime() > notBefore.getTime())) {
    return { kind: 'invalid', message: `certificate validity: notAfter ${notAfter.toISOString()} is not after notBefore ${notBefore.toISOString()}` };
  }
  if (input.renewBefore !== undefined && input.renewBefore !== null) {
    try {
      parseDuration(input.renewBefore);
    } catch (err) {
      return { kind: 'invalid', message: `spec.renewBefore: ${(err as Error).message}` };
    }
  }
  const pct = input.renewBeforePercentage;
  if (pct !== undefined && pct !== null && !(Number.isInteger(pct) && pct >= 0 && pct <= 100)) {
    return { kind: 'invalid', message: `spec.renewBeforePercentage: must be an integer from 0 to 100, got ${pct}` };
  }
  const parsed = parseWindows(input.windows);
  if ('error' in parsed) return { kind: 'invalid', message: parsed.error };

  const baseTime = baseRenewalTime(notBefore, notAfter, input.renewBefore ?? undefined, pct ?? undefined);
  if (input.ari) {
    const withAri = ariRenewal(input.ari, parsed.windows, notAfter, baseTime);
    if (withAri) return withAri;
  }
  if (parsed.windows.length === 0) {
    return { kind: 'scheduled', renewalTime: baseTime, baseTime, reason: 'RenewBefore', message: `renewing at ${isoTime(baseTime)}, the renewBefore time` };
  }
  return policy === 'EarliestWindow'
    ? earliestWindow(parsed.windows, notBefore, notAfter, baseTime)
    : renewBeforeWithWindows(parsed.windows, notBefore, notAfter, baseTime);
}

function expiryImminent(baseTime: Date, notAfter: Date, why: string): RenewalDecision {
  return {
    kind: 'scheduled', renewalTime: baseTime, baseTime, reason: 'ExpiryImminent',
    message: `${why} before the certificate expires at ${isoTime(notAfter)}; renewing at the renewBefore time ${isoTime(baseTime)} anyway`,
  };
}

function renewBeforeWithWindows(windows: ParsedWindow[], notBefore: Date, notAfter: Date, baseTime: Date): RenewalDecision {
  const containing = windowContaining(windows, baseTime);
  if (containing) {
    return {
      kind: 'scheduled', renewalTime: baseTime, baseTime, reason: 'InsideWindow', window: containing,
      message: `renewing at the renewBefore time ${isoTime(baseTime)}, inside ${describe(containing)}`,
    };
  }
  const previous = lastWindowClosedBy(windows, baseTime, notBefore);
  if (previous) {
    const renewalTime = new Date(Math.max(previous.start.getTime(), previous.end.getTime() - SECOND_MS));
    return {
      kind: 'scheduled', renewalTime, baseTime, reason: 'MovedIntoWindow', window: previous,
      message: `the renewBefore time ${isoTime(baseTime)} is outside every renewal window; renewing earlier at ${isoTime(renewalTime)}, the last second of ${describe(previous)}`,
    };
  }
  const next = nextWindowStartAfter(windows, baseTime, notAfter);
  if (!next || next.start.getTime() >= notAfter.getTime()) {
    return expiryImminent(baseTime, notAfter, `no renewal window opens after notBefore ${isoTime(notBefore)} and`);
  }
  return {
    kind: 'scheduled', renewalTime: next.start, baseTime, reason: 'MovedIntoWindow', window: next,
    message: `the renewBefore time ${isoTime(baseTime)} is outside every renewal window and none opened since issuance; renewing later at ${isoTime(next.start)}, the start of ${describe(next)}`,
  };
}

function earliestWindow(windows: ParsedWindow[], notBefore: Date, notAfter: Date, baseTime: Date): RenewalDecision {
  const next = nextWindowStartAfter(windows, notBefore, notAfter);
  if (!next || next.start.getTime() >= notAfter.getTime()) {
    return expiryImminent(baseTime, notAfter, `no renewal window opens after notBefore ${isoTime(notBefore)} and`);
  }
  return {
    kind: 'scheduled', renewalTime: next.start, baseTime, reason: 'EarliestWindow', window: next,
    message: `renewing at ${isoTime(next.start)}, the start of the first renewal window after issuance: ${describe(next)}`,
  };
}

function ariWindowText(ari: AriInput): string {
  return `the ACME server's suggested window ${isoTime(ari.start)} to ${isoTime(ari.end)}${ari.explanationURL ? ` (${ari.explanationURL})` : ''}`;
}

/**
 * The rule that combines ARI with seed 003 (documented in the README):
 * - The CA's suggested window says when: the renewal time is a uniformly random point in it,
 *   seeded by the CertID (ariRenewalPoint). It replaces renewBefore/renewBeforePercentage, and
 *   EarliestWindow's "first window after issuance".
 * - A maintenance window says when not: a point outside every window moves to the latest
 *   instant at or before it that is inside a window and still inside the CA's window, else to
 *   the start of the next window (even past the CA's window: the CA only suggests), as long as
 *   that is before notAfter; if no window opens before expiry, the point stands.
 * - A suggested window that had already ended when it was fetched is the CA asking for the
 *   certificate to be replaced now (RFC 9773 §4.2: e.g. revocation is coming): renew at once,
 *   inside or outside maintenance windows. Disabled still wins (handled by the caller): the
 *   operator said no automatic renewal; the status message says the CA asks for one.
 * - A window that starts at or after notAfter is ignored (undefined: the ordinary time holds).
 */
function ariRenewal(ari: AriInput, windows: ParsedWindow[], notAfter: Date, baseTime: Date): RenewalDecision | undefined {
  if (!(ari.end.getTime() > ari.start.getTime())) return undefined;
  if (ari.end.getTime() <= ari.fetchedAt.getTime()) {
    return {
      kind: 'scheduled', renewalTime: ari.start, baseTime, reason: 'ARIRenewNow',
      message: `${ariWindowText(ari)} had ended when it was fetched at ${isoTime(ari.fetchedAt)}: the CA asks for the certificate to be replaced now; renewing at once, regardless of renewal windows`,
    };
  }
  if (ari.start.getTime() >= notAfter.getTime()) return undefined;
  const point = ariRenewalPoint(ari, ari.seed);
  if (windows.length === 0) {
    return { kind: 'scheduled', renewalTime: point, baseTime, reason: 'ARI', message: `renewing at ${isoTime(point)}, a random point in ${ariWindowText(ari)}` };
  }
  // A point already past when the answer came means "now" (RFC 9773 §4.2): maintenance windows
  // apply from the fetch on, never one that had closed before it (that would renew at once,
  // outside every window)
  const from = point.getTime() < ari.fetchedAt.getTime() ? ari.fetchedAt : point;
  const containing = windowContaining(windows, from);
  if (containing) {
    return {
      kind: 'scheduled', renewalTime: from, baseTime, reason: 'ARI', window: containing,
      message: `renewing at ${isoTime(from)}, ${from === point ? 'a random point' : 'the answer\'s fetch, the random point being past then,'} in ${ariWindowText(ari)}, inside ${describe(containing)}`,
    };
  }
  const earlier = lastWindowClosedBy(windows, from, new Date(Math.max(ari.start.getTime(), ari.fetchedAt.getTime()) - 1));
  if (earlier) {
    const renewalTime = new Date(Math.max(earlier.start.getTime(), earlier.end.getTime() - SECOND_MS));
    return {
      kind: 'scheduled', renewalTime, baseTime, reason: 'ARIMovedIntoWindow', window: earlier,
      message: `${isoTime(point)}, the random point in ${ariWindowText(ari)}, is outside every renewal window; renewing earlier at ${isoTime(renewalTime)}, the last second of ${describe(earlier)}`,
    };
  }
  const next = nextWindowStartAfter(windows, from, notAfter);
  if (next && next.start.getTime() < notAfter.getTime()) {
    return {
      kind: 'scheduled', renewalTime: next.start, baseTime, reason: 'ARIMovedIntoWindow', window: next,
      message: `${isoTime(point)}, the random point in ${ariWindowText(ari)}, is outside every renewal window; renewing at ${isoTime(next.start)}, the start of ${describe(next)}`,
    };
  }
  return {
    kind: 'scheduled', renewalTime: point, baseTime, reason: 'ARI',
    message: `no renewal window opens before the certificate expires at ${isoTime(notAfter)}; renewing at ${isoTime(point)}, a random point in ${ariWindowText(ari)}`,
  };
}
