// The certificate-shim's decision, as cert-manager makes it for Ingresses and Gateways: an
// annotated owner gets one Certificate per secret its TLS configuration names (a tls entry of an
// Ingress, a certificateRef of a Gateway listener), kept in line with the owner while the owner
// controls it, and deleted when no entry names its secret any more. The sources differ only in
// how they read their TLS entries; everything else is decided here once.
import net from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.ts';
import { Certificate as CertificateType } from '../../api/resources.ts';
import { fieldErrorText, validate } from '../../api/validation.ts';
import { isObj } from '../../api/validation/field-errors.ts';
import type { EventSpec } from '../decision.ts';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import type { CertificateSpec } from '../../api/types.ts';
import { BadAnnotationError, CERTIFICATE_ANN, INGRESS_ANN, annotationOfSpecField, specFromAnnotations } from './annotations.ts';

export interface IngressTLS { hosts?: string[]; secretName?: string }

export interface IngressObj extends KubeObject {
  spec?: { tls?: IngressTLS[]; [field: string]: unknown };
}

/** cert-manager's ingress-shim flags (--default-issuer-*, --auto-certificate-annotations). */
export interface IngressShimOptions {
  defaultIssuerName?: string;
  /** default 'Issuer' */
  defaultIssuerKind?: string;
  /** default 'cert-manager.io' */
  defaultIssuerGroup?: string;
  /** annotations that, set to a true value, ask for Certificates from the default issuer; default ['kubernetes.io/tls-acme'] */
  autoCertificateAnnotations?: string[];
}

/** One Certificate's worth of TLS configuration: the secret it fills and the hosts it covers. */
export interface ShimEntry { secretName: string; hosts: string[] }

/** What a source (Ingress, Gateway) reads from its owner object for the shared decision. */
export interface ShimSource {
  /** the ownerReference's apiVersion and kind, also how Events and messages name the owner */
  apiVersion: string;
  kind: string;
  entries: ShimEntry[];
  /** entries skipped for bad configuration; the others proceed */
  skipped: EventSpec[];
  /** configuration errors that stop all writes (Ingress: one secretName in two tls entries) */
  fatal: EventSpec[];
  /** secrets the owner still names, skipped entries included: their Certificates are not deleted */
  referencedSecrets: Set<string>;
  /** whether --auto-certificate-annotations select this owner (upstream: Ingresses only) */
  autoCertificateAnnotations: boolean;
}

export type ShimAction =
  | { kind: 'create'; certificate: CertificateObj }
  /** the whole Certificate to write back, carrying the resourceVersion it was read at */
  | { kind: 'update'; certificate: CertificateObj }
  | { kind: 'delete'; name: string };

export interface ShimDecision {
  actions: ShimAction[];
  events: EventSpec[];
}

export const SHIM_REASON = {
  badConfig: 'BadConfig',
  create: 'CreateCertificate',
  update: 'UpdateCertificate',
  delete: 'DeleteCertificate',
} as const;

/** Label kubectl's applysets stamp; copied to the Certificates it would get them pruned (cert-manager#7306). */
const APPLYSET_LABEL = 'applyset.kubernetes.io/part-of';

/** The spec fields the shim sets: it replaces these on the Certificates it controls and leaves the rest alone. */
const SHIM_FIELDS = [
  'secretName', 'issuerRef', 'commonName', 'dnsNames', 'ipAddresses', 'uris', 'emailAddresses', 'subject',
  'duration', 'renewBefore', 'renewBeforePercentage', 'usages', 'revisionHistoryLimit', 'privateKey', 'secretTemplate',
] as const satisfies readonly (keyof CertificateSpec)[];

const isTrue = (v: string | undefined) => v !== undefined && ['1', 't', 'true'].includes(v.trim().toLowerCase());

export const warning = (message: string): EventSpec => ({ type: 'Warning', reason: SHIM_REASON.badConfig, message });

export function hasShimAnnotation(owner: KubeObject, options: IngressShimOptions, autoCertificateAnnotations = true): boolean {
  const ann = owner.metadata.annotations ?? {};
  if (INGRESS_ANN.issuer in ann || INGRESS_ANN.clusterIssuer in ann) return true;
  if (!autoCertificateAnnotations) return false;
  return (options.autoCertificateAnnotations ?? [INGRESS_ANN.tlsACME]).some((k) => isTrue(ann[k]));
}

/** The issuer a Certificate of this owner names, or the reasons the annotations do not say. */
export function issuerFor(owner: KubeObject, options: IngressShimOptions): { name: string; kind: string; group: string } | { errors: string[] } {
  const ann = owner.metadata.annotations ?? {};
  let name = options.defaultIssuerName ?? '';
  let kind = options.defaultIssuerKind || 'Issuer';
  let group = options.defaultIssuerGroup || 'cert-manager.io';
  const issuer = ann[INGRESS_ANN.issuer];
  const clusterIssuer = ann[INGRESS_ANN.clusterIssuer];
  if (issuer !== undefined) { name = issuer; kind = 'Issuer'; }
  if (clusterIssuer !== undefined) { name = clusterIssuer; kind = 'ClusterIssuer'; }
  if (ann[INGRESS_ANN.issuerKind] !== undefined) kind = ann[INGRESS_ANN.issuerKind];
  if (ann[INGRESS_ANN.issuerGroup] !== undefined) group = ann[INGRESS_ANN.issuerGroup];
  const errors: string[] = [];
  if (!name) errors.push('failed to determine issuer name to be used for ingress resource');
  if (issuer !== undefined && clusterIssuer !== undefined) errors.push(`both "${INGRESS_ANN.issuer}" and "${INGRESS_ANN.clusterIssuer}" may not be set`);
  if (clusterIssuer !== undefined && ann[INGRESS_ANN.issuerGroup] !== undefined) errors.push(`both "${INGRESS_ANN.clusterIssuer}" and "${INGRESS_ANN.issuerGroup}" may not be set`);
  if (clusterIssuer !== undefined && ann[INGRESS_ANN.issuerKind] !== undefined) errors.push(`both "${INGRESS_ANN.clusterIssuer}" and "${INGRESS_ANN.issuerKind}" may not be set`);
  return errors.length ? { errors } : { name, kind, group };
}

/** ACME HTTP-01 hints for the Certificate, from the owner's acme.cert-manager.io annotations (upstream reads them on Gateways too). */
function issuerSpecificAnnotations(owner: KubeObject): Record<string, string> {
  const ann = owner.metadata.annotations ?? {};
  const out: Record<string, string> = {};
  if (ann[INGRESS_ANN.editInPlace] === 'true') {
    out[CERTIFICATE_ANN.overrideIngressName] = owner.metadata.name!;
    // as upstream: a temporary certificate keeps ingress-gce serving while the challenge runs
    out[CERTIFICATE_ANN.issueTemporaryCertificate] = 'true';
  }
  if (ann[INGRESS_ANN.http01IngressClass]) out[CERTIFICATE_ANN.overrideIngressClass] = ann[INGRESS_ANN.http01IngressClass];
  if (ann[INGRESS_ANN.http01IngressClassName]) out[CERTIFICATE_ANN.overrideIngressClassName] = ann[INGRESS_ANN.http01IngressClassName];
  return out;
}

function uniq(values: string[], key: (v: string) => string = (v) => v): string[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const k = key(v);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** One IP spelling per address, so "2001:db8::1" and "2001:0db8::1" count once. */
function canonicalIP(ip: string): string {
  if (net.isIPv4(ip)) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname;
  } catch {
    return ip;
  }
}

function controlledBy(crt: KubeObject, owner: KubeObject): boolean {
  const ref = crt.metadata.ownerReferences?.find((r) => r.controller);
  return !!ref && ref.uid === owner.metadata.uid;
}

function shimSpec(spec: CertificateSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of SHIM_FIELDS) if (spec[f] !== undefined) out[f] = spec[f];
  return out;
}

function buildCertificate(owner: KubeObject, source: ShimSource, tls: ShimEntry, issuerRef: { name: string; kind: string; group: string }, fromAnnotations: Partial<CertificateSpec>): CertificateObj {
  const hostIPs = tls.hosts.filter((h) => net.isIP(h));
  const hostNames = tls.hosts.filter((h) => !net.isIP(h));
  const dnsNames = uniq([...hostNames, ...(fromAnnotations.dnsNames ?? [])]);
  const ipAddresses = uniq([...hostIPs, ...(fromAnnotations.ipAddresses ?? [])], canonicalIP);
  const spec: CertificateSpec = {
    ...fromAnnotations,
    secretName: tls.secretName,
    issuerRef,
    // as upstream, so that a later usages annotation is a change and its removal goes back to these
    usages: fromAnnotations.usages ?? ['digital signature', 'key encipherment'],
  };
  if (dnsNames.length) spec.dnsNames = dnsNames; else delete spec.dnsNames;
  if (ipAddresses.length) spec.ipAddresses = ipAddresses; else delete spec.ipAddresses;
  const labels = { ...(owner.metadata.labels ?? {}) };
  delete labels[APPLYSET_LABEL];
  const annotations = issuerSpecificAnnotations(owner);
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: {
      name: tls.secretName,
      namespace: owner.metadata.namespace,
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ownerReferences: [{
        apiVersion: source.apiVersion, kind: source.kind, name: owner.metadata.name!, uid: owner.metadata.uid!,
        controller: true, blockOwnerDeletion: true,
      }],
    },
    spec,
  };
}

/** Names the annotation behind an API validation error of the built Certificate, when one annotation set the field. */
function validationMessage(crt: CertificateObj): string | undefined {
  const errors = validate(CertificateType, crt);
  if (!errors.length) return undefined;
  return errors.map((e) => {
    const field = /^spec\.([A-Za-z]+)/.exec(e.field)?.[1];
    const ann = field ? annotationOfSpecField[field] : undefined;
    return ann ? `invalid ingress annotation "${ann}": ${fieldErrorText(e)}` : fieldErrorText(e);
  }).join('; ');
}

/**
 * Why a tls entry of an Ingress as stored is not one, or undefined: the embedded server keeps what
 * it is sent, and kube-apiserver would have refused these shapes.
 */
function tlsShapeError(tls: unknown, i: number): string | undefined {
  if (!isObj(tls)) return `spec.tls[${i}]: Invalid value: must be an object`;
  if (tls.hosts !== undefined && !(Array.isArray(tls.hosts) && tls.hosts.every((h) => typeof h === 'string'))) return `spec.tls[${i}].hosts: Invalid value: must be a list of host names`;
  if (tls.secretName !== undefined && typeof tls.secretName !== 'string') return `spec.tls[${i}].secretName: Invalid value: must be a string`;
  return undefined;
}

/** Ingress tls entries as shim entries; an entry without hosts or secretName, or of the wrong shape, is skipped with a Warning. */
export function ingressSource(ingress: IngressObj): ShimSource {
  const raw: unknown = ingress.spec?.tls ?? [];
  const source: ShimSource = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', entries: [], skipped: [], fatal: [], referencedSecrets: new Set(), autoCertificateAnnotations: true };
  if (!Array.isArray(raw)) {
    source.fatal.push(warning('spec.tls: Invalid value: must be a list of TLS blocks; no Certificates were created or updated'));
    return source;
  }
  const tlsEntries: IngressTLS[] = [];
  for (const [i, tls] of raw.entries()) {
    const shape = tlsShapeError(tls, i);
    if (shape) source.skipped.push(warning(`Skipped a TLS block: ${shape}`));
    else tlsEntries.push(tls as IngressTLS);
  }
  const duplicates = uniq(tlsEntries.map((t) => t.secretName ?? '').filter((n, i, all) => n && all.indexOf(n) !== i));
  source.fatal.push(...duplicates.map((n) => warning(`spec.tls: secret name "${n}" must only appear in a single TLS entry; no Certificates were created or updated`)));
  for (const n of tlsEntries.map((t) => t.secretName)) if (n) source.referencedSecrets.add(n);
  for (const tls of tlsEntries) {
    const i = raw.indexOf(tls);
    const missing = [...(!tls.hosts?.length ? [`spec.tls[${i}].hosts: Required value`] : []), ...(!tls.secretName ? [`spec.tls[${i}].secretName: Required value`] : [])];
    if (missing.length) source.skipped.push(warning(`Skipped a TLS block: ${missing.join(', ')}`));
    else source.entries.push({ hosts: tls.hosts!, secretName: tls.secretName! });
  }
  return source;
}

/** What to write for one Ingress, given the Certificates of its namespace (from the cache). */
export function decideIngressShim(ingress: IngressObj, certificates: CertificateObj[], options: IngressShimOptions = {}): ShimDecision {
  return decideShim(ingress, ingressSource, certificates, options);
}

/**
 * What to write for one annotated owner, given its source's reading of it and the Certificates of
 * its namespace (from the cache). A bad annotation or a fatal source error stops everything (a
 * Warning, no writes), as upstream does: nothing partial is created from a configuration the user
 * has to fix anyway.
 */
export function decideShim<O extends KubeObject>(owner: O, read: (owner: O) => ShimSource, certificates: CertificateObj[], options: IngressShimOptions = {}): ShimDecision {
  const none: ShimDecision = { actions: [], events: [] };
  const source = read(owner);
  if (!hasShimAnnotation(owner, options, source.autoCertificateAnnotations)) return none;
  // deleting (foreground cascade included): the Certificates go with it
  if (owner.metadata.deletionTimestamp || owner.metadata.finalizers?.includes('foregroundDeletion')) return none;

  const issuer = issuerFor(owner, options);
  if ('errors' in issuer) {
    return { actions: [], events: [warning(`Could not determine issuer for ingress due to bad annotations: ${issuer.errors.join(', ')}`)] };
  }
  if (source.fatal.length) return { actions: [], events: source.fatal };
  let fromAnnotations: Partial<CertificateSpec>;
  try {
    fromAnnotations = specFromAnnotations(owner.metadata.annotations ?? {});
  } catch (e) {
    if (!(e instanceof BadAnnotationError)) throw e;
    return { actions: [], events: [warning(`${e.message}; no Certificates were created or updated`)] };
  }

  const byName = new Map(certificates.map((c) => [c.metadata.name!, c]));
  const out: ShimDecision = { actions: [], events: [...source.skipped] };
  const built = source.entries.map((entry) => buildCertificate(owner, source, entry, issuer, fromAnnotations));
  for (const crt of built) {
    const invalid = validationMessage(crt);
    if (invalid) return { actions: [], events: [...out.events, warning(`Certificate "${crt.metadata.name}" would be invalid: ${invalid}; no Certificates were created or updated`)] };
  }

  for (const crt of built) {
    const name = crt.metadata.name!;
    const existing = byName.get(name);
    if (!existing) {
      out.actions.push({ kind: 'create', certificate: crt });
      continue;
    }
    if (!controlledBy(existing, owner)) {
      out.events.push(warning(`Certificate "${name}" already exists and is not controlled by this ${source.kind}; it is left alone`));
      continue;
    }
    const updated = withShimFields(existing, crt);
    if (updated) out.actions.push({ kind: 'update', certificate: updated });
  }

  // upstream's rule: a Certificate this owner controls whose secretName it no longer names
  for (const crt of certificates) {
    if (controlledBy(crt, owner) && !source.referencedSecrets.has(crt.spec?.secretName)) out.actions.push({ kind: 'delete', name: crt.metadata.name! });
  }
  return out;
}

/**
 * existing with the shim's spec fields, labels and annotations of desired, or undefined when it
 * already has them. Fields the shim does not set (keystores, a renewal policy) stay as the user
 * left them, as with upstream's server-side apply; annotations are merged, never removed.
 */
function withShimFields(existing: CertificateObj, desired: CertificateObj): CertificateObj | undefined {
  const labelsEqual = isDeepStrictEqual(existing.metadata.labels ?? {}, desired.metadata.labels ?? {});
  const wantAnnotations = desired.metadata.annotations ?? {};
  const annotationsPresent = Object.entries(wantAnnotations).every(([k, v]) => existing.metadata.annotations?.[k] === v);
  const specEqual = isDeepStrictEqual(shimSpec(existing.spec), shimSpec(desired.spec));
  if (labelsEqual && annotationsPresent && specEqual) return undefined;
  const spec: Record<string, unknown> = { ...existing.spec };
  for (const f of SHIM_FIELDS) delete spec[f];
  Object.assign(spec, shimSpec(desired.spec));
  const metadata = { ...existing.metadata };
  if (desired.metadata.labels) metadata.labels = desired.metadata.labels; else delete metadata.labels;
  if (Object.keys(wantAnnotations).length) metadata.annotations = { ...(existing.metadata.annotations ?? {}), ...wantAnnotations };
  return { ...existing, metadata, spec: spec as unknown as CertificateSpec };
}
