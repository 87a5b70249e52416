import crypto from 'node:crypto';
import { contents, decodeOctetAlignedBitString, decodeOID, NULL, oid, readSingle, sequence, TAG, type DERElement } from './der.ts';
import { describeKey } from './keys.ts';

export interface SignatureScheme { oid: string; hash: string | null; name: string; rsa: boolean }

const SCHEMES: SignatureScheme[] = [
  { oid: '1.2.840.113549.1.1.5', hash: 'sha1', name: 'SHA1-RSA', rsa: true },
  { oid: '1.2.840.113549.1.1.11', hash: 'sha256', name: 'SHA256-RSA', rsa: true },
  { oid: '1.2.840.113549.1.1.12', hash: 'sha384', name: 'SHA384-RSA', rsa: true },
  { oid: '1.2.840.113549.1.1.13', hash: 'sha512', name: 'SHA512-RSA', rsa: true },
  { oid: '1.2.840.10045.4.1', hash: 'sha1', name: 'ECDSA-SHA1', rsa: false },
  { oid: '1.2.840.10045.4.3.2', hash: 'sha256', name: 'ECDSA-SHA256', rsa: false },
  { oid: '1.2.840.10045.4.3.3', hash: 'sha384', name: 'ECDSA-SHA384', rsa: false },
  { oid: '1.2.840.10045.4.3.4', hash: 'sha512', name: 'ECDSA-SHA512', rsa: false },
  { oid: '1.3.101.112', hash: null, name: 'Ed25519', rsa: false },
];
const SCHEME_BY_OID = new Map(SCHEMES.map((s) => [s.oid, s]));
const SCHEME_BY_NAME = new Map(SCHEMES.map((s) => [s.name, s]));

/** cert-manager's choice: RSA hash grows with modulus size, ECDSA hash follows the curve. */
function schemeForKey(key: crypto.KeyObject): SignatureScheme {
  const { algorithm, size } = describeKey(key);
  let name: string;
  if (algorithm === 'RSA') name = size >= 4096 ? 'SHA512-RSA' : size >= 3072 ? 'SHA384-RSA' : 'SHA256-RSA';
  else if (algorithm === 'ECDSA') name = size === 521 ? 'ECDSA-SHA512' : size === 384 ? 'ECDSA-SHA384' : 'ECDSA-SHA256';
  else name = 'Ed25519';
  return SCHEME_BY_NAME.get(name)!;
}

/** cert-manager's spec.signatureAlgorithm values (validated against the key's algorithm on admission) */
const SCHEME_BY_CERT_MANAGER_NAME: Record<string, string> = {
  SHA256WithRSA: 'SHA256-RSA', SHA384WithRSA: 'SHA384-RSA', SHA512WithRSA: 'SHA512-RSA',
  ECDSAWithSHA256: 'ECDSA-SHA256', ECDSAWithSHA384: 'ECDSA-SHA384', ECDSAWithSHA512: 'ECDSA-SHA512', PureEd25519: 'Ed25519',
};

/** The scheme a key signs with: the one named (cert-manager's spec.signatureAlgorithm) when it fits the key, else the key's own. */
export function signatureSchemeFor(key: crypto.KeyObject, certManagerName?: string): SignatureScheme {
  const own = schemeForKey(key);
  const named = certManagerName ? SCHEME_BY_NAME.get(SCHEME_BY_CERT_MANAGER_NAME[certManagerName] ?? '') : undefined;
  // a name of another key type (admission refuses it; an object stored without admission) is ignored
  return named && named.rsa === own.rsa && (named.hash === null) === (own.hash === null) ? named : own;
}

const algorithmIdentifierDER = new Map<string, Buffer>();

/** DER of the AlgorithmIdentifier; RSA ones carry explicit NULL parameters (RFC 4055), ECDSA and Ed25519 none. */
export function signatureAlgorithmFor(key: crypto.KeyObject, s: SignatureScheme = schemeForKey(key)): Buffer {
  let der = algorithmIdentifierDER.get(s.oid);
  if (!der) {
    der = s.rsa ? sequence(oid(s.oid), NULL) : sequence(oid(s.oid));
    algorithmIdentifierDER.set(s.oid, der);
  }
  return der;
}

export function signatureAlgorithmName(algorithmOid: string): string {
  return SCHEME_BY_OID.get(algorithmOid)?.name ?? algorithmOid;
}

/**
 * RSA signing goes to the libuv pool (it costs milliseconds); ECDSA and Ed25519 sign inline
 * because the pool round trip costs more than the signature.
 */
export async function signTBS(key: crypto.KeyObject, data: Uint8Array, s: SignatureScheme = schemeForKey(key)): Promise<Buffer> {
  if (!s.rsa) return crypto.sign(s.hash, data, key);
  return new Promise((resolve, reject) => {
    crypto.sign(s.hash, data, key, (err, sig) => (err ? reject(err) : resolve(sig)));
  });
}

export function verifyTBS(publicKey: crypto.KeyObject, algorithmOid: string, tbs: Uint8Array, signature: Uint8Array): boolean {
  const s = SCHEME_BY_OID.get(algorithmOid);
  if (!s) throw new Error(`unsupported signature algorithm ${algorithmOid}`);
  try {
    return crypto.verify(s.hash, tbs, publicKey, signature);
  } catch {
    return false;
  }
}

/** A signed structure (certificate, CSR): the to-be-signed element, the algorithm OID and the signature. */
export function decodeSigned(der: Buffer, name: string, tbsName: string): { tbs: DERElement; signatureAlgorithm: string; signature: Buffer } {
  const outer = contents(readSingle(der, TAG.SEQUENCE, name), name);
  const tbs = outer.expect(TAG.SEQUENCE, tbsName);
  const algorithm = contents(outer.expect(TAG.SEQUENCE, 'signatureAlgorithm'), 'signatureAlgorithm');
  const signature = decodeOctetAlignedBitString(outer.expect(TAG.BIT_STRING, 'signature'));
  outer.end();
  return { tbs, signatureAlgorithm: decodeOID(algorithm.expect(TAG.OID, 'signature algorithm')), signature };
}
