// When the certificate in a Secret is due for automatic renewal: renewal policy and windows
// applied to its validity, then the minimum interval between issuances; shared by the trigger
// (to act) and readiness (to report), so status.renewalTime is when renewal really happens.
import { computeRenewal, type RenewalDecision } from './renewal/renewal-time.ts';
import { holdForMinimumInterval } from './min-interval.ts';
import type { CertificateObj } from './objects.ts';
import type { CertificateInfo } from '../../pki/parse.ts';

/** issuedAt: when the leaf was issued, if known better than its notBefore (see lastIssuanceTime). */
export function renewalFor(certificate: CertificateObj, leaf: CertificateInfo, issuedAt?: Date): RenewalDecision {
  const renewal = (certificate.spec.renewal ?? {}) as { policy?: 'RenewBefore' | 'EarliestWindow' | 'Disabled'; windows?: [] };
  return holdForMinimumInterval(computeRenewal({
    notBefore: leaf.notBefore,
    notAfter: leaf.notAfter,
    renewBefore: certificate.spec.renewBefore,
    renewBeforePercentage: certificate.spec.renewBeforePercentage,
    policy: renewal.policy,
    windows: renewal.windows,
  }), leaf, issuedAt);
}
