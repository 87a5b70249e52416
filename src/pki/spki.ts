// OpenSSL 3's key decoders and SPKI export cost ~0.5 ms each; building SubjectPublicKeyInfo from the
// (cheap) JWK export and caching decoded keys keeps per-certificate work to a few milliseconds.
import crypto from 'node:crypto';
import { BoundedCache } from '../runtime/bounded-cache.ts';
import { bitString, integer, NULL, oid, ownedBuffer, sequence as seq } from './der.ts';
import { curveByJWK, OID_EC_PUBLIC_KEY, OID_ED25519, OID_RSA_ENCRYPTION } from './curves.ts';

const b64u = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');

/** An EC public key's SubjectPublicKeyInfo: point is the uncompressed point (0x04, x, y). */
export function ecSPKI(curveOID: string, point: Uint8Array): Buffer {
  return seq(seq(oid(OID_EC_PUBLIC_KEY), oid(curveOID)), bitString(point));
}

/** An RSA public key's SubjectPublicKeyInfo, from the unsigned magnitudes of n and e. */
export function rsaSPKI(n: Uint8Array, e: Uint8Array): Buffer {
  return seq(seq(oid(OID_RSA_ENCRYPTION), NULL), bitString(seq(integer(n), integer(e))));
}

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
  const named = jwk.kty === 'EC' && jwk.crv ? curveByJWK.get(jwk.crv) : undefined;
  if (!named) return undefined;
  const curve = oid(named.oid);
  return {
    algorithm: seq(oid(OID_EC_PUBLIC_KEY), curve),
    curve,
    point: bitString(Buffer.concat([Buffer.from([4]), b64u(jwk.x), b64u(jwk.y)])),
    ...(jwk.d ? { d: b64u(jwk.d) } : {}),
  };
}

function encodeSPKI(pub: crypto.KeyObject): Buffer {
  const jwk = pub.export({ format: 'jwk' });
  const ec = ecKeyParts(jwk);
  if (ec) return seq(ec.algorithm, ec.point);
  if (jwk.kty === 'RSA') return rsaSPKI(b64u(jwk.n), b64u(jwk.e));
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return seq(seq(oid(OID_ED25519)), bitString(b64u(jwk.x)));
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
