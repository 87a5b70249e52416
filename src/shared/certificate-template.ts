// Maps a Certificate spec onto the neutral PKI template, the one place that knows both shapes.
import type { CertificateTemplate, X509Subject } from '../pki/template.ts';
import type { KeySpec } from '../pki/keys.ts';
import type { CertificateRequestObj } from '../controllers/certificates/objects.ts';

/** The spec fields the lifecycle reads; the schema's full type is wider. */
export interface CertificateSpecLike {
  secretName: string;
  commonName?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  uris?: string[];
  emailAddresses?: string[];
  otherNames?: { oid: string; utf8Value: string }[];
  literalSubject?: string;
  subject?: {
    organizations?: string[]; countries?: string[]; organizationalUnits?: string[]; localities?: string[];
    provinces?: string[]; streetAddresses?: string[]; postalCodes?: string[]; serialNumber?: string;
  };
  duration?: string;
  renewBefore?: string;
  renewBeforePercentage?: number;
  usages?: string[];
  isCA?: boolean;
  issuerRef: { name: string; kind?: string; group?: string };
  privateKey?: { algorithm?: 'RSA' | 'ECDSA' | 'Ed25519'; size?: number; encoding?: 'PKCS1' | 'PKCS8'; rotationPolicy?: 'Never' | 'Always' };
  revisionHistoryLimit?: number;
  encodeUsagesInRequest?: boolean;
  nameConstraints?: {
    critical?: boolean;
    permitted?: { dnsDomains?: string[]; ipRanges?: string[]; emailAddresses?: string[]; uriDomains?: string[] };
    excluded?: { dnsDomains?: string[]; ipRanges?: string[]; emailAddresses?: string[]; uriDomains?: string[] };
  };
  secretTemplate?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  additionalOutputFormats?: { type: 'CombinedPEM' | 'DER' }[];
  keystores?: {
    pkcs12?: { create: boolean; passwordSecretRef?: { name: string; key: string }; password?: string; profile?: 'LegacyRC2' | 'LegacyDES' | 'Modern2023' };
    jks?: { create: boolean; passwordSecretRef?: { name: string; key: string }; password?: string; alias?: string };
  };
  renewal?: unknown;
}

export function keySpecOf(spec: CertificateSpecLike): KeySpec {
  const pk = spec.privateKey ?? {};
  const algorithm = pk.algorithm ?? 'RSA';
  const size = algorithm === 'Ed25519' ? undefined : pk.size || (algorithm === 'ECDSA' ? 256 : 2048);
  return { algorithm, size, encoding: pk.encoding ?? 'PKCS1' };
}

export function templateOf(spec: CertificateSpecLike): CertificateTemplate {
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
    otherNames: spec.otherNames,
    subject,
    literalSubject: spec.literalSubject,
    usages: spec.encodeUsagesInRequest === false ? undefined : spec.usages,
    isCA: spec.isCA,
    nameConstraints: spec.nameConstraints,
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
export function requestSpecOf(spec: CertificateSpecLike, csrPem: string): CertificateRequestObj['spec'] {
  return {
    request: Buffer.from(csrPem).toString('base64'),
    issuerRef: spec.issuerRef,
    ...(spec.duration ? { duration: spec.duration } : {}),
    ...(spec.isCA ? { isCA: true } : {}),
    ...(spec.usages ? { usages: spec.usages } : {}),
  };
}
