// When the certificate in a Secret is due for automatic renewal: renewal policy and windows
// applied to its validity, shared by the trigger (to act) and readiness (to report).
import { computeRenewal, type RenewalDecision } from './renewal/renewal-time.ts';
import type { CertificateObj } from './objects.ts';
import type { CertificateInfo } from '../../pki/parse.ts';

export function renewalFor(certificate: CertificateObj, leaf: CertificateInfo): RenewalDecision {
  const renewal = (certificate.spec.renewal ?? {}) as { policy?: 'RenewBefore' | 'EarliestWindow' | 'Disabled'; windows?: [] };
  return computeRenewal({
    notBefore: leaf.notBefore,
    notAfter: leaf.notAfter,
    renewBefore: certificate.spec.renewBefore,
    renewBeforePercentage: certificate.spec.renewBeforePercentage,
    policy: renewal.policy,
    windows: renewal.windows,
  });
}
