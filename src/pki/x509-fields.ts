// Mapping between CertificateTemplate and the X.509 structures (subject Name, extensions) shared by CSRs and certificates.
import 'reflect-metadata';
import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import * as ax from '@peculiar/asn1-x509';
import { Name as X509Name } from '@peculiar/x509';
import type { CertificateTemplate, NameConstraintItems, NameConstraints, OtherName, X509Subject } from './template.ts';
import { decodeUsages, encodeUsages } from './usages.ts';

const OID = {
  commonName: '2.5.4.3', serialNumber: '2.5.4.5', country: '2.5.4.6', locality: '2.5.4.7', province: '2.5.4.8',
  street: '2.5.4.9', organization: '2.5.4.10', organizationalUnit: '2.5.4.11', postalCode: '2.5.4.17',
  uid: '0.9.2342.19200300.100.1.1', domainComponent: '0.9.2342.19200300.100.1.25', email: '1.2.840.113549.1.9.1',
};

/** RFC 4514 keys cert-manager's literalSubject accepts beyond those @peculiar/x509 knows. */
const LITERAL_SUBJECT_EXTRA_KEYS: Record<string, string> = {
  SERIALNUMBER: OID.serialNumber, serialNumber: OID.serialNumber, STREET: OID.street, street: OID.street,
  POSTALCODE: OID.postalCode, postalCode: OID.postalCode, UID: OID.uid, uid: OID.uid,
};

/** Short names as Go's pkix.Name.String() prints them. */
const SHORT_NAME_BY_OID: Record<string, string> = {
  [OID.commonName]: 'CN', [OID.serialNumber]: 'SERIALNUMBER', [OID.country]: 'C', [OID.locality]: 'L',
  [OID.province]: 'ST', [OID.street]: 'STREET', [OID.organization]: 'O', [OID.organizationalUnit]: 'OU',
  [OID.postalCode]: 'POSTALCODE', [OID.uid]: 'UID', [OID.domainComponent]: 'DC', [OID.email]: 'emailAddress',
};

// Go's pkix.Name.ToRDNSequence order; several values of one type share a multi-valued RDN, as in Go.
const SUBJECT_FIELD_ORDER: [keyof X509Subject, string][] = [
  ['countries', OID.country], ['provinces', OID.province], ['localities', OID.locality],
  ['streetAddresses', OID.street], ['postalCodes', OID.postalCode], ['organizations', OID.organization],
  ['organizationalUnits', OID.organizationalUnit],
];

function attributeValue(type: string, value: string): ax.AttributeTypeAndValue {
  const printable = /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value);
  const v = printable ? new ax.AttributeValue({ printableString: value }) : new ax.AttributeValue({ utf8String: value });
  return new ax.AttributeTypeAndValue({ type, value: v });
}

export function subjectNameFromTemplate(t: CertificateTemplate): ax.Name {
  if (t.literalSubject) return parseLiteralSubject(t.literalSubject);
  const rdns: ax.RelativeDistinguishedName[] = [];
  const s = t.subject ?? {};
  for (const [field, oid] of SUBJECT_FIELD_ORDER) {
    const values = (s[field] as string[] | undefined) ?? [];
    if (values.length > 0) rdns.push(new ax.RelativeDistinguishedName(values.map((v) => attributeValue(oid, v))));
  }
  if (t.commonName) rdns.push(new ax.RelativeDistinguishedName([attributeValue(OID.commonName, t.commonName)]));
  if (s.serialNumber) rdns.push(new ax.RelativeDistinguishedName([attributeValue(OID.serialNumber, s.serialNumber)]));
  return new ax.Name(rdns);
}

/** RFC 4514 strings list the last RDN first, so the parsed sequence is reversed (as cert-manager does). */
export function parseLiteralSubject(literal: string): ax.Name {
  let parsed: ax.Name;
  try {
    parsed = AsnConvert.parse(new X509Name(literal, LITERAL_SUBJECT_EXTRA_KEYS).toArrayBuffer(), ax.Name);
  } catch (err) {
    throw new Error(`invalid literalSubject: ${(err as Error).message}`);
  }
  return new ax.Name([...parsed].reverse());
}

function escapeDNValue(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1').replace(/^([ #])/, '\\$1').replace(/ $/, '\\ ');
}

/** RFC 4514 form (last RDN first), e.g. "CN=foo,O=bar". */
export function formatName(name: ax.Name): string {
  return [...name].reverse().map((rdn) => rdn.map((atv) => {
    const key = SHORT_NAME_BY_OID[atv.type] ?? atv.type;
    const raw = atv.value.anyValue ? `#${Buffer.from(atv.value.anyValue).toString('hex')}` : escapeDNValue(atv.value.toString());
    return `${key}=${raw}`;
  }).join('+')).join(',');
}

export function subjectFieldsFromName(name: ax.Name): { commonName?: string; subject: X509Subject } {
  const subject: X509Subject = {};
  let commonName: string | undefined;
  for (const rdn of name) {
    for (const atv of rdn) {
      const v = atv.value.toString();
      if (atv.type === OID.commonName) { commonName ??= v; continue; }
      if (atv.type === OID.serialNumber) { subject.serialNumber ??= v; continue; }
      const field = SUBJECT_FIELD_ORDER.find(([, oid]) => oid === atv.type)?.[0];
      if (field) ((subject[field] as string[] | undefined) ?? (subject[field] = [] as never) as string[]).push(v);
    }
  }
  return { commonName, subject };
}

export function canonicalIP(ip: string): string {
  try {
    // A DER round trip gives the library's canonical text form (lower-case, compressed IPv6).
    const der = AsnConvert.serialize(new ax.GeneralName({ iPAddress: ip.trim() }));
    return AsnConvert.parse(der, ax.GeneralName).iPAddress ?? ip;
  } catch {
    return ip;
  }
}

function utf8OtherName(o: OtherName): ax.GeneralName {
  const value = new asn1js.Utf8String({ value: o.utf8Value }).toBER(false);
  return new ax.GeneralName({ otherName: new ax.OtherName({ typeId: o.oid, value }) });
}

function otherNameFromAsn(o: ax.OtherName): OtherName {
  const parsed = asn1js.fromBER(o.value);
  let inner = parsed.result;
  // Depending on how the [0] wrapper was consumed, the value may still carry it.
  if (inner.idBlock.tagClass === 3 && inner instanceof asn1js.Constructed) inner = inner.valueBlock.value[0];
  if (!(inner instanceof asn1js.Utf8String)) throw new Error(`otherName ${o.typeId} is not a UTF8String`);
  return { oid: o.typeId, utf8Value: inner.valueBlock.value };
}

function generalNamesFromTemplate(t: CertificateTemplate): ax.GeneralName[] {
  return [
    ...(t.dnsNames ?? []).map((d) => new ax.GeneralName({ dNSName: d })),
    ...(t.emailAddresses ?? []).map((e) => new ax.GeneralName({ rfc822Name: e })),
    ...(t.ipAddresses ?? []).map((ip) => new ax.GeneralName({ iPAddress: canonicalIP(ip) })),
    ...(t.uris ?? []).map((u) => new ax.GeneralName({ uniformResourceIdentifier: u })),
    ...(t.otherNames ?? []).map(utf8OtherName),
  ];
}

function subtrees(items: NameConstraintItems | undefined): ax.GeneralSubtrees | undefined {
  if (!items) return undefined;
  const names = [
    ...(items.dnsDomains ?? []).map((d) => new ax.GeneralName({ dNSName: d })),
    ...(items.ipRanges ?? []).map((r) => new ax.GeneralName({ iPAddress: r })),
    ...(items.emailAddresses ?? []).map((e) => new ax.GeneralName({ rfc822Name: e })),
    ...(items.uriDomains ?? []).map((u) => new ax.GeneralName({ uniformResourceIdentifier: u })),
  ];
  return names.length > 0 ? new ax.GeneralSubtrees(names.map((base) => new ax.GeneralSubtree({ base }))) : undefined;
}

function constraintItems(trees: ax.GeneralSubtrees | undefined): NameConstraintItems | undefined {
  if (!trees || trees.length === 0) return undefined;
  const items: NameConstraintItems = {};
  const add = (k: keyof NameConstraintItems, v: string) => (items[k] ??= []).push(v);
  for (const { base } of trees) {
    if (base.dNSName !== undefined) add('dnsDomains', base.dNSName);
    else if (base.iPAddress !== undefined) add('ipRanges', base.iPAddress);
    else if (base.rfc822Name !== undefined) add('emailAddresses', base.rfc822Name);
    else if (base.uniformResourceIdentifier !== undefined) add('uriDomains', base.uniformResourceIdentifier);
  }
  return items;
}

function ext(extnID: string, critical: boolean, value: unknown): ax.Extension {
  return new ax.Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

export function keyUsageExtensions(usages: string[] | undefined, isCA: boolean): ax.Extension[] {
  const { keyUsageBits, extKeyUsageOids } = encodeUsages(usages, isCA);
  const out: ax.Extension[] = [];
  if (keyUsageBits.length > 0) {
    // RFC 5280 recommends KU critical; Go's x509 marks it so.
    out.push(ext(ax.id_ce_keyUsage, true, new ax.KeyUsage(keyUsageBits.reduce((f, b) => f | (1 << b), 0))));
  }
  if (extKeyUsageOids.length > 0) out.push(ext(ax.id_ce_extKeyUsage, false, new ax.ExtendedKeyUsage(extKeyUsageOids)));
  return out;
}

export function basicConstraintsExtension(isCA: boolean, maxPathLen: number | undefined): ax.Extension {
  const bc = new ax.BasicConstraints({ cA: isCA });
  if (isCA && maxPathLen !== undefined && maxPathLen >= 0) bc.pathLenConstraint = maxPathLen;
  return ext(ax.id_ce_basicConstraints, true, bc);
}

/** SAN is critical when the subject is empty (RFC 5280 4.2.1.6). */
export function subjectAltNameExtension(t: CertificateTemplate, subjectEmpty: boolean): ax.Extension | undefined {
  const names = generalNamesFromTemplate(t);
  return names.length > 0 ? ext(ax.id_ce_subjectAltName, subjectEmpty, new ax.SubjectAlternativeName(names)) : undefined;
}

export function nameConstraintsExtension(nc: NameConstraints | undefined): ax.Extension | undefined {
  if (!nc) return undefined;
  const permittedSubtrees = subtrees(nc.permitted);
  const excludedSubtrees = subtrees(nc.excluded);
  if (!permittedSubtrees && !excludedSubtrees) return undefined;
  return ext(ax.id_ce_nameConstraints, nc.critical ?? false, new ax.NameConstraints({ permittedSubtrees, excludedSubtrees }));
}

/** RFC 5280 method 1: SHA-1 of the subjectPublicKey BIT STRING contents (what Go and OpenSSL use). */
export function keyIdentifier(spki: ax.SubjectPublicKeyInfo): Buffer {
  return crypto.createHash('sha1').update(new Uint8Array(spki.subjectPublicKey)).digest();
}

export function subjectKeyIdentifierExtension(keyId: Buffer): ax.Extension {
  return ext(ax.id_ce_subjectKeyIdentifier, false, new ax.SubjectKeyIdentifier(new Uint8Array(keyId)));
}

export function authorityKeyIdentifierExtension(keyId: Buffer): ax.Extension {
  return ext(ax.id_ce_authorityKeyIdentifier, false,
    new ax.AuthorityKeyIdentifier({ keyIdentifier: new ax.KeyIdentifier(new Uint8Array(keyId)) }));
}

export interface ExtensionFields {
  template: CertificateTemplate;
  /** whether KU or EKU were present at all (a CSR may leave usages to the issuer) */
  hasUsages: boolean;
  hasBasicConstraints: boolean;
  subjectKeyId?: Buffer;
  authorityKeyId?: Buffer;
}

export function fieldsFromExtensions(extensions: readonly ax.Extension[]): ExtensionFields {
  const t: CertificateTemplate = {};
  let kuBits: number[] = [];
  let ekuOids: string[] = [];
  let hasUsages = false;
  let hasBasicConstraints = false;
  let subjectKeyId: Buffer | undefined;
  let authorityKeyId: Buffer | undefined;
  for (const e of extensions) {
    const value = e.extnValue.buffer;
    switch (e.extnID) {
      case ax.id_ce_subjectAltName:
        for (const gn of AsnConvert.parse(value, ax.SubjectAlternativeName)) {
          if (gn.dNSName !== undefined) (t.dnsNames ??= []).push(gn.dNSName);
          else if (gn.iPAddress !== undefined) (t.ipAddresses ??= []).push(gn.iPAddress);
          else if (gn.rfc822Name !== undefined) (t.emailAddresses ??= []).push(gn.rfc822Name);
          else if (gn.uniformResourceIdentifier !== undefined) (t.uris ??= []).push(gn.uniformResourceIdentifier);
          else if (gn.otherName !== undefined) (t.otherNames ??= []).push(otherNameFromAsn(gn.otherName));
        }
        break;
      case ax.id_ce_keyUsage: {
        hasUsages = true;
        const flags = AsnConvert.parse(value, ax.KeyUsage).toNumber();
        kuBits = [];
        for (let b = 0; b < 9; b++) if (flags & (1 << b)) kuBits.push(b);
        break;
      }
      case ax.id_ce_extKeyUsage:
        hasUsages = true;
        ekuOids = [...AsnConvert.parse(value, ax.ExtendedKeyUsage)];
        break;
      case ax.id_ce_basicConstraints: {
        hasBasicConstraints = true;
        const bc = AsnConvert.parse(value, ax.BasicConstraints);
        t.isCA = bc.cA;
        if (bc.pathLenConstraint !== undefined) t.maxPathLen = bc.pathLenConstraint;
        break;
      }
      case ax.id_ce_nameConstraints: {
        const nc = AsnConvert.parse(value, ax.NameConstraints);
        t.nameConstraints = { critical: e.critical, permitted: constraintItems(nc.permittedSubtrees), excluded: constraintItems(nc.excludedSubtrees) };
        break;
      }
      case ax.id_ce_subjectKeyIdentifier:
        subjectKeyId = Buffer.from(AsnConvert.parse(value, ax.SubjectKeyIdentifier).buffer);
        break;
      case ax.id_ce_authorityKeyIdentifier: {
        const aki = AsnConvert.parse(value, ax.AuthorityKeyIdentifier);
        if (aki.keyIdentifier) authorityKeyId = Buffer.from(aki.keyIdentifier.buffer);
        break;
      }
    }
  }
  if (hasUsages) t.usages = decodeUsages(kuBits, ekuOids);
  return { template: t, hasUsages, hasBasicConstraints, subjectKeyId, authorityKeyId };
}
