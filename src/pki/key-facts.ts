// What the certificate policies ask of a key (its algorithm, its size, which public key it is)
// read from the DER itself. OpenSSL 3 decodes a PEM private key in 0.3-0.7 ms and a
// SubjectPublicKeyInfo in about 0.25 ms; after a restart at 20,000 Certificates those decoders
// were two thirds of the controllers' first pass over them (42 s of CPU, issue 17). Here an
// ECDSA key costs one scalar multiplication (its public key is derived from the private
// scalar, as Go's x509 package does, never taken from the optional copy beside it) and an RSA
// key a BigInt product (the primes must give the modulus, as Go's Validate checks).
// Anything else (Ed25519, encrypted keys, unusual encodings) goes through OpenSSL as before,
// so the errors for bad input stay the ones parsePrivateKey gives.
import crypto from 'node:crypto';
import { DERError, DERReader, TAG, contents, contextTag, decodeBitString, decodeIntegerBytes, decodeOID, decodeSmallInteger, readSingle } from './der.ts';
import { decodePEMBlocks } from './pem.ts';
import { describeKey, parsePrivateKey, publicKeyFingerprint, type KeyAlgorithm, type KeyType } from './keys.ts';
import { curveByOID, OID_EC_PUBLIC_KEY, OID_RSA_ENCRYPTION, type Curve } from './curves.ts';
import { ecSPKI, publicKeyFromSPKI, rsaSPKI, spkiDER } from './spki.ts';

/** A key's type (size: RSA modulus bits, the ECDSA curve's size, 0 for Ed25519) and which public key it is. */
export interface KeyFacts extends KeyType {
  /** SHA-256 (hex) of the public key's SubjectPublicKeyInfo, as publicKeyFingerprint gives it */
  fingerprint: string;
}

/** The facts of a key already decoded. */
export function keyFactsOf(key: crypto.KeyObject): KeyFacts {
  return { ...describeKey(key), fingerprint: publicKeyFingerprint(key) };
}

/** A public key's facts with its SubjectPublicKeyInfo as certsmith encodes it (spkiDER's bytes). */
export interface PublicKeyFacts extends KeyFacts {
  spki: Buffer;
}

const sha256 = (der: Buffer) => crypto.hash('sha256', der, 'hex');

function facts(algorithm: KeyAlgorithm, size: number, spki: Buffer): PublicKeyFacts {
  return { algorithm, size, fingerprint: sha256(spki), spki };
}

/** The SPKI encodeSPKI (spki.ts) writes for this point, so fingerprints agree with publicKeyFingerprint's. */
function ecFacts(curve: Curve, point: Buffer): PublicKeyFacts {
  return facts('ECDSA', curve.size, ecSPKI(curve.oid, point));
}

function rsaFacts(n: Buffer, e: Buffer): PublicKeyFacts {
  let i = 0;
  while (i < n.length - 1 && n[i] === 0) i++;
  const size = (n.length - i - 1) * 8 + (32 - Math.clz32(n[i]));
  return facts('RSA', size, rsaSPKI(n, e));
}

const big = (b: Buffer) => BigInt(`0x${b.toString('hex') || '0'}`);

/** RSAPrivateKey (RFC 8017 A.1.2): two-prime keys only, as cert-manager generates and Go reads. */
function rsaPrivate(der: Buffer): PublicKeyFacts | undefined {
  const r = new DERReader(readSingle(der, TAG.SEQUENCE, 'RSAPrivateKey').value, 'RSAPrivateKey');
  if (decodeSmallInteger(r.expect(TAG.INTEGER, 'version')) !== 0) return undefined;
  const [n, e, , p, q] = ['n', 'e', 'd', 'p', 'q'].map((name) => decodeIntegerBytes(r.expect(TAG.INTEGER, name)));
  for (const name of ['dp', 'dq', 'qinv']) r.expect(TAG.INTEGER, name);
  r.end();
  if (n[0] & 0x80 || e[0] & 0x80) return undefined;
  if (big(p) * big(q) !== big(n)) throw new Error('invalid private key: its primes do not make its modulus');
  return rsaFacts(n, e);
}

/** ECPrivateKey (RFC 5915); the curve from its own parameters or, in PKCS#8, from the algorithm's. */
function ecPrivate(der: Buffer, outerCurve?: string): PublicKeyFacts | undefined {
  const r = new DERReader(readSingle(der, TAG.SEQUENCE, 'ECPrivateKey').value, 'ECPrivateKey');
  if (decodeSmallInteger(r.expect(TAG.INTEGER, 'version')) !== 1) return undefined;
  const scalar = r.expect(TAG.OCTET_STRING, 'privateKey').value;
  let curveOID = outerCurve;
  if (r.peekTag() === contextTag(0, true)) {
    const inner = decodeOID(readSingle(r.read().value, TAG.OID, 'ECParameters'));
    if (curveOID !== undefined && inner !== curveOID) return undefined;
    curveOID = inner;
  }
  if (r.peekTag() === contextTag(1, true)) r.read();
  r.end();
  const curve = curveOID === undefined ? undefined : curveByOID.get(curveOID);
  if (!curve || scalar.length !== curve.bytes) return undefined;
  const ecdh = crypto.createECDH(curve.openssl);
  try {
    ecdh.setPrivateKey(scalar);
  } catch {
    return undefined;
  }
  return ecFacts(curve, ecdh.getPublicKey());
}

/** PrivateKeyInfo / OneAsymmetricKey (RFC 5208, 5958) holding an RSA or EC key. */
function pkcs8Private(der: Buffer): PublicKeyFacts | undefined {
  const r = new DERReader(readSingle(der, TAG.SEQUENCE, 'PrivateKeyInfo').value, 'PrivateKeyInfo');
  if (decodeSmallInteger(r.expect(TAG.INTEGER, 'version')) > 1) return undefined;
  const alg = contents(r.expect(TAG.SEQUENCE, 'privateKeyAlgorithm'), 'AlgorithmIdentifier');
  const algorithm = decodeOID(alg.expect(TAG.OID, 'algorithm'));
  const key = r.expect(TAG.OCTET_STRING, 'privateKey').value;
  if (algorithm === OID_RSA_ENCRYPTION) {
    if (!alg.done) alg.expect(TAG.NULL, 'parameters');
    alg.end();
    return rsaPrivate(key);
  }
  if (algorithm === OID_EC_PUBLIC_KEY) {
    const curve = decodeOID(alg.expect(TAG.OID, 'namedCurve'));
    alg.end();
    return ecPrivate(key, curve);
  }
  return undefined;
}

const readers: Record<string, (der: Buffer) => PublicKeyFacts | undefined> = {
  'PRIVATE KEY': pkcs8Private,
  'RSA PRIVATE KEY': rsaPrivate,
  'EC PRIVATE KEY': (der) => ecPrivate(der),
};

/** The facts of a PEM private key; throws what parsePrivateKey throws for input it refuses. */
export function privateKeyFacts(pem: string): KeyFacts {
  const blocks = typeof pem === 'string' ? decodePEMBlocks(pem) : [];
  const read = blocks.length === 1 ? readers[blocks[0].type] : undefined;
  if (read) {
    let found: KeyFacts | undefined;
    try {
      found = read(blocks[0].der);
    } catch (err) {
      // malformed DER: OpenSSL names the problem as it always has
      if (!(err instanceof DERError)) throw err;
    }
    if (found) return { algorithm: found.algorithm, size: found.size, fingerprint: found.fingerprint };
  }
  return keyFactsOf(parsePrivateKey(pem));
}

/**
 * The facts of a SubjectPublicKeyInfo (a certificate's or a CSR's), or undefined for a form
 * read only through OpenSSL (a compressed point, Ed25519, other algorithms). Only the shape is
 * checked: whether an EC point lies on its curve is OpenSSL's to say when the key is used.
 */
export function spkiFacts(spki: Buffer): PublicKeyFacts | undefined {
  try {
    const r = new DERReader(readSingle(spki, TAG.SEQUENCE, 'SubjectPublicKeyInfo').value, 'SubjectPublicKeyInfo');
    const alg = contents(r.expect(TAG.SEQUENCE, 'algorithm'), 'AlgorithmIdentifier');
    const algorithm = decodeOID(alg.expect(TAG.OID, 'algorithm'));
    const bits = decodeBitString(r.expect(TAG.BIT_STRING, 'subjectPublicKey'));
    r.end();
    if (bits.unusedBits !== 0) return undefined;
    if (algorithm === OID_EC_PUBLIC_KEY) {
      const curveOID = decodeOID(alg.expect(TAG.OID, 'namedCurve'));
      alg.end();
      const curve = curveByOID.get(curveOID);
      if (!curve || bits.bytes.length !== 1 + 2 * curve.bytes || bits.bytes[0] !== 4) return undefined;
      return ecFacts(curve, bits.bytes);
    }
    if (algorithm === OID_RSA_ENCRYPTION) {
      if (!alg.done) alg.expect(TAG.NULL, 'parameters');
      alg.end();
      const k = new DERReader(readSingle(bits.bytes, TAG.SEQUENCE, 'RSAPublicKey').value, 'RSAPublicKey');
      const n = decodeIntegerBytes(k.expect(TAG.INTEGER, 'modulus'));
      const e = decodeIntegerBytes(k.expect(TAG.INTEGER, 'publicExponent'));
      k.end();
      if (n[0] & 0x80 || e[0] & 0x80) return undefined;
      return rsaFacts(n, e);
    }
    return undefined;
  } catch (err) {
    if (err instanceof DERError) return undefined;
    throw err;
  }
}

/** What a certificate or a CSR says of its subject's public key. */
export interface SubjectPublicKey {
  /** the key's algorithm and size, or why certsmith supports no such key */
  keyType: KeyType | { unsupported: string };
  fingerprint: string;
  /** the SubjectPublicKeyInfo as certsmith encodes it (spkiDER's bytes) */
  spki: Buffer;
}

/** A SubjectPublicKeyInfo's facts, from the DER where spkiFacts reads them, else through OpenSSL. */
export function subjectPublicKey(spki: Buffer): SubjectPublicKey {
  const facts = spkiFacts(spki);
  if (facts) return { keyType: { algorithm: facts.algorithm, size: facts.size }, fingerprint: facts.fingerprint, spki: facts.spki };
  const publicKey = publicKeyFromSPKI(spki);
  let keyType: SubjectPublicKey['keyType'];
  try {
    keyType = describeKey(publicKey);
  } catch (err) {
    keyType = { unsupported: (err as Error).message };
  }
  return { keyType, fingerprint: publicKeyFingerprint(publicKey), spki: spkiDER(publicKey) };
}
