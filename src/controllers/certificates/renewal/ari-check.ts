// When to ask the ACME server for renewal information (RFC 9773) about a Certificate's current
// certificate, and what to store in status.acme.ari from the answer. Pure: the controller
// (ari-controller.ts) does the fetching and the writing.
import { ariRecheckDelay, type CertificateAriStatus, type RenewalInfo } from '../../../acme/ari.ts';
import { rfc3339 } from '../../../api/conditions.ts';

export type AriCheck =
  | { kind: 'none' }
  /** status.acme.ari is about this certificate and its nextCheck is still ahead: nothing to fetch (survives restarts) */
  | { kind: 'wait'; untilMs: number }
  | { kind: 'fetch'; certID: string };

/**
 * certID undefined: the certificate has no Authority Key Identifier (or no certificate): no ARI.
 * A stored answer about another certificate (the one before a renewal) does not count.
 */
export function decideAriCheck(ari: CertificateAriStatus | undefined, certID: string | undefined, now: Date): AriCheck {
  if (!certID) return { kind: 'none' };
  if (ari?.certID !== certID || !ari.nextCheck) return { kind: 'fetch', certID };
  const next = Date.parse(ari.nextCheck);
  if (Number.isNaN(next) || next <= now.getTime()) return { kind: 'fetch', certID };
  return { kind: 'wait', untilMs: next - now.getTime() };
}

/** status.acme.ari after a successful fetch: Retry-After bounded to 1 minute .. 1 day. */
export function ariStatusAfterAnswer(certID: string, info: RenewalInfo & { retryAfterMs?: number }, now: Date): CertificateAriStatus {
  return {
    certID,
    suggestedWindow: info.suggestedWindow,
    ...(info.explanationURL ? { explanationURL: info.explanationURL } : {}),
    lastChecked: rfc3339(now),
    nextCheck: rfc3339(new Date(now.getTime() + ariRecheckDelay(info.retryAfterMs))),
  };
}

/**
 * status.acme.ari after a failed fetch: the last good window about the same certificate is kept
 * (a CA hiccup must not undo its advice), lastError says what failed, and the next check follows
 * Retry-After or an hour, bounded. With no window the ordinary renewal time applies.
 */
export function ariStatusAfterError(previous: CertificateAriStatus | undefined, certID: string, error: string, retryAfterMs: number | undefined, now: Date): CertificateAriStatus {
  const keep = previous?.certID === certID ? previous : undefined;
  return {
    certID,
    ...(keep?.suggestedWindow ? { suggestedWindow: keep.suggestedWindow } : {}),
    ...(keep?.explanationURL ? { explanationURL: keep.explanationURL } : {}),
    ...(keep?.lastChecked ? { lastChecked: keep.lastChecked } : {}),
    nextCheck: rfc3339(new Date(now.getTime() + ariRecheckDelay(retryAfterMs, true))),
    lastError: error.slice(0, 500),
  };
}
