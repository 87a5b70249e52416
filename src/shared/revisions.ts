// Revisions: a Certificate's status.revision counts its issuances, and the CertificateRequest
// for the next one carries that number in an annotation; the request manager, issuing,
// revision manager and files controllers all read them the same way.
import { createHash } from 'node:crypto';
import { CertificateAnnotation } from '../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../api/types.ts';

export function nextRevision(crt: CertificateObj): number {
  return (crt.status?.revision ?? 0) + 1;
}

export function revisionOf(cr: CertificateRequestObj): number | undefined {
  const v = cr.metadata.annotations?.[CertificateAnnotation.revision];
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** cert-manager's stable request name: the Certificate name (hashed when long) and the revision. */
export function requestName(crtName: string, revision: number): string {
  let base = crtName;
  if (crtName.length > 233) {
    base = crtName.slice(0, 168).replace(/[^a-z0-9]+$/, '') + '-' + createHash('sha256').update(crtName).digest('hex');
  }
  return `${base}-${revision}`;
}

/** The one request that carries this revision; undefined when none or several do. */
export function requestForRevision(requests: readonly CertificateRequestObj[], revision: number | undefined): CertificateRequestObj | undefined {
  if (revision === undefined) return undefined;
  const matches = requests.filter((r) => r.metadata.annotations?.[CertificateAnnotation.revision] === String(revision));
  return matches.length === 1 ? matches[0] : undefined;
}
