import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { ecKeyParts, privateKeyByPEM, rememberSPKI, spkiDER } from './spki.ts';
import { explicit, integer, octetString, sequence } from './der.ts';
import { encodePEM } from './pem.ts';
import { curveByOpenSSLName, curveBySize } from './curves.ts';

const generateKeyPairAsync = promisify(crypto.generateKeyPair);

export type KeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';
export type KeyEncoding = 'PKCS1' | 'PKCS8';
export interface KeySpec { algorithm: KeyAlgorithm; size?: number; encoding?: KeyEncoding }
/** What describeKey says of a key: its algorithm and size (0 for Ed25519). */
export interface KeyType { algorithm: KeyAlgorithm; size: number }

export const DEFAULT_RSA_KEY_SIZE = 2048;
export const DEFAULT_ECDSA_KEY_SIZE = 256;
const MIN_RSA_KEY_SIZE = 2048;
const MAX_RSA_KEY_SIZE = 8192;

/** cert-manager's webhook rules for spec.privateKey; Ed25519 ignores size, as upstream does. */
export function validateKeySpec(spec: KeySpec): string | undefined {
  const size = spec.size ?? 0;
  switch (spec.algorithm) {
    case 'RSA':
      if (size !== 0 && (!Number.isInteger(size) || size < MIN_RSA_KEY_SIZE || size > MAX_RSA_KEY_SIZE)) {
        return `RSA key size must be between ${MIN_RSA_KEY_SIZE} and ${MAX_RSA_KEY_SIZE}`;
      }
      break;
    case 'ECDSA':
      if (size !== 0 && !curveBySize.has(size)) return 'ECDSA key size must be one of 256, 384 or 521';
      break;
    case 'Ed25519':
      break;
    default:
      return 'private key algorithm must be either empty or one of rsa, ecdsa or ed25519';
  }
  if (spec.encoding !== undefined && spec.encoding !== 'PKCS1' && spec.encoding !== 'PKCS8') {
    return 'private key encoding must be PKCS1 or PKCS8';
  }
  return undefined;
}

function effectiveSize(spec: KeySpec): number {
  if (spec.algorithm === 'RSA') return spec.size || DEFAULT_RSA_KEY_SIZE;
  if (spec.algorithm === 'ECDSA') return spec.size || DEFAULT_ECDSA_KEY_SIZE;
  return 0;
}

export async function generatePrivateKey(spec: KeySpec): Promise<string> {
  const problem = validateKeySpec(spec);
  if (problem) throw new Error(`invalid key spec: ${problem}`);
  const size = effectiveSize(spec);
  let privateKey: crypto.KeyObject;
  if (spec.algorithm === 'RSA') {
    ({ privateKey } = await generateKeyPairAsync('rsa', { modulusLength: size }));
  } else if (spec.algorithm === 'ECDSA') {
    ({ privateKey } = await generateKeyPairAsync('ec', { namedCurve: curveBySize.get(size)!.openssl }));
  } else {
    ({ privateKey } = await generateKeyPairAsync('ed25519'));
  }
  const pem = encodePrivateKey(privateKey, spec.encoding ?? 'PKCS1');
  privateKeyByPEM.set(pem, privateKey);
  return pem;
}

/** Parses any PEM private key Node understands and keeps only the kinds cert-manager supports. */
export function parsePrivateKey(pem: string): crypto.KeyObject {
  const cached = typeof pem === 'string' ? privateKeyByPEM.get(pem) : undefined;
  if (cached) return cached;
  if (typeof pem !== 'string' || !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new Error('invalid private key: no PEM private key block found');
  }
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    // Node's messages name the failing decoder, never the key bytes.
    const reason = err instanceof Error && 'code' in err ? String((err as { code: unknown }).code) : 'unparseable';
    throw new Error(`invalid private key: cannot decode PEM (${reason})`);
  }
  try {
    describeKey(key);
  } catch (err) {
    throw new Error(`invalid private key: ${(err as Error).message}`);
  }
  privateKeyByPEM.set(pem, key);
  return key;
}

interface ECPrivateKeyPEMs { sec1: string; pkcs8: string }

/** both PEM forms of the EC keys encoded so far (a key is generated in one and stored in the other) */
const ecPEMsByKey = new WeakMap<crypto.KeyObject, ECPrivateKeyPEMs>();

/**
 * An EC private key's SEC 1 and PKCS #8 PEM, built from its JWK export: byte for byte what
 * OpenSSL exports (keys.test.ts), at a quarter of the cost of OpenSSL 3's PKCS #8 encoder,
 * which ran on the event loop for every issuance (issue 17). Its SPKI, from the same JWK, is
 * recorded for the fingerprint the request manager takes next.
 */
function ecPrivateKeyPEMs(key: crypto.KeyObject): ECPrivateKeyPEMs | undefined {
  const known = ecPEMsByKey.get(key);
  if (known) return known;
  const ec = ecKeyParts(key.export({ format: 'jwk' }));
  if (!ec?.d) return undefined;
  const d = octetString(ec.d);
  const pems = {
    // RFC 5915 ECPrivateKey with its curve; inside PKCS #8 the curve is the AlgorithmIdentifier's, as OpenSSL writes it
    sec1: encodePEM('EC PRIVATE KEY', sequence(integer(1), d, explicit(0, ec.curve), explicit(1, ec.point))),
    pkcs8: encodePEM('PRIVATE KEY', sequence(integer(0), ec.algorithm, octetString(sequence(integer(1), d, explicit(1, ec.point))))),
  };
  ecPEMsByKey.set(key, pems);
  rememberSPKI(key, sequence(ec.algorithm, ec.point));
  return pems;
}

export function encodePrivateKey(key: crypto.KeyObject | string, encoding: KeyEncoding): string {
  const k = typeof key === 'string' ? parsePrivateKey(key) : key;
  if (k.type !== 'private') throw new Error('encodePrivateKey needs a private key');
  // other curves (Node exports no JWK for some) keep OpenSSL's encoders
  if (k.asymmetricKeyType === 'ec' && curveByOpenSSLName.has(k.asymmetricKeyDetails?.namedCurve ?? '') && (encoding === 'PKCS8' || encoding === 'PKCS1')) {
    const pems = ecPrivateKeyPEMs(k);
    if (pems) {
      const pem = encoding === 'PKCS8' ? pems.pkcs8 : pems.sec1;
      // the other form is stored next (the next-key Secret holds PKCS #8, tls.key usually SEC 1)
      privateKeyByPEM.set(pem, k);
      return pem;
    }
  }
  if (encoding === 'PKCS8' || k.asymmetricKeyType === 'ed25519') {
    return k.export({ type: 'pkcs8', format: 'pem' }) as string;
  }
  if (encoding !== 'PKCS1') throw new Error(`unknown private key encoding ${String(encoding)}`);
  if (k.asymmetricKeyType === 'rsa') return k.export({ type: 'pkcs1', format: 'pem' }) as string;
  return k.export({ type: 'sec1', format: 'pem' }) as string;
}

/** Works on private and public keys alike. */
export function describeKey(key: crypto.KeyObject): KeyType {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { algorithm: 'RSA', size: key.asymmetricKeyDetails?.modulusLength ?? 0 };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
      const size = curveByOpenSSLName.get(curve)?.size;
      if (!size) throw new Error(`unsupported elliptic curve ${curve || '(unnamed)'}`);
      return { algorithm: 'ECDSA', size };
    }
    case 'ed25519':
      return { algorithm: 'Ed25519', size: 0 };
    default:
      throw new Error(`unsupported key type ${key.asymmetricKeyType ?? '(unknown)'}`);
  }
}

export function keyMatchesSpec(key: crypto.KeyObject | KeyType, spec: KeySpec): boolean {
  return keySpecMismatches(key, spec).length === 0;
}

/** Field paths as the trigger's "Existing private key is not up to date for spec" message lists them. */
export function keySpecMismatches(key: crypto.KeyObject | KeyType, spec: KeySpec): string[] {
  const have = 'algorithm' in key ? key : describeKey(key);
  if (have.algorithm !== spec.algorithm) return ['spec.privateKey.algorithm'];
  if (spec.algorithm !== 'Ed25519' && have.size !== effectiveSize(spec)) return ['spec.privateKey.size'];
  return [];
}

/** SPKI DER of a key object, or of a PEM private key, public key or certificate. */
export function publicKeyDER(key: crypto.KeyObject | string): Buffer {
  if (typeof key !== 'string') return spkiDER(key);
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) return spkiDER(parsePrivateKey(key));
  return spkiDER(crypto.createPublicKey(key));
}

export function publicKeyFingerprint(key: crypto.KeyObject | string): string {
  return crypto.createHash('sha256').update(publicKeyDER(key)).digest('hex');
}
