// OpenSSL 3's key decoders and SPKI export cost ~0.5 ms each; building SubjectPublicKeyInfo from the
// (cheap) JWK export and caching decoded keys keeps per-certificate work to a few milliseconds.
import crypto from 'node:crypto';

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const bitString = (b: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
const NULL = Buffer.from([0x05, 0x00]);

function positiveInteger(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const trimmed = b.subarray(i);
  return tlv(0x02, trimmed[0] & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [parts[0] * 40 + parts[1]];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [];
    let v = p;
    do { chunk.unshift(v & 0x7f); v = Math.floor(v / 128); } while (v > 0);
    for (let k = 0; k < chunk.length - 1; k++) chunk[k] |= 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const CURVE_OID: Record<string, string> = { 'P-256': '1.2.840.10045.3.1.7', 'P-384': '1.3.132.0.34', 'P-521': '1.3.132.0.35' };
const b64u = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');

function encodeSPKI(pub: crypto.KeyObject): Buffer {
  const jwk = pub.export({ format: 'jwk' });
  if (jwk.kty === 'EC' && jwk.crv && CURVE_OID[jwk.crv]) {
    return seq(seq(oid('1.2.840.10045.2.1'), oid(CURVE_OID[jwk.crv])), bitString(Buffer.concat([Buffer.from([4]), b64u(jwk.x), b64u(jwk.y)])));
  }
  if (jwk.kty === 'RSA') {
    return seq(seq(oid('1.2.840.113549.1.1.1'), NULL), bitString(seq(positiveInteger(b64u(jwk.n)), positiveInteger(b64u(jwk.e)))));
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return seq(seq(oid('1.3.101.112')), bitString(b64u(jwk.x)));
  return pub.export({ type: 'spki', format: 'der' });
}

const spkiByKey = new WeakMap<crypto.KeyObject, Buffer>();
const publicByPrivate = new WeakMap<crypto.KeyObject, crypto.KeyObject>();

/** Bounded insertion-ordered map; re-inserting on hit keeps hot entries. */
class LRU<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly limit: number) {}
  get(k: string): V | undefined {
    const v = this.map.get(k);
    if (v !== undefined) { this.map.delete(k); this.map.set(k, v); }
    return v;
  }
  set(k: string, v: V): void {
    this.map.delete(k);
    this.map.set(k, v);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value as string);
  }
}

const publicBySPKI = new LRU<crypto.KeyObject>(4096);

export function publicKeyOf(key: crypto.KeyObject): crypto.KeyObject {
  if (key.type === 'public') return key;
  let pub = publicByPrivate.get(key);
  if (!pub) { pub = crypto.createPublicKey(key); publicByPrivate.set(key, pub); }
  return pub;
}

export function spkiDER(key: crypto.KeyObject): Buffer {
  const pub = publicKeyOf(key);
  let der = spkiByKey.get(pub);
  if (!der) {
    der = encodeSPKI(pub);
    spkiByKey.set(pub, der);
    publicBySPKI.set(der.toString('base64'), pub);
  }
  return der;
}

export function publicKeyFromSPKI(der: Buffer): crypto.KeyObject {
  const id = der.toString('base64');
  let pub = publicBySPKI.get(id);
  if (!pub) {
    pub = crypto.createPublicKey({ key: der, format: 'der', type: 'spki' });
    spkiByKey.set(pub, der);
    publicBySPKI.set(id, pub);
  }
  return pub;
}

/** Decoded private keys by PEM, so a key generated or read once is not decoded again (0.7-1.7 ms each). */
export const privateKeyByPEM = new LRU<crypto.KeyObject>(4096);
