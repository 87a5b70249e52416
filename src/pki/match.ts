// What differs between an existing CSR or certificate and the spec, as Certificate field paths,
// in the order cert-manager's RequestMatchesSpec reports them. List comparisons ignore order.
import type { CSRInfo } from './csr.ts';
import { keySpecMismatches, type KeySpec } from './keys.ts';
import type { CertificateInfo } from './parse.ts';
import type { CertificateTemplate, OtherName, X509Subject } from './template.ts';
import { effectiveUsages } from './usages.ts';
import { canonicalIP, subjectNameFromTemplate } from './x509-fields.ts';

export type WantedCertificate = CertificateTemplate & { keySpec?: KeySpec };

/** Multiset equality, as upstream's util.EqualUnsorted. */
function sameMultiset(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = [...(a ?? [])].sort();
  const y = [...(b ?? [])].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameSet(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return sameMultiset([...new Set(a ?? [])], [...new Set(b ?? [])]);
}

const otherNameKey = (o: OtherName) => `${o.oid}=${o.utf8Value}`;

const SUBJECT_LIST_FIELDS: (keyof X509Subject)[] = [
  'organizations', 'countries', 'localities', 'organizationalUnits', 'postalCodes', 'provinces', 'streetAddresses',
];

function subjectMismatches(have: CertificateTemplate, haveSubjectDER: Buffer, want: CertificateTemplate): string[] {
  if (want.literalSubject) {
    let wantDER: Buffer;
    try {
      wantDER = subjectNameFromTemplate({ literalSubject: want.literalSubject });
    } catch {
      return ['spec.literalSubject'];
    }
    return wantDER.equals(haveSubjectDER) ? [] : ['spec.literalSubject'];
  }
  const out: string[] = [];
  if ((have.commonName ?? '') !== (want.commonName ?? '')) out.push('spec.commonName');
  const hs = have.subject ?? {};
  const ws = want.subject ?? {};
  if ((hs.serialNumber ?? '') !== (ws.serialNumber ?? '')) out.push('spec.subject.serialNumber');
  for (const f of SUBJECT_LIST_FIELDS) {
    if (!sameMultiset(hs[f] as string[] | undefined, ws[f] as string[] | undefined)) out.push(`spec.subject.${f}`);
  }
  return out;
}

function altNameMismatches(have: CertificateTemplate, want: CertificateTemplate): string[] {
  const out: string[] = [];
  if (!sameSet((have.ipAddresses ?? []).map(canonicalIP), (want.ipAddresses ?? []).map(canonicalIP))) out.push('spec.ipAddresses');
  if (!sameMultiset(have.uris, want.uris)) out.push('spec.uris');
  if (!sameMultiset(have.emailAddresses, want.emailAddresses)) out.push('spec.emailAddresses');
  return out;
}

function keyMismatches(publicKey: CSRInfo['keyType'], keySpec: KeySpec | undefined): string[] {
  if (!keySpec) return [];
  if ('unsupported' in publicKey) return ['spec.privateKey.algorithm'];
  try {
    return keySpecMismatches(publicKey, keySpec);
  } catch {
    return ['spec.privateKey.algorithm'];
  }
}

/** What a CertificateRequest's spec says beside its CSR, for csrMismatches. */
export interface RequestSpecFacts {
  isCA?: boolean;
  usages?: readonly string[];
}

/**
 * A CSR against the spec (upstream RequestMatchesSpec on the CSR side). Given the
 * CertificateRequest's spec (`request`), isCA and usages are compared on it, as upstream does:
 * spec.isCA, and spec.usages with the Certificate's as they are written (upstream's
 * EqualKeyUsagesUnsorted: any order, no defaulting). The CSR's KeyUsage and ExtendedKeyUsage are
 * then not looked at: a CSR made for encodeUsagesInRequest: false carries none (and one stored by
 * earlier certsmith carries the default key usages), and admission has held any it carries to
 * the request's spec.usages. isCA is compared on the CSR too when it states BasicConstraints:
 * certsmith's CSRs carried them before issue 15 and no longer do (nor do cert-manager's by
 * default), so a CSR without them says nothing about isCA.
 * Without a request, the CSR's usages are compared after defaulting, when it carries KU/EKU at all.
 */
export function csrMismatches(csr: CSRInfo, want: WantedCertificate, request?: RequestSpecFacts): string[] {
  const have = csr.template;
  const out = altNameMismatches(have, want);
  if (!sameMultiset(have.dnsNames, want.dnsNames)) out.push('spec.dnsNames');
  if (want.otherNames && want.otherNames.length > 0 &&
      !sameMultiset((have.otherNames ?? []).map(otherNameKey), want.otherNames.map(otherNameKey))) {
    out.push('spec.otherNames');
  }
  out.push(...subjectMismatches(have, csr.subjectDER, want));
  const wantCA = want.isCA ?? false;
  if ((csr.hasBasicConstraints && (have.isCA ?? false) !== wantCA) || (request && (request.isCA ?? false) !== wantCA)) out.push('spec.isCA');
  if (request) {
    if (!sameMultiset(request.usages, want.usages)) out.push('spec.usages');
  } else if (csr.hasUsages) {
    let wantUsages: string[] | undefined;
    try {
      wantUsages = effectiveUsages(want.usages, want.isCA ?? false);
    } catch {
      wantUsages = undefined;
    }
    if (!wantUsages || !sameMultiset(effectiveUsages(have.usages, false), wantUsages)) out.push('spec.usages');
  }
  out.push(...keyMismatches(csr.keyType, want.keySpec));
  return out;
}

/**
 * An issued certificate against the spec: upstream's fuzzy SecretDataAltNamesMatchSpec (commonName and
 * dnsNames compared as one set, since issuers may move the CN into the SANs, then IPs, URIs and emails),
 * plus key algorithm/size, isCA when a CA was asked for, and duration when durationMs is given.
 * Subject and usages are not compared: issuers such as ACME CAs rewrite them.
 * A CA issuer clips notAfter to its own; pass durationMs only where that cannot happen.
 */
export function certificateMismatches(cert: CertificateInfo, want: WantedCertificate & { durationMs?: number }): string[] {
  const have = cert.template;
  const out: string[] = [];
  const haveNames = new Set([...(have.dnsNames ?? []), ...(have.commonName ? [have.commonName] : [])]);
  const wantNames = new Set([...(want.dnsNames ?? []), ...(want.commonName ? [want.commonName] : [])]);
  if (!sameSet([...haveNames], [...wantNames])) {
    const cnCovered = !want.commonName || haveNames.has(want.commonName);
    if (!cnCovered) out.push('spec.commonName');
    const dnsCovered = (want.dnsNames ?? []).every((d) => haveNames.has(d));
    if (!dnsCovered || cnCovered) out.push('spec.dnsNames');
  }
  out.push(...altNameMismatches(have, want));
  if (want.isCA && !cert.isCA) out.push('spec.isCA');
  if (want.durationMs !== undefined) {
    const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
    // X.509 stores whole seconds.
    if (Math.abs(lifetime - want.durationMs) >= 1000) out.push('spec.duration');
  }
  out.push(...keyMismatches(cert.keyType, want.keySpec));
  return out;
}
