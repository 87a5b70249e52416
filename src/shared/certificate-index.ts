// The one index of Certificates by the Secret they write, shared by every controller that goes
// from a Secret to its Certificates (certificate controllers, files, CA injector, revocation):
// one index in the shared informer instead of one per controller, and no scan of every
// Certificate per Secret event (quadratic at scale, issue 17).
import { cacheKey, type Informer } from '../runtime/informer.ts';
import type { Certificate } from '../api/types.ts';
import type { KubeObject } from '../api/meta.ts';

export const CERTIFICATES_BY_SECRET = 'secretName';

type CertificateObj = Certificate & KubeObject;

/** Adds the index to the shared Certificate informer once; every caller gets the same one. */
export function indexCertificatesBySecret(certificates: Informer<CertificateObj>): void {
  if (!certificates.hasIndex(CERTIFICATES_BY_SECRET)) {
    certificates.addIndex(CERTIFICATES_BY_SECRET, (c) => (c.spec?.secretName ? [cacheKey(c.metadata.namespace, c.spec.secretName)] : []));
  }
}

/** The cached Certificates that name Secret `namespace/secretName` (the index must have been added). */
export function certificatesOfSecret(certificates: Informer<CertificateObj>, namespace: string | undefined, secretName: string): CertificateObj[] {
  return certificates.byIndex(CERTIFICATES_BY_SECRET, cacheKey(namespace, secretName));
}
