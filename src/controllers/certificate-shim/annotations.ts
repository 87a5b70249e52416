// The Ingress annotations cert-manager's ingress-shim reads, and their translation into
// Certificate spec fields. Each parse failure names the annotation, because the user reads it
// in a Warning Event on the Ingress and has nothing else to go on.
import net from 'node:net';
import { formatDuration, parseDuration } from '../../api/duration.ts';
import { keyUsages } from '../../api/schema-values.ts';
import type { CertificateSpec } from '../../api/types.ts';
import type { KeyUsage } from '../../api/types.ts';
import {
  CERT_MANAGER_PREFIX, HTTP01OverrideAnnotation, ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION, IngressShimAnnotation,
} from '../../api/annotations.ts';

// The keys themselves are spelled once, in api/annotations.ts.

function isKeyUsage(u: string): u is KeyUsage {
  return (keyUsages as readonly string[]).includes(u);
}

export const INGRESS_ANN = IngressShimAnnotation;

/** Annotations the shim writes onto Certificates, read further down by the ACME HTTP-01 solver. */
export const CERTIFICATE_ANN = {
  overrideIngressName: HTTP01OverrideAnnotation.ingressName,
  overrideIngressClass: HTTP01OverrideAnnotation.ingressClass,
  overrideIngressClassName: HTTP01OverrideAnnotation.ingressClassName,
  issueTemporaryCertificate: ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION,
} as const;

/** Which annotation sets which spec field: lets an API validation error on the built Certificate name its annotation. */
export const annotationOfSpecField: Record<string, string> = {
  commonName: INGRESS_ANN.commonName,
  ipAddresses: INGRESS_ANN.ipSANs,
  uris: INGRESS_ANN.uriSANs,
  emailAddresses: INGRESS_ANN.emailSANs,
  duration: INGRESS_ANN.duration,
  renewBefore: INGRESS_ANN.renewBefore,
  renewBeforePercentage: INGRESS_ANN.renewBeforePercentage,
  usages: INGRESS_ANN.usages,
  revisionHistoryLimit: INGRESS_ANN.revisionHistoryLimit,
  privateKey: INGRESS_ANN.privateKeyAlgorithm,
  subject: INGRESS_ANN.subjectOrganizations,
  secretTemplate: INGRESS_ANN.secretTemplate,
};

export class BadAnnotationError extends Error {
  constructor(readonly annotation: string, value: string, why: string) {
    super(`invalid ingress annotation "${annotation}" (${JSON.stringify(value)}): ${why}`);
  }
}

/**
 * Splits a comma-separated list where a field may be double-quoted to hold commas ("a, b",c),
 * as cert-manager's subject annotations are read (Go's encoding/csv).
 */
export function splitQuotedList(text: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === ',') {
      out.push(wasQuoted ? field : field.trim());
      field = ''; wasQuoted = false;
    } else if (c === '"' && field.trim() === '') {
      quoted = true; wasQuoted = true; field = '';
    } else if (c === '"') {
      throw new Error('a quote may only open a field');
    } else if (!(wasQuoted && c === ' ')) {
      if (wasQuoted) throw new Error('text after a closing quote');
      field += c;
    }
  }
  if (quoted) throw new Error('unterminated quote');
  out.push(wasQuoted ? field : field.trim());
  return out;
}

const plainList = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);

function parse<T>(ann: Record<string, string>, key: string, fn: (v: string) => T): T | undefined {
  const v = ann[key];
  if (v === undefined) return undefined;
  try {
    return fn(v);
  } catch (e) {
    throw new BadAnnotationError(key, v, (e as Error).message);
  }
}

function goDuration(v: string): string {
  // stored as Go's time.Duration.String() renders it, which is what cert-manager writes
  return formatDuration(parseDuration(v));
}

function integer(v: string): number {
  if (!/^[+-]?\d+$/.test(v.trim())) throw new Error('not an integer');
  return Number(v.trim());
}

function oneOf<T extends string>(values: readonly T[]) {
  return (v: string): T => {
    if (!(values as readonly string[]).includes(v)) throw new Error(`must be one of ${values.join(', ')}`);
    return v as T;
  };
}

/** The spec fields (other than hosts, secretName and issuerRef) that the Ingress's annotations set. */
export function specFromAnnotations(ann: Record<string, string>): Partial<CertificateSpec> {
  const spec: Partial<CertificateSpec> = {};
  const commonName = ann[INGRESS_ANN.commonName];
  if (commonName !== undefined) spec.commonName = commonName;

  const altNames = parse(ann, INGRESS_ANN.altNames, plainList);
  if (altNames?.length) spec.dnsNames = altNames;
  const ips = parse(ann, INGRESS_ANN.ipSANs, (v) => plainList(v).map((ip) => {
    if (!net.isIP(ip)) throw new Error(`"${ip}" is not an IP address`);
    return ip;
  }));
  if (ips?.length) spec.ipAddresses = ips;
  const uris = parse(ann, INGRESS_ANN.uriSANs, (v) => plainList(v).map((u) => {
    if (!URL.canParse(u)) throw new Error(`"${u}" is not a URI`);
    return u;
  }));
  if (uris?.length) spec.uris = uris;
  const emails = parse(ann, INGRESS_ANN.emailSANs, plainList);
  if (emails?.length) spec.emailAddresses = emails;

  const subject: NonNullable<CertificateSpec['subject']> = {};
  const subjectLists = [
    [INGRESS_ANN.subjectOrganizations, 'organizations'], [INGRESS_ANN.subjectOrganizationalUnits, 'organizationalUnits'],
    [INGRESS_ANN.subjectCountries, 'countries'], [INGRESS_ANN.subjectProvinces, 'provinces'],
    [INGRESS_ANN.subjectLocalities, 'localities'], [INGRESS_ANN.subjectStreetAddresses, 'streetAddresses'],
    [INGRESS_ANN.subjectPostalCodes, 'postalCodes'],
  ] as const;
  for (const [key, field] of subjectLists) {
    const values = parse(ann, key, splitQuotedList);
    if (values) subject[field] = values;
  }
  const serial = ann[INGRESS_ANN.subjectSerialNumber];
  if (serial !== undefined) subject.serialNumber = serial;
  if (Object.keys(subject).length) spec.subject = subject;

  const duration = parse(ann, INGRESS_ANN.duration, goDuration);
  if (duration !== undefined) spec.duration = duration;
  const renewBefore = parse(ann, INGRESS_ANN.renewBefore, goDuration);
  if (renewBefore !== undefined) spec.renewBefore = renewBefore;
  const pct = parse(ann, INGRESS_ANN.renewBeforePercentage, integer);
  if (pct !== undefined) spec.renewBeforePercentage = pct;

  const usages = parse(ann, INGRESS_ANN.usages, (v) => v.split(',').map((u) => {
    const usage = u.trim();
    if (!isKeyUsage(usage)) throw new Error(`invalid key usage name "${usage}"`);
    return usage;
  }));
  if (usages) spec.usages = usages;

  const limit = parse(ann, INGRESS_ANN.revisionHistoryLimit, (v) => {
    const n = integer(v);
    if (n < 1 || n > 2 ** 31 - 1) throw new Error('revision history limit must be a positive number');
    return n;
  });
  if (limit !== undefined) spec.revisionHistoryLimit = limit;

  const privateKey: NonNullable<CertificateSpec['privateKey']> = {};
  const algorithm = parse(ann, INGRESS_ANN.privateKeyAlgorithm, oneOf(['RSA', 'ECDSA', 'Ed25519'] as const));
  if (algorithm) privateKey.algorithm = algorithm;
  const encoding = parse(ann, INGRESS_ANN.privateKeyEncoding, oneOf(['PKCS1', 'PKCS8'] as const));
  if (encoding) privateKey.encoding = encoding;
  const size = parse(ann, INGRESS_ANN.privateKeySize, (v) => {
    const n = integer(v);
    const alg = algorithm ?? 'RSA';
    if (alg === 'RSA' && (n < 2048 || n > 8192)) throw new Error('invalid private key size for RSA algorithm (2048 to 8192)');
    if (alg === 'ECDSA' && ![256, 384, 521].includes(n)) throw new Error('invalid private key size for ECDSA algorithm (256, 384 or 521)');
    return n;
  });
  if (size !== undefined) privateKey.size = size;
  const rotation = parse(ann, INGRESS_ANN.privateKeyRotationPolicy, oneOf(['Never', 'Always'] as const));
  if (rotation) privateKey.rotationPolicy = rotation;
  if (Object.keys(privateKey).length) spec.privateKey = privateKey;

  const template = parse(ann, INGRESS_ANN.secretTemplate, secretTemplateOf);
  if (template) spec.secretTemplate = template;
  return spec;
}

function stringMap(v: unknown, what: string): Record<string, string> | undefined {
  if (v === undefined) return undefined;
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    throw new Error(`${what} must be a map of strings`);
  }
  return v as Record<string, string>;
}

function secretTemplateOf(v: string): CertificateSpec['secretTemplate'] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw new Error('error parsing secret template JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('expected a JSON object');
  const unknown = Object.keys(parsed).filter((k) => k !== 'annotations' && k !== 'labels');
  if (unknown.length) throw new Error(`unknown field "${unknown[0]}"`);
  const annotations = stringMap((parsed as Record<string, unknown>).annotations, 'annotations');
  const labels = stringMap((parsed as Record<string, unknown>).labels, 'labels');
  const reserved = Object.keys(annotations ?? {}).find((k) => k.startsWith(CERT_MANAGER_PREFIX));
  if (reserved) throw new Error(`secretTemplate must not have ${CERT_MANAGER_PREFIX} annotations: "${reserved}"`);
  if (!Object.keys(annotations ?? {}).length && !Object.keys(labels ?? {}).length) return undefined;
  return { ...(annotations && Object.keys(annotations).length ? { annotations } : {}), ...(labels && Object.keys(labels).length ? { labels } : {}) };
}
