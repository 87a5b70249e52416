// When the revocation controller has something to look at: it reads only the Certificate's
// annotations, finalizers and deletion, so a Certificate that never opted in (no annotation, no
// finalizer, nothing pending) and the status writes of an issuance never wake it (issue 17:
// reconciles per issuance).
import type { Certificate } from '../../../api/types.ts';
import { REVOKE_ON_DELETE_ANNOTATION, REVOKE_ON_KEY_ROTATION_ANNOTATION, SUPERSEDED_CERTIFICATES_ANNOTATION } from '../../../api/annotations.ts';
import { specOrMetadataChanged } from '../../../shared/watch.ts';

export const REVOKE_FINALIZER = 'acme.certsmith.io/revoke-on-delete';

/** Whether the controller has any business with this Certificate as it is. */
export function concernsRevocation(crt: Certificate): boolean {
  const a = crt.metadata.annotations ?? {};
  return REVOKE_ON_DELETE_ANNOTATION in a || REVOKE_ON_KEY_ROTATION_ANNOTATION in a || SUPERSEDED_CERTIFICATES_ANNOTATION in a ||
    (crt.metadata.finalizers ?? []).includes(REVOKE_FINALIZER) || !!crt.metadata.deletionTimestamp;
}

/** An added Certificate wakes the controller only when it concerns revocation. */
export function revocationWakesOnAdd(crt: Certificate): boolean {
  return concernsRevocation(crt);
}

/**
 * An update wakes it when what it reads changed and the Certificate concerned revocation before or
 * after (an annotation removed must still take the finalizer away).
 */
export function revocationWakesOnUpdate(old: Certificate, next: Certificate): boolean {
  return (concernsRevocation(old) || concernsRevocation(next)) && specOrMetadataChanged(old, next);
}
