// Ownership: which object controls which (ownerReferences), which Certificate owns a Secret
// that several name, and whether an object is on its way out.
import type { KubeObject } from '../api/meta.ts';
import type { Certificate as CertificateObj } from '../api/types.ts';
import { byCodeUnits } from '../api/ordering.ts';

export function isDeleting(o: KubeObject): boolean {
  return !!o.metadata.deletionTimestamp;
}

export function controllerOwnerUID(o: KubeObject): string | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller)?.uid;
}

export function ownerRefTo(owner: KubeObject): NonNullable<KubeObject['metadata']['ownerReferences']>[number] {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/**
 * cert-manager's ownership guard for Certificates sharing a secretName: the oldest (then by
 * name) wins, unless the Secret already names one of them.
 */
export function isSecretOwner(crt: CertificateObj, sameSecret: CertificateObj[], annotatedName: string | undefined): boolean {
  if (sameSecret.length <= 1) return true;
  if (annotatedName && sameSecret.some((x) => x.metadata.name === annotatedName)) return annotatedName === crt.metadata.name;
  const sorted = [...sameSecret].sort((a, b) =>
    byCodeUnits(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') || byCodeUnits(a.metadata.name ?? '', b.metadata.name ?? ''));
  return sorted[0].metadata.name === crt.metadata.name;
}
