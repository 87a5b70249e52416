// OpenSSL 3's key decoders and SPKI export cost ~0.5 ms each; building SubjectPublicKeyInfo from the
// (cheap) JWK export and caching decoded keys keeps per-certificate work to a few milliseconds.
import crypto from 'node:crypto';
import { BoundedCache } from '../runtime/bounded-cache.ts';
import { bitString, integer, NULL, oid, ownedBuffer, sequence as seq } from './der.ts';

const CURVE_OID: Record<string, string> = { 'P-256': '1.2.840.10045.3.1.7', 'P-384': '1.3.132.0.34', 'P-521': '1.3.132.0.35' };
const b64u = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');

function encodeSPKI(pub: crypto.KeyObject): Buffer {
  const jwk = pub.export({ format: 'jwk' });
  if (jwk.kty === 'EC' && jwk.crv && CURVE_OID[jwk.crv]) {
    return seq(seq(oid('1.2.840.10045.2.1'), oid(CURVE_OID[jwk.crv])), bitString(Buffer.concat([Buffer.from([4]), b64u(jwk.x), b64u(jwk.y)])));
  }
  if (jwk.kty === 'RSA') {
    return seq(seq(oid('1.2.840.113549.1.1.1'), NULL), bitString(seq(integer(b64u(jwk.n)), integer(b64u(jwk.e)))));
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return seq(seq(oid('1.3.101.112')), bitString(b64u(jwk.x)));
  return pub.export({ type: 'spki', format: 'der' });
}

const spkiByKey = new WeakMap<crypto.KeyObject, Buffer>();
const publicByPrivate = new WeakMap<crypto.KeyObject, crypto.KeyObject>();

const publicBySPKI = new BoundedCache<string, crypto.KeyObject>(4096);

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
    der = ownedBuffer(encodeSPKI(pub));
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
    spkiByKey.set(pub, ownedBuffer(der));
    publicBySPKI.set(id, pub);
  }
  return pub;
}

/** Decoded private keys by PEM, so a key generated or read once is not decoded again (0.7-1.7 ms each). */
export const privateKeyByPEM = new BoundedCache<string, crypto.KeyObject>(4096);
