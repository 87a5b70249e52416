// A small DER reader and writer for the X.509 and PKCS#10 structures certsmith builds and reads on every
// issuance. The reader hands back slices of the input, so the exact bytes of a subject, an SPKI or a TBS
// are available without re-serialising; the writer emits canonical DER only.
import { BoundedCache } from '../runtime/bounded-cache.ts';

export const TAG = {
  BOOLEAN: 0x01, INTEGER: 0x02, BIT_STRING: 0x03, OCTET_STRING: 0x04, NULL: 0x05, OID: 0x06,
  UTF8_STRING: 0x0c, NUMERIC_STRING: 0x12, PRINTABLE_STRING: 0x13, T61_STRING: 0x14, IA5_STRING: 0x16,
  UTC_TIME: 0x17, GENERALIZED_TIME: 0x18, VISIBLE_STRING: 0x1a, UNIVERSAL_STRING: 0x1c, BMP_STRING: 0x1e,
  SEQUENCE: 0x30, SET: 0x31,
} as const;

/** Tag byte of a context-specific [n] element; EXPLICIT tags and constructed IMPLICIT ones are constructed. */
export function contextTag(n: number, constructed: boolean): number {
  return 0x80 | (constructed ? 0x20 : 0) | n;
}

/** Thrown for input that is not the DER the caller asked for; messages never quote the input bytes. */
export class DERError extends Error {}

export interface DERElement {
  tag: number;
  /** the whole TLV, a view into the input */
  der: Buffer;
  /** the contents octets, a view into the input */
  value: Buffer;
}

function tagName(tag: number): string {
  return `0x${tag.toString(16).padStart(2, '0')}`;
}

/** Sequential reader over the concatenated TLVs of one buffer (a whole input or a constructed element's contents). */
export class DERReader {
  private pos = 0;

  constructor(private readonly buf: Buffer, private readonly what = 'DER') {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  peekTag(): number | undefined {
    return this.done ? undefined : this.buf[this.pos];
  }

  read(): DERElement {
    const buf = this.buf;
    const start = this.pos;
    if (start >= buf.length) throw new DERError(`${this.what}: truncated (expected another element)`);
    const tag = buf[start];
    // Every X.509 and PKCS#10 tag fits the low-tag-number form.
    if ((tag & 0x1f) === 0x1f) throw new DERError(`${this.what}: unsupported high tag number`);
    if (start + 1 >= buf.length) throw new DERError(`${this.what}: truncated (no length)`);
    let len = buf[start + 1];
    let headerLen = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0) throw new DERError(`${this.what}: indefinite length is not DER`);
      if (n > 4) throw new DERError(`${this.what}: length too large`);
      if (start + 2 + n > buf.length) throw new DERError(`${this.what}: truncated (length bytes)`);
      if (buf[start + 2] === 0) throw new DERError(`${this.what}: non-minimal length`);
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + buf[start + 2 + i];
      if (len < 0x80) throw new DERError(`${this.what}: non-minimal length`);
      headerLen = 2 + n;
    }
    const end = start + headerLen + len;
    if (end > buf.length) {
      throw new DERError(`${this.what}: truncated (element ${tagName(tag)} needs ${len} bytes, ${buf.length - start - headerLen} left)`);
    }
    this.pos = end;
    return { tag, der: buf.subarray(start, end), value: buf.subarray(start + headerLen, end) };
  }

  /** The next element, which must carry `tag`. */
  expect(tag: number, name: string): DERElement {
    const t = this.peekTag();
    if (t === undefined) throw new DERError(`${this.what}: truncated (missing ${name})`);
    if (t !== tag) throw new DERError(`${this.what}: ${name}: expected tag ${tagName(tag)}, found ${tagName(t)}`);
    return this.read();
  }

  /** The next element if it carries `tag`, else nothing is consumed. */
  optional(tag: number): DERElement | undefined {
    return this.peekTag() === tag ? this.read() : undefined;
  }

  /** Asserts that nothing follows the elements read so far. */
  end(): void {
    if (!this.done) throw new DERError(`${this.what}: trailing data after the last element`);
  }
}

/** The reader over a constructed element's contents. */
export function contents(el: DERElement, what: string): DERReader {
  if ((el.tag & 0x20) === 0) throw new DERError(`${what}: expected a constructed element`);
  return new DERReader(el.value, what);
}

/** The single element `buf` must consist of. */
export function readSingle(buf: Buffer, tag: number, what: string): DERElement {
  const r = new DERReader(buf, what);
  const el = r.read();
  if (el.tag !== tag) throw new DERError(`${what}: expected tag ${tagName(tag)}, found ${tagName(el.tag)}`);
  r.end();
  return el;
}

// ---- decoding primitives

const oidText = new Map<string, string>();

export function decodeOID(el: DERElement): string {
  const v = el.value;
  const key = v.toString('latin1');
  const hit = oidText.get(key);
  if (hit !== undefined) return hit;
  if (v.length === 0) throw new DERError('empty OBJECT IDENTIFIER');
  if (v[v.length - 1] & 0x80) throw new DERError('truncated OBJECT IDENTIFIER');
  const arcs: number[] = [];
  let acc = 0;
  let first = true;
  for (let i = 0; i < v.length; i++) {
    if (acc === 0 && v[i] === 0x80) throw new DERError('non-minimal OBJECT IDENTIFIER arc');
    acc = acc * 128 + (v[i] & 0x7f);
    if (acc > Number.MAX_SAFE_INTEGER / 128) throw new DERError('OBJECT IDENTIFIER arc too large');
    if (v[i] & 0x80) continue;
    if (first) {
      const top = acc < 40 ? 0 : acc < 80 ? 1 : 2;
      arcs.push(top, acc - top * 40);
      first = false;
    } else {
      arcs.push(acc);
    }
    acc = 0;
  }
  const text = arcs.join('.');
  if (oidText.size < 1024) oidText.set(key, text);
  return text;
}

function checkMinimalInteger(v: Buffer): void {
  if (v.length === 0) throw new DERError('empty INTEGER');
  if (v.length > 1 && ((v[0] === 0 && !(v[1] & 0x80)) || (v[0] === 0xff && v[1] & 0x80))) {
    throw new DERError('non-minimal INTEGER');
  }
}

/** The contents octets of an INTEGER (two's complement), checked for minimal encoding. */
export function decodeIntegerBytes(el: DERElement): Buffer {
  checkMinimalInteger(el.value);
  return el.value;
}

/** A non-negative INTEGER small enough for a JS number (versions, path lengths). */
export function decodeSmallInteger(el: DERElement): number {
  const v = decodeIntegerBytes(el);
  if (v[0] & 0x80) throw new DERError('negative INTEGER where a count is expected');
  if (v.length > 6) throw new DERError('INTEGER too large');
  let n = 0;
  for (const b of v) n = n * 256 + b;
  return n;
}

export function decodeBoolean(el: DERElement): boolean {
  if (el.value.length !== 1) throw new DERError('BOOLEAN must be one byte');
  if (el.value[0] === 0xff) return true;
  if (el.value[0] === 0) return false;
  throw new DERError('BOOLEAN TRUE must be 0xFF in DER');
}

export interface BitString { unusedBits: number; bytes: Buffer }

export function decodeBitString(el: DERElement): BitString {
  const v = el.value;
  if (v.length === 0) throw new DERError('empty BIT STRING');
  const unusedBits = v[0];
  if (unusedBits > 7 || (v.length === 1 && unusedBits !== 0)) throw new DERError('invalid BIT STRING padding');
  if (unusedBits > 0 && v[v.length - 1] & ((1 << unusedBits) - 1)) throw new DERError('BIT STRING padding bits not zero');
  return { unusedBits, bytes: v.subarray(1) };
}

/** A BIT STRING that holds whole bytes (signatures, public keys). */
export function decodeOctetAlignedBitString(el: DERElement): Buffer {
  const bs = decodeBitString(el);
  if (bs.unusedBits !== 0) throw new DERError('BIT STRING is not octet-aligned');
  return bs.bytes;
}

/** Named-bit BIT STRING (KeyUsage): the numbers of the bits that are set, bit 0 first. */
export function decodeNamedBits(el: DERElement): number[] {
  const { bytes, unusedBits } = decodeBitString(el);
  const bits: number[] = [];
  const total = bytes.length * 8 - unusedBits;
  for (let b = 0; b < total; b++) if (bytes[b >> 3] & (0x80 >> (b & 7))) bits.push(b);
  return bits;
}

function digits(s: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) throw new DERError('malformed time');
    v = v * 10 + c;
  }
  return v;
}

/** UTCTime or GeneralizedTime in RFC 5280's restricted forms (seconds present, Zulu, no fractions). */
export function decodeTime(el: DERElement): Date {
  const s = el.value.toString('latin1');
  let year: number;
  let rest: number;
  if (el.tag === TAG.UTC_TIME) {
    if (s.length !== 13) throw new DERError('UTCTime must be YYMMDDHHMMSSZ');
    const yy = digits(s, 0, 2);
    year = yy >= 50 ? 1900 + yy : 2000 + yy;
    rest = 2;
  } else if (el.tag === TAG.GENERALIZED_TIME) {
    if (s.length !== 15) throw new DERError('GeneralizedTime must be YYYYMMDDHHMMSSZ');
    year = digits(s, 0, 4);
    rest = 4;
  } else {
    throw new DERError(`expected a time, found tag ${tagName(el.tag)}`);
  }
  if (s[s.length - 1] !== 'Z') throw new DERError('time must be in UTC (Z)');
  const month = digits(s, rest, 2);
  const day = digits(s, rest + 2, 2);
  const hour = digits(s, rest + 4, 2);
  const minute = digits(s, rest + 6, 2);
  const second = digits(s, rest + 8, 2);
  const d = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC reads years 0-99 as 1900-1999.
  if (year < 100) d.setUTCFullYear(year);
  // Date.UTC rolls 31 February over into March; a DER time must name a real instant.
  if (month < 1 || month > 12 || d.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59 || d.getUTCMonth() !== month - 1) {
    throw new DERError('time out of range');
  }
  return d;
}

/** The text of the ASN.1 string types X.509 names use; undefined for any other tag. */
export function decodeString(el: DERElement): string | undefined {
  const v = el.value;
  switch (el.tag) {
    case TAG.UTF8_STRING:
      return v.toString('utf8');
    case TAG.PRINTABLE_STRING: case TAG.IA5_STRING: case TAG.NUMERIC_STRING: case TAG.VISIBLE_STRING: case TAG.T61_STRING:
      return v.toString('latin1');
    case TAG.BMP_STRING: {
      if (v.length % 2) throw new DERError('BMPString of odd length');
      const swapped = Buffer.from(v);
      swapped.swap16();
      return swapped.toString('utf16le');
    }
    case TAG.UNIVERSAL_STRING: {
      if (v.length % 4) throw new DERError('UniversalString length not a multiple of 4');
      let out = '';
      for (let i = 0; i < v.length; i += 4) out += String.fromCodePoint(v.readUInt32BE(i));
      return out;
    }
    default:
      return undefined;
  }
}

// ---- encoding

/**
 * The bytes in an allocation of their own: a small Buffer is a view of Node's shared 8 KiB
 * pool (or of a larger DER), and one kept in a cache for long kept that whole slab alive,
 * about 8 KiB per Certificate (issue 17).
 */
export function ownedBuffer(b: Buffer): Buffer {
  const own = Buffer.allocUnsafeSlow(b.length);
  b.copy(own);
  return own;
}

function lengthBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

/** One TLV whose contents are the concatenation of `parts`. */
export function tlv(tag: number, ...parts: Uint8Array[]): Buffer {
  let len = 0;
  for (const p of parts) len += p.length;
  const header = lengthBytes(len);
  const out = Buffer.allocUnsafe(1 + header.length + len);
  out[0] = tag;
  for (let i = 0; i < header.length; i++) out[1 + i] = header[i];
  let at = 1 + header.length;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export function sequence(...parts: Uint8Array[]): Buffer {
  return tlv(TAG.SEQUENCE, ...parts);
}

/** SET OF: DER orders the encoded members as ascending octet strings (X.690 11.6), as Go's asn1 does. */
export function setOf(members: readonly Buffer[]): Buffer {
  return tlv(TAG.SET, ...[...members].sort(Buffer.compare));
}

/** [n] EXPLICIT wrapper around whole elements. */
export function explicit(n: number, ...parts: Uint8Array[]): Buffer {
  return tlv(contextTag(n, true), ...parts);
}

/** [n] IMPLICIT primitive: the contents of the underlying type under a context tag. */
export function implicit(n: number, value: Uint8Array): Buffer {
  return tlv(contextTag(n, false), value);
}

const oidDER = new BoundedCache<string, Buffer>(1024);

/**
 * A dotted OID read as upstream's ParseObjectIdentifier reads it (strconv.Atoi per arc, so "03"
 * is 3 and "+3" is 3), in canonical form; undefined for text that is not an OID X.509 can encode
 * (one arc, a first arc past 2, a second past 39 under 0 or 1, a negative or huge arc), which
 * upstream admits and then fails to issue.
 */
export function canonicalOID(text: string): string | undefined {
  const parts = text.split('.');
  if (parts.length < 2 || !parts.every((p) => /^\+?\d+$/.test(p))) return undefined;
  const arcs = parts.map(Number);
  if (!arcs.every(Number.isSafeInteger) || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40)) return undefined;
  return arcs.join('.');
}

export function oid(dotted: string): Buffer {
  const hit = oidDER.get(dotted);
  if (hit) return hit;
  if (!/^[0-2](\.(0|[1-9][0-9]*))+$/.test(dotted)) throw new DERError(`malformed OBJECT IDENTIFIER ${JSON.stringify(dotted)}`);
  const parts = dotted.split('.').map(Number);
  if (parts[0] < 2 && parts[1] >= 40) throw new DERError(`malformed OBJECT IDENTIFIER ${dotted}`);
  const arcs = [parts[0] * 40 + parts[1], ...parts.slice(2)];
  const bytes: number[] = [];
  for (const arc of arcs) {
    if (!Number.isSafeInteger(arc)) throw new DERError(`OBJECT IDENTIFIER arc too large in ${dotted}`);
    const chunk: number[] = [];
    let v = arc;
    do { chunk.unshift(v % 128); v = Math.floor(v / 128); } while (v > 0);
    for (let k = 0; k < chunk.length - 1; k++) chunk[k] |= 0x80;
    bytes.push(...chunk);
  }
  const der = tlv(TAG.OID, Buffer.from(bytes));
  oidDER.set(dotted, der);
  return der;
}

/** INTEGER from a non-negative number or an unsigned big-endian magnitude, minimal two's complement. */
export function integer(v: number | Uint8Array): Buffer {
  let mag: Uint8Array;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw new DERError(`INTEGER out of range: ${v}`);
    const bytes: number[] = [];
    for (let x = v; x > 0; x = Math.floor(x / 256)) bytes.unshift(x & 0xff);
    mag = Uint8Array.from(bytes);
  } else {
    mag = v;
  }
  let i = 0;
  while (i < mag.length && mag[i] === 0) i++;
  const trimmed = mag.subarray(i);
  if (trimmed.length === 0) return tlv(TAG.INTEGER, Uint8Array.of(0));
  return trimmed[0] & 0x80 ? tlv(TAG.INTEGER, Uint8Array.of(0), trimmed) : tlv(TAG.INTEGER, trimmed);
}

const TRUE = Buffer.from([TAG.BOOLEAN, 1, 0xff]);
const FALSE = Buffer.from([TAG.BOOLEAN, 1, 0x00]);
export function boolean(v: boolean): Buffer {
  return v ? TRUE : FALSE;
}

export const NULL = Buffer.from([TAG.NULL, 0]);

export function bitString(bytes: Uint8Array, unusedBits = 0): Buffer {
  return tlv(TAG.BIT_STRING, Uint8Array.of(unusedBits), bytes);
}

/** Named-bit BIT STRING (X.690 11.2.2): trailing zero bits dropped, so no set bits at all is an empty string. */
export function namedBits(bits: readonly number[]): Buffer {
  if (bits.length === 0) return bitString(new Uint8Array(0));
  const highest = Math.max(...bits);
  const bytes = new Uint8Array((highest >> 3) + 1);
  for (const b of bits) bytes[b >> 3] |= 0x80 >> (b & 7);
  return bitString(bytes, 7 - (highest & 7));
}

export function octetString(bytes: Uint8Array): Buffer {
  return tlv(TAG.OCTET_STRING, bytes);
}

// A lone UTF-16 surrogate has no UTF-8 encoding: Buffer.from would write U+FFFD in its place,
// and the request would then never match the spec it was built from (issue 12, finding 2).
const loneSurrogate = /\p{Cs}/u;

/** Whether s is well-formed Unicode (String.prototype.isWellFormed, which ES2022's lib lacks). */
export function isWellFormedString(s: string): boolean {
  return !loneSurrogate.test(s);
}

/** Refuses (instead of replacing) what UTF-8 cannot carry. */
export function utf8String(s: string): Buffer {
  if (!isWellFormedString(s)) throw new Error(`${JSON.stringify(s)} cannot be encoded as a UTF8String: not well-formed Unicode (lone UTF-16 surrogate)`);
  return tlv(TAG.UTF8_STRING, Buffer.from(s, 'utf8'));
}

/** IA5String is 7-bit ASCII (X.680); refused otherwise, as Go's x509 does, never re-encoded. */
export function ia5Bytes(s: string): Buffer {
  // eslint-disable-next-line no-control-regex
  if (!/^[\x00-\x7f]*$/.test(s)) {
    const why = isWellFormedString(s) ? 'only ASCII characters are allowed' : 'not well-formed Unicode (lone UTF-16 surrogate)';
    throw new Error(`${JSON.stringify(s)} cannot be encoded as an IA5String: ${why}`);
  }
  return Buffer.from(s, 'latin1');
}

export function printableString(s: string): Buffer {
  return tlv(TAG.PRINTABLE_STRING, Buffer.from(s, 'latin1'));
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** RFC 5280 4.1.2.5: UTCTime for 1950 through 2049, GeneralizedTime otherwise; whole seconds, Zulu. */
export function time(d: Date): Buffer {
  const y = d.getUTCFullYear();
  if (!Number.isFinite(y) || y < 0 || y > 9999) throw new DERError('time out of range');
  const tail = `${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}Z`;
  if (y >= 1950 && y < 2050) return tlv(TAG.UTC_TIME, Buffer.from(`${pad2(y % 100)}${tail}`, 'latin1'));
  return tlv(TAG.GENERALIZED_TIME, Buffer.from(`${String(y).padStart(4, '0')}${tail}`, 'latin1'));
}
