// Mapping between CertificateTemplate and the X.509 structures (subject Name, extensions) shared by CSRs and
// certificates, encoded and decoded with the DER codec in der.ts.
import { BoundedCache } from '../runtime/bounded-cache.ts';
import crypto from 'node:crypto';
import {
  boolean, contents, DERError, DERReader, decodeBoolean, decodeNamedBits, decodeOctetAlignedBitString, decodeOID,
  decodeSmallInteger, decodeString, explicit, implicit, integer, namedBits, octetString, oid, printableString,
  readSingle, canonicalOID, sequence, setOf, TAG, tlv, utf8String, ia5Bytes, isWellFormedString, type DERElement,
} from './der.ts';
import type { CertificateTemplate, NameConstraintItems, NameConstraints, OtherName, X509Subject } from './template.ts';
import { decodeUsages, encodeUsages } from './usages.ts';

const OID = {
  commonName: '2.5.4.3', serialNumber: '2.5.4.5', country: '2.5.4.6', locality: '2.5.4.7', province: '2.5.4.8',
  street: '2.5.4.9', organization: '2.5.4.10', organizationalUnit: '2.5.4.11', postalCode: '2.5.4.17',
  uid: '0.9.2342.19200300.100.1.1', domainComponent: '0.9.2342.19200300.100.1.25', email: '1.2.840.113549.1.9.1',
};

export const EXTENSION_OID = {
  subjectKeyIdentifier: '2.5.29.14', keyUsage: '2.5.29.15', subjectAltName: '2.5.29.17', basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30', authorityKeyIdentifier: '2.5.29.35', extKeyUsage: '2.5.29.37',
} as const;

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
const SUBJECT_FIELD_BY_OID = new Map(SUBJECT_FIELD_ORDER.map(([field, o]) => [o, field]));

// ---- names

export interface NameAttribute {
  type: string;
  /** the AttributeValue element, tag and length included */
  value: Buffer;
}
/** An X.501 Name as its RDNs in encoded order; each RDN is a set of attributes. */
export type DistinguishedName = NameAttribute[][];

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

function attributeValue(value: string): Buffer {
  return PRINTABLE.test(value) ? printableString(value) : utf8String(value);
}

/** Each RDN's attributes are a SET OF, so DER (and Go) sorts them by their encoding. */
export function encodeName(name: DistinguishedName): Buffer {
  return sequence(...name.map((rdn) => setOf(rdn.map((a) => sequence(oid(a.type), a.value)))));
}

export function decodeName(der: Buffer): DistinguishedName {
  const rdns = contents(readSingle(der, TAG.SEQUENCE, 'Name'), 'Name');
  const name: DistinguishedName = [];
  while (!rdns.done) {
    const set = contents(rdns.expect(TAG.SET, 'RelativeDistinguishedName'), 'RelativeDistinguishedName');
    const rdn: NameAttribute[] = [];
    while (!set.done) {
      const atv = contents(set.expect(TAG.SEQUENCE, 'AttributeTypeAndValue'), 'AttributeTypeAndValue');
      const type = decodeOID(atv.expect(TAG.OID, 'attribute type'));
      const value = atv.read().der;
      atv.end();
      rdn.push({ type, value });
    }
    name.push(rdn);
  }
  return name;
}

function attributeString(a: NameAttribute): string | undefined {
  return decodeString(new DERReader(a.value, 'attribute value').read());
}

/** RFC 4514's "#" + hex of the encoding stands for a value that is not a string. */
const hexForm = (a: NameAttribute) => `#${a.value.toString('hex')}`;

function attributeText(a: NameAttribute): string {
  return attributeString(a) ?? hexForm(a);
}

/** DER of the subject the template asks for. */
export function subjectNameFromTemplate(t: CertificateTemplate): Buffer {
  if (t.literalSubject) return encodeLiteralSubject(t.literalSubject);
  const name: DistinguishedName = [];
  const s = t.subject ?? {};
  for (const [field, type] of SUBJECT_FIELD_ORDER) {
    const values = (s[field] as string[] | undefined) ?? [];
    if (values.length > 0) name.push(values.map((v) => ({ type, value: attributeValue(v) })));
  }
  if (t.commonName) name.push([{ type: OID.commonName, value: attributeValue(t.commonName) }]);
  if (s.serialNumber) name.push([{ type: OID.serialNumber, value: attributeValue(s.serialNumber) }]);
  return encodeName(name);
}

/**
 * cert-manager's literalSubject keys (pkg/util/pki attributeTypeNames), matched as written: any
 * other key must be a dotted OID. "E", "emailAddress", "POSTALCODE" or a lower-case "cn" are
 * refused, as cert-manager refuses them.
 */
const LITERAL_SUBJECT_KEYS: Record<string, string> = {
  C: OID.country, O: OID.organization, OU: OID.organizationalUnit, CN: OID.commonName, SERIALNUMBER: OID.serialNumber,
  L: OID.locality, ST: OID.province, STREET: OID.street, UID: OID.uid, DC: OID.domainComponent,
};

/** One attribute of a literalSubject: its key as written, its OID, and its value as text. */
export interface LiteralSubjectAttribute { key: string; type: string; value: string }

/** Why a literalSubject cannot be used. */
export class LiteralSubjectError extends Error {
  constructor(message: string) {
    super(message);
  }
}

const unrecognizedKey = (value: string) => `Literal subject contains unrecognized key with value [${value}]`;
const invalid = (why: string) => new LiteralSubjectError(`invalid literalSubject: ${why}`);

/**
 * The RDNs of a literalSubject the CSR builder can encode (last RDN of the Name first), each a
 * list of attributes ('+' joins them); throws LiteralSubjectError for any it cannot.
 */
export function parseLiteralSubject(dn: string): LiteralSubjectAttribute[][] {
  const { rdns, unrecognized } = readLiteralSubject(dn);
  if (unrecognized.length) throw new LiteralSubjectError(unrecognized[0]);
  return rdns;
}

/**
 * The one RFC 4514 parser of spec.literalSubject, used by admission and (through
 * parseLiteralSubject) by the CSR builder. It reads a DN as go-ldap v3.4.14's ParseDN reads it
 * for cert-manager: ',' and ';' end an RDN and '+' an attribute, unless escaped. A DN that cannot
 * be read throws; an attribute whose key is neither one of cert-manager's nor an OID is left out
 * and named in `unrecognized` (upstream's message for it), so admission reports each of them and
 * still finds the CN beside them, as upstream's webhook does. A value whose bytes are not UTF-8
 * (upstream admits it and then fails every issuance) is refused.
 */
export function readLiteralSubject(dn: string): { rdns: LiteralSubjectAttribute[][]; unrecognized: string[] } {
  // A lone surrogate would be encoded as U+FFFD, like Buffer.from (see utf8String).
  if (!isWellFormedString(dn)) throw invalid('not well-formed Unicode (lone UTF-16 surrogate)');
  if (dn.trim() === '') throw invalid('empty distinguished name');
  const rdns: LiteralSubjectAttribute[][] = [[]];
  const unrecognized: string[] = [];
  let key = '';
  let start = 0;
  const add = (raw: string) => {
    const value = raw.startsWith('#') ? hexAttributeText(key, raw.slice(1)) : decodeDNString(raw);
    const type = LITERAL_SUBJECT_KEYS[key] ?? canonicalOID(key);
    if (type) rdns[rdns.length - 1].push({ key, type, value });
    else unrecognized.push(unrecognizedKey(value));
    key = '';
  };
  let escaping = false;
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i];
    if (escaping) escaping = false;
    else if (c === '\\') escaping = true;
    else if (c === '=' && key === '') {
      key = decodeDNString(dn.slice(start, i));
      start = i + 1;
    } else if (c === ',' || c === '+' || c === ';') {
      if (key === '') throw invalid('incomplete type, value pair');
      add(dn.slice(start, i));
      start = i + 1;
      if (c !== '+') rdns.push([]);
    }
  }
  if (key === '') throw invalid('DN ended with incomplete type, value pair');
  add(dn.slice(start));
  return { rdns, unrecognized };
}

/** RFC 4514 §2.4 characters a value must escape, as go-ldap refuses them unescaped. */
const MUST_ESCAPE = new Set(['"', ';', '<', '>']);
const ESCAPED_AS_THEMSELVES = new Set([' ', '"', '#', '+', ',', ';', '<', '=', '>', '\\']);

/**
 * A key or value as go-ldap's decodeString reads it: unescaped spaces around it trimmed (an
 * escaped trailing space kept), "\c" for a special character, "\XX" for one byte; the bytes
 * must then be UTF-8, as the certificate's string types require.
 */
function decodeDNString(raw: string): string {
  let s = raw.replace(/^ +| +$/g, '');
  if (s !== '' && raw.endsWith(' ')) {
    let backslashes = 0;
    for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) backslashes++;
    if (backslashes % 2 === 1) s += ' ';
  }
  const chars = Array.from(s);
  const bytes: Buffer[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c !== '\\') {
      if (MUST_ESCAPE.has(c)) throw invalid(`got unescaped character: '${c}'`);
      if (c === '\0') throw invalid('got unescaped NULL character');
      bytes.push(Buffer.from(c));
      continue;
    }
    const next = chars[i + 1];
    if (next === undefined) throw invalid(`got corrupted escaped character: '${s}'`);
    if (ESCAPED_AS_THEMSELVES.has(next)) {
      bytes.push(Buffer.from(next));
      i++;
      continue;
    }
    const hex = `${next}${chars[i + 2] ?? ''}`;
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw invalid(`failed to decode escaped character: ${JSON.stringify(`\\${hex}`)} is neither a special character nor two hex digits`);
    bytes.push(Buffer.from(hex, 'hex'));
    i += 2;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(bytes));
  } catch {
    throw invalid(`${JSON.stringify(raw)} is not valid UTF-8 once its \\XX escapes are decoded`);
  }
}

/**
 * The text a "#hex" value (a BER element, RFC 4514 §2.4) stands for: its contents, as go-ldap's
 * ParseDN reads them for cert-manager, which then encodes the text like any other value. Copying
 * the element as it is would put e.g. an OCTET STRING in the Name, which OpenSSL cannot load.
 */
function hexAttributeText(key: string, hex: string): string {
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(hex)) throw invalid(`the value of ${key} after "#" is not hexadecimal (failed to decode BER encoding)`);
  const reader = new DERReader(Buffer.from(hex, 'hex'), 'attribute value');
  let element: DERElement;
  try {
    element = reader.read();
  } catch {
    throw invalid(`the hex-encoded value of ${key} is not a BER element (truncated or malformed)`);
  }
  if (!reader.done) throw invalid(`the hex-encoded value of ${key} has trailing bytes after its BER element`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(element.value);
  } catch {
    throw invalid(`the hex-encoded value of ${key} is not UTF-8 text`);
  }
}

// Spec comparisons encode the same literalSubject on every reconcile.
const literalSubjectDER = new BoundedCache<string, Buffer>(1024);

/** The Name a literalSubject stands for, as DER. RFC 4514 lists the last RDN first, so the RDNs are reversed (as cert-manager does). */
export function encodeLiteralSubject(literal: string): Buffer {
  const hit = literalSubjectDER.get(literal);
  if (hit) return hit;
  const name: DistinguishedName = parseLiteralSubject(literal).reverse()
    .map((rdn) => rdn.map((a) => ({ type: a.type, value: attributeValue(a.value) })));
  const der = encodeName(name);
  literalSubjectDER.set(literal, der);
  return der;
}

function escapeDNValue(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1').replace(/^([ #])/, '\\$1').replace(/ $/, '\\ ');
}

/** RFC 4514 form (last RDN first), e.g. "CN=foo,O=bar". */
export function formatName(name: DistinguishedName): string {
  return [...name].reverse().map((rdn) => rdn.map((a) => {
    const key = SHORT_NAME_BY_OID[a.type] ?? a.type;
    const text = attributeString(a);
    return `${key}=${text === undefined ? hexForm(a) : escapeDNValue(text)}`;
  }).join('+')).join(',');
}

export function subjectFieldsFromName(name: DistinguishedName): { commonName?: string; subject: X509Subject } {
  const subject: X509Subject = {};
  let commonName: string | undefined;
  for (const rdn of name) {
    for (const a of rdn) {
      if (a.type === OID.commonName) { commonName ??= attributeText(a); continue; }
      if (a.type === OID.serialNumber) { subject.serialNumber ??= attributeText(a); continue; }
      const field = SUBJECT_FIELD_BY_OID.get(a.type);
      if (field) ((subject[field] as string[] | undefined) ?? (subject[field] = [] as never) as string[]).push(attributeText(a));
    }
  }
  return { commonName, subject };
}

// ---- IP addresses (SAN iPAddress; name constraints use address + mask)

function ipv4Bytes(text: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const bytes = m.slice(1).map(Number);
  return bytes.every((b) => b <= 255) ? bytes : undefined;
}

function ipv6Bytes(text: string): number[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const words: number[] = [];
  const all = [...head, ...(halves.length === 2 ? ['::'] : []), ...tail];
  for (let i = 0; i < all.length; i++) {
    const g = all[i];
    if (g === '::') { words.push(-1); continue; }
    if (i === all.length - 1 && g.includes('.')) {
      const v4 = ipv4Bytes(g);
      if (!v4) return undefined;
      words.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) {
      words.push(parseInt(g, 16));
    } else {
      return undefined;
    }
  }
  const gap = words.indexOf(-1);
  const explicitWords = words.length - (gap >= 0 ? 1 : 0);
  if (gap >= 0 ? explicitWords > 7 : explicitWords !== 8) return undefined;
  const full = gap >= 0 ? [...words.slice(0, gap), ...new Array(8 - explicitWords).fill(0), ...words.slice(gap + 1)] : words;
  return full.flatMap((w) => [w >> 8, w & 0xff]);
}

/** Octets of an address, or of address + mask for "addr/prefix" when ranges are allowed. */
function isIPv4Mapped(addr: ArrayLike<number>): boolean {
  if (addr.length !== 16) return false;
  for (let i = 0; i < 10; i++) if (addr[i] !== 0) return false;
  return addr[10] === 0xff && addr[11] === 0xff;
}

function ipOctets(text: string, allowRange: boolean): Buffer {
  const slash = text.indexOf('/');
  const addrText = slash >= 0 ? text.slice(0, slash) : text;
  const addr = ipv4Bytes(addrText) ?? ipv6Bytes(addrText);
  if (!addr) throw new Error(`invalid IP address ${JSON.stringify(text)}`);
  // an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address, as Go's To4() makes it in
  // upstream's MarshalSANs: 16 bytes would not match a client that reaches a.b.c.d over IPv4
  if (slash < 0) return Buffer.from(isIPv4Mapped(addr) ? addr.slice(12) : addr);
  const prefixText = text.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!allowRange || !/^\d{1,3}$/.test(prefixText) || prefix > addr.length * 8) throw new Error(`invalid IP range ${JSON.stringify(text)}`);
  const mask = addr.map((_, i) => (prefix >= (i + 1) * 8 ? 0xff : prefix <= i * 8 ? 0 : (0xff << (8 - (prefix - i * 8))) & 0xff));
  return Buffer.from([...addr, ...mask]);
}

/** RFC 5952 text: lower case, no leading zeros, the first longest run of two or more zero groups as "::". */
function ipv6Text(b: Buffer): string {
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((b[i] << 8) | b[i + 1]);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function ipText(b: Buffer): string {
  switch (b.length) {
    case 4: return [...b].join('.');
    case 16: return ipv6Text(b);
    case 8: case 32: {
      const half = b.length / 2;
      let prefix = 0;
      for (const m of b.subarray(half)) for (let x = m; x; x &= x - 1) prefix++;
      return `${ipText(b.subarray(0, half))}/${prefix}`;
    }
    default: throw new DERError(`IP address of ${b.length} bytes`);
  }
}

export function canonicalIP(ip: string): string {
  try {
    return ipText(ipOctets(ip.trim(), true));
  } catch {
    return ip;
  }
}

// ---- general names

const GN = { otherName: 0, rfc822Name: 1, dNSName: 2, uniformResourceIdentifier: 6, iPAddress: 7 } as const;

const ia5 = (n: number, s: string) => implicit(n, ia5Bytes(s));

function otherNameDER(o: OtherName): Buffer {
  return tlv(0xa0 | GN.otherName, oid(o.oid), explicit(0, utf8String(o.utf8Value)));
}

function decodeOtherName(el: DERElement): OtherName {
  const r = contents(el, 'otherName');
  const typeId = decodeOID(r.expect(TAG.OID, 'otherName type-id'));
  const wrapped = contents(r.expect(0xa0, 'otherName value'), 'otherName value');
  r.end();
  const inner = wrapped.read();
  wrapped.end();
  if (inner.tag !== TAG.UTF8_STRING) throw new Error(`otherName ${typeId} is not a UTF8String`);
  return { oid: typeId, utf8Value: inner.value.toString('utf8') };
}

/** One GeneralName in the template's vocabulary; kinds certsmith does not model come back as undefined. */
type DecodedGeneralName =
  | { kind: 'dns' | 'email' | 'uri' | 'ip'; text: string }
  | { kind: 'other'; other: OtherName }
  | undefined;

function decodeGeneralName(el: DERElement): DecodedGeneralName {
  switch (el.tag) {
    case 0xa0 | GN.otherName: return { kind: 'other', other: decodeOtherName(el) };
    case 0x80 | GN.rfc822Name: return { kind: 'email', text: el.value.toString('utf8') };
    case 0x80 | GN.dNSName: return { kind: 'dns', text: el.value.toString('utf8') };
    case 0x80 | GN.uniformResourceIdentifier: return { kind: 'uri', text: el.value.toString('utf8') };
    case 0x80 | GN.iPAddress: return { kind: 'ip', text: ipText(el.value) };
    default: return undefined;
  }
}

// What no certificate certsmith makes or signs may carry, whatever admission let through (a
// cluster with only the CRDs installed has no webhook): a dNSName beyond letters, digits, '-',
// '_', '.' and a '*' (a newline, NUL, quote or `$()` reached certificates and deploy hooks'
// RENEWED_DOMAINS, issue 12, finding 7), or an email or URI with whitespace or control
// characters. Looser than admission's RFC 1123 rule on purpose: a stored Certificate with an
// upper-case or underscore name that was accepted before keeps renewing.
const SAFE_DNS_NAME = /^[A-Za-z0-9._*-]+$/;
// eslint-disable-next-line no-control-regex
const SPACE_OR_CONTROL = /[\s\x00-\x1f\x7f]/;

/** The first subject alternative name that must not be encoded, with why; undefined when all are fine. */
export function unsafeNameProblem(t: Pick<CertificateTemplate, 'dnsNames' | 'emailAddresses' | 'uris'>): string | undefined {
  for (const d of t.dnsNames ?? []) {
    if (!isWellFormedString(d)) return `dnsName ${JSON.stringify(d)} is not well-formed Unicode (lone UTF-16 surrogate)`;
    if (!SAFE_DNS_NAME.test(d)) return `dnsName ${JSON.stringify(d)} may only contain letters, digits, '-', '_', '.' and '*' (internationalized names in their xn-- form)`;
  }
  for (const [what, values] of [['email address', t.emailAddresses], ['URI', t.uris]] as const) {
    for (const v of values ?? []) if (SPACE_OR_CONTROL.test(v)) return `${what} ${JSON.stringify(v)} must not contain whitespace or control characters`;
  }
  return undefined;
}

function generalNamesFromTemplate(t: CertificateTemplate): Buffer[] {
  const unsafe = unsafeNameProblem(t);
  if (unsafe) throw new Error(unsafe);
  return [
    ...(t.dnsNames ?? []).map((d) => ia5(GN.dNSName, d)),
    ...(t.emailAddresses ?? []).map((e) => ia5(GN.rfc822Name, e)),
    ...(t.ipAddresses ?? []).map((ip) => implicit(GN.iPAddress, ipOctets(ip.trim(), false))),
    ...(t.uris ?? []).map((u) => ia5(GN.uniformResourceIdentifier, u)),
    ...(t.otherNames ?? []).map(otherNameDER),
  ];
}

function subtrees(n: number, items: NameConstraintItems | undefined): Buffer | undefined {
  if (!items) return undefined;
  const names = [
    ...(items.dnsDomains ?? []).map((d) => ia5(GN.dNSName, d)),
    ...(items.ipRanges ?? []).map((r) => implicit(GN.iPAddress, ipOctets(r.trim(), true))),
    ...(items.emailAddresses ?? []).map((e) => ia5(GN.rfc822Name, e)),
    ...(items.uriDomains ?? []).map((u) => ia5(GN.uniformResourceIdentifier, u)),
  ];
  // GeneralSubtree's minimum (DEFAULT 0) and maximum are never set, so each subtree is just its base.
  return names.length > 0 ? tlv(0xa0 | n, ...names.map((base) => sequence(base))) : undefined;
}

function constraintItems(el: DERElement | undefined): NameConstraintItems | undefined {
  if (!el) return undefined;
  const r = contents(el, 'GeneralSubtrees');
  if (r.done) return undefined;
  const items: NameConstraintItems = {};
  const add = (k: keyof NameConstraintItems, v: string) => (items[k] ??= []).push(v);
  while (!r.done) {
    const subtree = contents(r.expect(TAG.SEQUENCE, 'GeneralSubtree'), 'GeneralSubtree');
    const gn = decodeGeneralName(subtree.read());
    if (gn?.kind === 'dns') add('dnsDomains', gn.text);
    else if (gn?.kind === 'ip') add('ipRanges', gn.text);
    else if (gn?.kind === 'email') add('emailAddresses', gn.text);
    else if (gn?.kind === 'uri') add('uriDomains', gn.text);
  }
  return items;
}

// ---- extensions

export interface Extension {
  id: string;
  critical: boolean;
  /** the contents of extnValue: the extension's own DER */
  value: Buffer;
}

export function encodeExtension(e: Extension): Buffer {
  // critical is BOOLEAN DEFAULT FALSE, so DER leaves out a false one.
  return e.critical ? sequence(oid(e.id), boolean(true), octetString(e.value)) : sequence(oid(e.id), octetString(e.value));
}

/** Extensions ::= SEQUENCE OF Extension */
export function encodeExtensions(exts: readonly Extension[]): Buffer {
  return sequence(...exts.map(encodeExtension));
}

export function decodeExtensions(el: DERElement): Extension[] {
  const r = contents(el, 'Extensions');
  const out: Extension[] = [];
  while (!r.done) {
    const e = contents(r.expect(TAG.SEQUENCE, 'Extension'), 'Extension');
    const id = decodeOID(e.expect(TAG.OID, 'extnID'));
    const crit = e.optional(TAG.BOOLEAN);
    const value = e.expect(TAG.OCTET_STRING, 'extnValue').value;
    e.end();
    out.push({ id, critical: crit ? decodeBoolean(crit) : false, value });
  }
  return out;
}

export function keyUsageExtensions(usages: string[] | undefined, isCA: boolean): Extension[] {
  const { keyUsageBits, extKeyUsageOids } = encodeUsages(usages, isCA);
  const out: Extension[] = [];
  // RFC 5280 recommends KU critical; Go's x509 marks it so.
  if (keyUsageBits.length > 0) out.push({ id: EXTENSION_OID.keyUsage, critical: true, value: namedBits(keyUsageBits) });
  if (extKeyUsageOids.length > 0) {
    out.push({ id: EXTENSION_OID.extKeyUsage, critical: false, value: sequence(...extKeyUsageOids.map(oid)) });
  }
  return out;
}

export function basicConstraintsExtension(isCA: boolean, maxPathLen: number | undefined): Extension {
  const parts: Buffer[] = [];
  if (isCA) {
    parts.push(boolean(true));
    if (maxPathLen !== undefined && maxPathLen >= 0) parts.push(integer(maxPathLen));
  }
  return { id: EXTENSION_OID.basicConstraints, critical: true, value: sequence(...parts) };
}

/** SAN is critical when the subject is empty (RFC 5280 4.2.1.6). */
export function subjectAltNameExtension(t: CertificateTemplate, subjectEmpty: boolean): Extension | undefined {
  const names = generalNamesFromTemplate(t);
  return names.length > 0 ? { id: EXTENSION_OID.subjectAltName, critical: subjectEmpty, value: sequence(...names) } : undefined;
}

export function nameConstraintsExtension(nc: NameConstraints | undefined): Extension | undefined {
  if (!nc) return undefined;
  const permitted = subtrees(0, nc.permitted);
  const excluded = subtrees(1, nc.excluded);
  if (!permitted && !excluded) return undefined;
  const parts = [permitted, excluded].filter((p): p is Buffer => p !== undefined);
  return { id: EXTENSION_OID.nameConstraints, critical: nc.critical ?? false, value: sequence(...parts) };
}

/** RFC 5280 method 1: SHA-1 of the subjectPublicKey BIT STRING contents (what Go and OpenSSL use). */
export function keyIdentifier(spkiDER: Buffer): Buffer {
  const spki = contents(readSingle(spkiDER, TAG.SEQUENCE, 'SubjectPublicKeyInfo'), 'SubjectPublicKeyInfo');
  spki.expect(TAG.SEQUENCE, 'algorithm');
  const key = decodeOctetAlignedBitString(spki.expect(TAG.BIT_STRING, 'subjectPublicKey'));
  return crypto.createHash('sha1').update(key).digest();
}

export function subjectKeyIdentifierExtension(keyId: Buffer): Extension {
  return { id: EXTENSION_OID.subjectKeyIdentifier, critical: false, value: octetString(keyId) };
}

export function authorityKeyIdentifierExtension(keyId: Buffer): Extension {
  return { id: EXTENSION_OID.authorityKeyIdentifier, critical: false, value: sequence(implicit(0, keyId)) };
}

export interface ExtensionFields {
  template: CertificateTemplate;
  /** whether KU or EKU were present at all (a CSR may leave usages to the issuer) */
  hasUsages: boolean;
  hasBasicConstraints: boolean;
  /** the KeyUsage bits as stated (the last KU extension), when there is one */
  keyUsageBits?: number[];
  /** the ExtendedKeyUsage OIDs as stated, in order, unknown ones too (the last EKU extension), when there is one */
  extKeyUsageOids?: string[];
  subjectKeyId?: Buffer;
  authorityKeyId?: Buffer;
}

export function fieldsFromExtensions(extensions: readonly Extension[]): ExtensionFields {
  const t: CertificateTemplate = {};
  let kuBits: number[] | undefined;
  let ekuOids: string[] | undefined;
  let hasUsages = false;
  let hasBasicConstraints = false;
  let subjectKeyId: Buffer | undefined;
  let authorityKeyId: Buffer | undefined;
  for (const e of extensions) {
    switch (e.id) {
      case EXTENSION_OID.subjectAltName: {
        const r = contents(readSingle(e.value, TAG.SEQUENCE, 'subjectAltName'), 'subjectAltName');
        while (!r.done) {
          const gn = decodeGeneralName(r.read());
          if (gn?.kind === 'dns') (t.dnsNames ??= []).push(gn.text);
          else if (gn?.kind === 'ip') (t.ipAddresses ??= []).push(gn.text);
          else if (gn?.kind === 'email') (t.emailAddresses ??= []).push(gn.text);
          else if (gn?.kind === 'uri') (t.uris ??= []).push(gn.text);
          else if (gn?.kind === 'other') (t.otherNames ??= []).push(gn.other);
        }
        break;
      }
      case EXTENSION_OID.keyUsage:
        hasUsages = true;
        kuBits = decodeNamedBits(readSingle(e.value, TAG.BIT_STRING, 'keyUsage')).filter((b) => b < 9);
        break;
      case EXTENSION_OID.extKeyUsage: {
        hasUsages = true;
        const r = contents(readSingle(e.value, TAG.SEQUENCE, 'extKeyUsage'), 'extKeyUsage');
        ekuOids = [];
        while (!r.done) ekuOids.push(decodeOID(r.expect(TAG.OID, 'KeyPurposeId')));
        break;
      }
      case EXTENSION_OID.basicConstraints: {
        hasBasicConstraints = true;
        const r = contents(readSingle(e.value, TAG.SEQUENCE, 'basicConstraints'), 'basicConstraints');
        const cA = r.optional(TAG.BOOLEAN);
        const pathLen = r.optional(TAG.INTEGER);
        r.end();
        t.isCA = cA ? decodeBoolean(cA) : false;
        if (pathLen) t.maxPathLen = decodeSmallInteger(pathLen);
        break;
      }
      case EXTENSION_OID.nameConstraints: {
        const r = contents(readSingle(e.value, TAG.SEQUENCE, 'nameConstraints'), 'nameConstraints');
        const permitted = r.optional(0xa0);
        const excluded = r.optional(0xa1);
        r.end();
        t.nameConstraints = { critical: e.critical, permitted: constraintItems(permitted), excluded: constraintItems(excluded) };
        break;
      }
      case EXTENSION_OID.subjectKeyIdentifier:
        subjectKeyId = Buffer.from(readSingle(e.value, TAG.OCTET_STRING, 'subjectKeyIdentifier').value);
        break;
      case EXTENSION_OID.authorityKeyIdentifier: {
        const r = contents(readSingle(e.value, TAG.SEQUENCE, 'authorityKeyIdentifier'), 'authorityKeyIdentifier');
        const keyId = r.optional(0x80);
        if (keyId) authorityKeyId = Buffer.from(keyId.value);
        break;
      }
    }
  }
  if (hasUsages) t.usages = decodeUsages(kuBits ?? [], ekuOids ?? []);
  return { template: t, hasUsages, hasBasicConstraints, keyUsageBits: kuBits, extKeyUsageOids: ekuOids, subjectKeyId, authorityKeyId };
}
