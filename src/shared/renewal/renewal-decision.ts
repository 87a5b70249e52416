// When the certificate in a Secret is due for automatic renewal: renewal policy and windows
// applied to its validity, the ACME server's renewal information (RFC 9773) when status.acme.ari
// holds an answer about this very certificate, then the minimum interval between issuances;
// shared by the trigger (to act) and readiness (to report), so status.renewalTime is when
// renewal really happens.
import { computeRenewal, type AriInput, type RenewalDecision } from './renewal-time.ts';
import { holdForMinimumInterval, MINIMUM_INTERVAL_FLOOR_MS } from './min-interval.ts';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import type { CertificateInfo } from '../../pki/parse.ts';
import { certIdOf } from '../../acme/ari.ts';
import type { ACMEIssuer } from '../../api/types.ts';

/** cert-manager's spec.acme.renewalInformationSource: ARI (default, also when empty) or None. */
export function ariEnabled(acme: (ACMEIssuer & { renewalInformationSource?: string }) | undefined): boolean {
  return !!acme && (!acme.renewalInformationSource || acme.renewalInformationSource === 'ARI');
}

/** The ARI answer in status.acme.ari if it is about this leaf and usable; else undefined (ordinary renewal time). */
export function ariFor(certificate: CertificateObj, leaf: CertificateInfo): AriInput | undefined {
  const ari = certificate.status?.acme?.ari;
  const w = ari?.suggestedWindow;
  // the leaf's certID (base64url of its AKI and serial) only when there is an answer to match it to
  if (!ari || !w || !ari.lastChecked) return undefined;
  const certID = certIdOf(leaf);
  if (!certID || ari.certID !== certID) return undefined;
  const start = new Date(w.start);
  const end = new Date(w.end);
  const fetchedAt = new Date(ari.lastChecked);
  if ([start, end, fetchedAt].some((d) => Number.isNaN(d.getTime()))) return undefined;
  return { start, end, fetchedAt, seed: certID, ...(ari.explanationURL ? { explanationURL: ari.explanationURL } : {}) };
}

/** issuedAt: when the leaf was issued, if known better than its notBefore (see lastIssuanceTime). */
export function renewalFor(certificate: CertificateObj, leaf: CertificateInfo, issuedAt?: Date): RenewalDecision {
  const renewal = certificate.spec.renewal ?? {};
  const ari = ariFor(certificate, leaf);
  const d = computeRenewal({
    notBefore: leaf.notBefore,
    notAfter: leaf.notAfter,
    renewBefore: certificate.spec.renewBefore,
    renewBeforePercentage: certificate.spec.renewBeforePercentage,
    policy: renewal.policy,
    windows: renewal.windows,
    ...(ari ? { ari } : {}),
  });
  if (d.kind === 'scheduled' && d.reason.startsWith('ARI')) return holdForCaAnswer(d, leaf, certificate.status?.revision, issuedAt);
  return holdForMinimumInterval(d, leaf, issuedAt, undefined, renewal.windows);
}

/**
 * A renewal time the CA set through ARI is not held by the 10%-of-validity interval, which is
 * there against configurations that renew too soon: the CA knows something the schedule does
 * not (RFC 9773 §4.2; a window that had ended when fetched means revocation ahead). A replacement
 * (revision 2 on) is renewed no sooner than 5 minutes after its own issuance, so that a CA
 * answering "now" for every certificate, its replacements included, gets one order per 5
 * minutes, not a loop; the first certificate of a Certificate (revision 1) is at once.
 */
export function holdForCaAnswer(d: RenewalDecision, leaf: { notBefore: Date; notAfter: Date }, revision: number | undefined, issuedAt?: Date): RenewalDecision {
  return (revision ?? 1) <= 1 ? d : holdForMinimumInterval(d, leaf, issuedAt, { ms: MINIMUM_INTERVAL_FLOOR_MS, rule: '5m, the CA asking again for a replacement' });
}
