// Builds the target Secret of a Certificate from a key and the issued chain, cert-manager's
// layout: tls.crt/tls.key/ca.crt, additional output formats, keystores, template metadata and
// the cert-manager.io annotations. Key and certificate always land in the same write.
import { ownerRefTo } from '../../../shared/ownership.ts';
import { encodePrivateKey } from '../../../pki/keys.ts';
import { keyFactsOf } from '../../../pki/key-facts.ts';
import { combinedPEM, createJKS, createPKCS12, createTruststoreJKS, createTruststorePKCS12, pemToDER } from '../../../pki/encodings.ts';
import { SECRET_TEMPLATE_KEYS_ANNOTATION, SubjectAnnotation, CertificateAnnotation, ManagedLabel } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { encodeBase64, keyFactsMemo, parseCertCached, parseKeyMemo } from '../../../shared/parse-memo.ts';
import { keySpecOf } from '../../../shared/certificate-template.ts';
import { componentNameOf } from '../../context.ts';

/** Data keys certsmith writes; anything else in the Secret belongs to someone else and is kept. */
export const MANAGED_KEYS = ['tls.crt', 'tls.key', 'ca.crt', 'key.der', 'tls-combined.pem', 'keystore.p12', 'truststore.p12', 'keystore.jks', 'truststore.jks'];

export interface IssuedMaterial {
  keyPem: string;
  chainPem: string;
  caPem?: string;
  /** absent for a temporary certificate */
  issuerRef?: { name: string; kind?: string; group?: string };
  /** keystore passwords, resolved by the caller from passwordSecretRef or the literal */
  passwords: { pkcs12?: string; jks?: string };
}

function csv(values: string[] | undefined): string {
  return (values ?? []).map((v) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',');
}



export async function buildSecretData(crt: CertificateObj, m: IssuedMaterial): Promise<Record<string, string>> {
  const keyPem = encodePrivateKey(m.keyPem, keySpecOf(crt.spec).encoding ?? 'PKCS1');
  // Every later reconcile reads this key back from the Secret: parsing PEM is slow in OpenSSL 3.
  const key = parseKeyMemo(m.keyPem).value;
  if (key) {
    parseKeyMemo.remember(keyPem, key);
    // the policies read its facts from the DER otherwise (an EC scalar multiplication in JS)
    keyFactsMemo.remember(keyPem, keyFactsOf(key));
  }
  const data: Record<string, string> = { 'tls.crt': encodeBase64(m.chainPem), 'tls.key': encodeBase64(keyPem) };
  if (m.caPem) data['ca.crt'] = encodeBase64(m.caPem);
  for (const f of crt.spec.additionalOutputFormats ?? []) {
    if (f.type === 'DER') data['key.der'] = encodeBase64(pemToDER(keyPem));
    if (f.type === 'CombinedPEM') data['tls-combined.pem'] = encodeBase64(combinedPEM(keyPem, m.chainPem));
  }
  const ks = crt.spec.keystores;
  if (ks?.pkcs12?.create) {
    const password = m.passwords.pkcs12 ?? '';
    data['keystore.p12'] = (await createPKCS12({ keyPem, chainPem: m.chainPem, caPem: m.caPem, password, profile: ks.pkcs12.profile })).toString('base64');
    if (m.caPem) data['truststore.p12'] = (await createTruststorePKCS12({ caPem: m.caPem, password, profile: ks.pkcs12.profile })).toString('base64');
  }
  if (ks?.jks?.create) {
    const password = m.passwords.jks ?? '';
    data['keystore.jks'] = createJKS({ keyPem, chainPem: m.chainPem, caPem: m.caPem, password, alias: ks.jks.alias }).toString('base64');
    if (m.caPem) data['truststore.jks'] = createTruststoreJKS({ caPem: m.caPem, password }).toString('base64');
  }
  return data;
}

/** Without issuerRef (a temporary certificate) the issuer annotations are left out, and composeSecret drops old ones. */
export function certificateAnnotations(crt: CertificateObj, chainPem: string, issuerRef: IssuedMaterial['issuerRef'] | undefined): Record<string, string> {
  const leaf = parseCertCached(chainPem).template;
  const a: Record<string, string> = {
    [CertificateAnnotation.commonName]: leaf.commonName ?? '',
    [CertificateAnnotation.altNames]: csv(leaf.dnsNames),
    [CertificateAnnotation.ipSANs]: csv(leaf.ipAddresses),
    [CertificateAnnotation.uriSANs]: csv(leaf.uris),
  };
  if (leaf.emailAddresses?.length) a[CertificateAnnotation.emailSANs] = csv(leaf.emailAddresses);
  const s = leaf.subject ?? {};
  const lists: [string, string[] | undefined][] = [
    [SubjectAnnotation.organizations, s.organizations], [SubjectAnnotation.organizationalUnits, s.organizationalUnits],
    [SubjectAnnotation.countries, s.countries], [SubjectAnnotation.provinces, s.provinces],
    [SubjectAnnotation.localities, s.localities], [SubjectAnnotation.postalCodes, s.postalCodes],
    [SubjectAnnotation.streetAddresses, s.streetAddresses],
  ];
  for (const [k, v] of lists) if (v?.length) a[k] = csv(v);
  if (s.serialNumber) a[SubjectAnnotation.serialNumber] = s.serialNumber;
  a[CertificateAnnotation.certificateName] = crt.metadata.name!;
  if (issuerRef) {
    a[CertificateAnnotation.issuerName] = issuerRef.name;
    a[CertificateAnnotation.issuerKind] = issuerRef.kind ?? '';
    a[CertificateAnnotation.issuerGroup] = issuerRef.group ?? '';
  }
  return a;
}

/**
 * The value of SECRET_TEMPLATE_KEYS_ANNOTATION for the spec's secretTemplate ("l:team,a:note"), or
 * undefined when it has no keys: which keys certsmith applied, so that one taken out of the
 * template later is removed from the Secret (cert-manager reads that from managedFields, which
 * the informer cache does not keep).
 */
export function templateKeysRecord(crt: CertificateObj): string | undefined {
  const tpl = crt.spec.secretTemplate ?? {};
  const keys = [...Object.keys(tpl.labels ?? {}).map((k) => `l:${k}`), ...Object.keys(tpl.annotations ?? {}).map((k) => `a:${k}`)];
  return keys.length ? keys.join(',') : undefined;
}

/** Every annotation certificateAnnotations may write: one it does not write this time is an earlier certificate's. */
const CERTIFICATE_ANNOTATION_KEYS: string[] = [
  CertificateAnnotation.commonName, CertificateAnnotation.altNames, CertificateAnnotation.ipSANs, CertificateAnnotation.uriSANs,
  CertificateAnnotation.emailSANs, CertificateAnnotation.certificateName,
  CertificateAnnotation.issuerName, CertificateAnnotation.issuerKind, CertificateAnnotation.issuerGroup,
  ...Object.values(SubjectAnnotation),
];

/** the controller that writes a Certificate's Secret */
export const ISSUING_CONTROLLER = 'certificates-issuing';
/** its field manager now, and before it took cert-manager's name */
const ISSUING_MANAGERS = [componentNameOf(ISSUING_CONTROLLER), ISSUING_CONTROLLER];

/**
 * The managed data keys (ca.crt, keystores, ...) that only other managers set, by the Secret's
 * managedFields: cert-manager's forced apply removes a key it applied before and not now, and
 * leaves one it never applied (a trust bundle a user put into a Secret whose issuer returns no
 * CA). Without a record of who set a key, it is taken for certsmith's.
 */
function ownedByOthersOnly(existing: Secret | undefined): Set<string> {
  const [ours, others] = [new Set<string>(), new Set<string>()];
  for (const entry of existing?.metadata.managedFields ?? []) {
    const e = entry as { manager?: string; subresource?: string; fieldsV1?: { 'f:data'?: Record<string, unknown> } };
    if (e.subresource) continue;
    const into = ISSUING_MANAGERS.includes(e.manager ?? '') ? ours : others;
    for (const field of Object.keys(e.fieldsV1?.['f:data'] ?? {})) if (field.startsWith('f:')) into.add(field.slice(2));
  }
  return new Set([...others].filter((key) => MANAGED_KEYS.includes(key) && !ours.has(key)));
}

/**
 * The Secret to write: the existing one (if any) with certsmith's keys replaced, stale
 * managed keys removed, and everything owned by others left alone.
 */
/** `ownerRef`: --enable-certificate-owner-ref, the Certificate as the Secret's controlling owner (taken off without it). */
export function composeSecret(crt: CertificateObj, existing: Secret | undefined, data: Record<string, string>, annotations: Record<string, string>, ownerRef = false): Secret {
  const tpl = crt.spec.secretTemplate ?? {};
  const prevTemplateKeys = (existing?.metadata.annotations?.[SECRET_TEMPLATE_KEYS_ANNOTATION] ?? '').split(',').filter(Boolean);
  const labels = { ...(existing?.metadata.labels ?? {}) };
  const anns = { ...(existing?.metadata.annotations ?? {}) };
  for (const k of prevTemplateKeys) {
    const [where, key] = [k.slice(0, 2), k.slice(2)];
    if (where === 'l:') delete labels[key];
    if (where === 'a:') delete anns[key];
  }
  Object.assign(labels, tpl.labels ?? {}, { [ManagedLabel.fao]: 'true' });
  // As cert-manager's forced server-side apply: what it applied last time and not now is removed
  // (the email SANs and subject of an earlier certificate, the issuer of a temporary one)
  for (const k of CERTIFICATE_ANNOTATION_KEYS) if (!(k in annotations)) delete anns[k];
  Object.assign(anns, tpl.annotations ?? {}, annotations);
  const templateKeys = templateKeysRecord(crt);
  if (templateKeys) anns[SECRET_TEMPLATE_KEYS_ANNOTATION] = templateKeys;
  else delete anns[SECRET_TEMPLATE_KEYS_ANNOTATION];

  const merged: Record<string, string> = {};
  const othersOnly = ownedByOthersOnly(existing);
  for (const [k, v] of Object.entries(existing?.data ?? {})) if (!MANAGED_KEYS.includes(k) || othersOnly.has(k)) merged[k] = v;
  Object.assign(merged, data);
  const owners = [...(existing?.metadata.ownerReferences ?? []).filter((r) => r.uid !== crt.metadata.uid), ...(ownerRef ? [ownerRefTo(crt)] : [])];
  const metadata: Secret['metadata'] = {
    ...(existing?.metadata ?? {}),
    name: crt.spec.secretName,
    namespace: crt.metadata.namespace,
    labels,
    annotations: anns,
    ownerReferences: owners,
  };
  if (!owners.length) delete metadata.ownerReferences;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata,
    type: existing?.type ?? 'kubernetes.io/tls',
    data: merged,
  };
}
