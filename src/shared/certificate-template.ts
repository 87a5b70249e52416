// Maps a Certificate spec onto the neutral PKI template, the one place that knows both shapes.
import type { CertificateTemplate, X509Subject } from '../pki/template.ts';
import type { KeySpec } from '../pki/keys.ts';
import { canonicalOID } from '../pki/der.ts';
import type { CertificateRequest as CertificateRequestObj, CertificateSpec } from '../api/types.ts';

export function keySpecOf(spec: CertificateSpec): KeySpec {
  const pk = spec.privateKey ?? {};
  const algorithm = pk.algorithm ?? 'RSA';
  const size = algorithm === 'Ed25519' ? undefined : pk.size || (algorithm === 'ECDSA' ? 256 : 2048);
  return { algorithm, size, encoding: pk.encoding ?? 'PKCS1' };
}

export function templateOf(spec: CertificateSpec): CertificateTemplate {
  const s = spec.subject;
  const subject: X509Subject | undefined = s && {
    organizations: s.organizations, countries: s.countries, organizationalUnits: s.organizationalUnits,
    localities: s.localities, provinces: s.provinces, streetAddresses: s.streetAddresses,
    postalCodes: s.postalCodes, serialNumber: s.serialNumber,
  };
  return {
    commonName: spec.commonName,
    dnsNames: spec.dnsNames,
    ipAddresses: spec.ipAddresses,
    uris: spec.uris,
    emailAddresses: spec.emailAddresses,
    // admission requires both fields of an otherName, and an OID canonicalOID reads ("03" is 3)
    otherNames: spec.otherNames?.map(({ oid, utf8Value }) => ({ oid: canonicalOID(oid!) ?? oid!, utf8Value: utf8Value! })),
    subject,
    literalSubject: spec.literalSubject,
    usages: spec.usages,
    isCA: spec.isCA,
    nameConstraints: spec.nameConstraints,
    // false: the CSR carries no usages (pki/csr.ts), the request's spec.usages does
    ...(spec.encodeUsagesInRequest === false ? { encodeUsagesInRequest: false } : {}),
  };
}

/** An empty kind means Issuer and an empty group cert-manager.io, in every comparison. */
export function issuerRefKey(ref: { name: string; kind?: string; group?: string }): string {
  return `${ref.kind || 'Issuer'}.${ref.group || 'cert-manager.io'}/${ref.name}`;
}

/**
 * The spec of the CertificateRequest made for a Certificate spec and a CSR: the issuer, and the
 * duration, isCA and usages cert-manager copies. The request manager and `certsmith create
 * certificaterequest` both build requests with it.
 */
export function requestSpecOf(spec: CertificateSpec, csrPem: string): CertificateRequestObj['spec'] {
  return {
    request: Buffer.from(csrPem).toString('base64'),
    issuerRef: spec.issuerRef,
    ...(spec.duration ? { duration: spec.duration } : {}),
    ...(spec.isCA ? { isCA: true } : {}),
    ...(spec.usages ? { usages: spec.usages } : {}),
  };
}
