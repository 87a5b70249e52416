// OpenSSL 3's key decoders and SPKI export cost ~0.5 ms each; building SubjectPublicKeyInfo from the
// (cheap) JWK export and caching decoded keys keeps per-certificate work to a few milliseconds.
import crypto from 'node:crypto';
import { BoundedCache } from '../runtime/bounded-cache.ts';
import { bitString, integer, NULL, oid, ownedBuffer, sequence as seq } from './der.ts';

const CURVE_OID: Record<string, string> = { 'P-256': '1.2.840.10045.3.1.7', 'P-384': '1.3.132.0.34', 'P-521': '1.3.132.0.35' };
const b64u = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');

const EC_PUBLIC_KEY_OID = '1.2.840.10045.2.1';

/** An EC key's parts as SEC 1 and RFC 5915 encode them, from its JWK (d only for a private key). */
export interface ECKeyParts {
  /** AlgorithmIdentifier: id-ecPublicKey and the named curve */
  algorithm: Buffer;
  /** the named curve's OID, for SEC 1's ECParameters */
  curve: Buffer;
  /** BIT STRING of the uncompressed point */
  point: Buffer;
  /** the private scalar, left-padded to the curve's size as JWK (RFC 7518 6.2.2.1) and SEC 1 both want it */
  d?: Buffer;
}

/** undefined for keys other than EC on the three named curves cert-manager supports */
export function ecKeyParts(jwk: crypto.JsonWebKey): ECKeyParts | undefined {
  if (jwk.kty !== 'EC' || !jwk.crv || !CURVE_OID[jwk.crv]) return undefined;
  const curve = oid(CURVE_OID[jwk.crv]);
  return {
    algorithm: seq(oid(EC_PUBLIC_KEY_OID), curve),
    curve,
    point: bitString(Buffer.concat([Buffer.from([4]), b64u(jwk.x), b64u(jwk.y)])),
    ...(jwk.d ? { d: b64u(jwk.d) } : {}),
  };
}

function encodeSPKI(pub: crypto.KeyObject): Buffer {
  const jwk = pub.export({ format: 'jwk' });
  const ec = ecKeyParts(jwk);
  if (ec) return seq(ec.algorithm, ec.point);
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

/**
 * Records the SPKI of a key whose encoding was already at hand (built from the same JWK as its
 * private key PEM): the key's first fingerprint then costs no second export.
 */
export function rememberSPKI(key: crypto.KeyObject, der: Buffer): void {
  const pub = publicKeyOf(key);
  if (spkiByKey.has(pub)) return;
  const own = ownedBuffer(der);
  spkiByKey.set(pub, own);
  publicBySPKI.set(own.toString('base64'), pub);
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
