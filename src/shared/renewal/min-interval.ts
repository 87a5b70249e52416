// The minimum interval between two issuances of one Certificate (issue 12, finding 12; upstream
// has none). `duration: 1h` with `renewBefore: 59m59s` makes cert-manager renew one second after
// every issuance, forever: with a deploy hook, a web-server reload per second. So does a leaf
// clipped to an issuer CA that expires soon (its renewal time is at once), whatever renewBefore.
//
// Rule: a renewal (the trigger's reason `Renewing`, i.e. time-driven) never starts sooner than
//
//     max(5 minutes, 10% of the certificate's validity)   after the last issuance,
//
// where the last issuance is the later of the certificate's notBefore and the creation of the
// CertificateRequest it was issued from (an issuer may backdate notBefore; the request cannot
// be later than the issuance). Why these numbers: 5 minutes is upstream's own lower bound on
// renewBefore and on the issuance-to-renewal time its percentage check enforces; 10% of the
// validity only binds when renewal would come in the first tenth of the lifetime (renewBefore
// above 90% of the duration), which no sensible configuration asks for, and bounds any
// Certificate to at most ~10 renewals per lifetime and 12 per hour. Issuances a user caused
// (spec changed, Secret missing or altered, `certsmith renew`) are never held.
import { nextWindowStartAfter, parseWindows, windowContaining, type RenewalDecision } from './renewal-time.ts';
import { isoTime } from '../../api/conditions.ts';
import type { CertificateInfo } from '../../pki/parse.ts';
import { decodeBase64, parseCertMemo } from '../parse-memo.ts';

export const MINIMUM_INTERVAL_FLOOR_MS = 5 * 60_000;
export const MINIMUM_INTERVAL_FRACTION = 0.1;

/** max(5 minutes, 10% of notAfter − notBefore). */
export function minimumIssuanceIntervalMs(notBefore: Date, notAfter: Date): number {
  const validity = Math.max(0, notAfter.getTime() - notBefore.getTime());
  return Math.max(MINIMUM_INTERVAL_FLOOR_MS, Math.floor(validity * MINIMUM_INTERVAL_FRACTION));
}

/** The later of the leaf's notBefore and its request's creation; a bad timestamp is ignored. */
export function lastIssuanceTime(notBefore: Date, requestCreated?: string): Date {
  const created = requestCreated ? Date.parse(requestCreated) : NaN;
  return Number.isFinite(created) && created > notBefore.getTime() ? new Date(created) : notBefore;
}

/**
 * When this leaf was issued, as well as it is known: the current request's creation when that
 * request issued this very certificate, else the leaf's notBefore. A Secret put back by hand
 * with an older certificate is not the request's, whose creation days after it would hold its
 * renewal past its expiry.
 */
export function issuanceTimeOf(leaf: CertificateInfo, request?: { metadata: { creationTimestamp?: string }; status?: { certificate?: string } }): Date {
  const issued = request?.status?.certificate ? parseCertMemo(decodeBase64(request.status.certificate)).value : undefined;
  const same = issued && issued.serialNumber === leaf.serialNumber && issued.notAfter.getTime() === leaf.notAfter.getTime();
  return same ? lastIssuanceTime(leaf.notBefore, request!.metadata.creationTimestamp) : leaf.notBefore;
}

/**
 * Moves a scheduled renewal that comes too soon after the last issuance to the earliest allowed
 * time; when the renewal was placed in a renewal window and that time is outside every window, to
 * the start of the next window before expiry (renewals happen inside maintenance windows), else
 * the earliest time stands.
 */
export function holdForMinimumInterval(
  d: RenewalDecision, leaf: { notBefore: Date; notAfter: Date }, issuedAt: Date = leaf.notBefore,
  interval = { ms: minimumIssuanceIntervalMs(leaf.notBefore, leaf.notAfter), rule: 'max(5m, 10% of the validity)' },
  /** spec.renewal.windows, read only when a hold moves a renewal that was placed in a window */
  windowsSpec?: unknown,
): RenewalDecision {
  if (d.kind !== 'scheduled') return d;
  // Whole seconds, like every renewal time (status fields are RFC 3339 seconds).
  const earliest = new Date(Math.ceil((issuedAt.getTime() + interval.ms) / 1000) * 1000);
  if (d.renewalTime.getTime() >= earliest.getTime()) return d;
  const held = `${d.message}; held until ${isoTime(earliest)} by the minimum interval between issuances (${interval.rule} after the last one)`;
  const parsed = d.window && windowsSpec ? parseWindows(windowsSpec) : undefined;
  const windows = parsed && 'windows' in parsed ? parsed.windows : [];
  if (windows.length && !windowContaining(windows, earliest)) {
    const next = nextWindowStartAfter(windows, earliest, leaf.notAfter);
    if (next && next.start.getTime() < leaf.notAfter.getTime()) {
      return { ...d, renewalTime: next.start, window: next, message: `${held}, which is outside every renewal window: renewing at ${isoTime(next.start)}, the start of the next renewal window` };
    }
    return { ...d, renewalTime: earliest, window: undefined, message: `${held}; no renewal window opens after that before the certificate expires` };
  }
  return { ...d, renewalTime: earliest, message: held };
}
