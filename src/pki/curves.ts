// The elliptic curves cert-manager issues ECDSA keys on, under each name certsmith meets them by
// (Node's and OpenSSL's, JWK's, the OID in a certificate), and the public key algorithms' OIDs.
export interface Curve {
  /** spec.privateKey.size */
  size: 256 | 384 | 521;
  /** OpenSSL's name: Node's namedCurve, createECDH's */
  openssl: string;
  /** RFC 7518's crv */
  jwk: string;
  oid: string;
  /** bytes of a coordinate, and of the private scalar */
  bytes: number;
}

const CURVES: readonly Curve[] = [
  { size: 256, openssl: 'prime256v1', jwk: 'P-256', oid: '1.2.840.10045.3.1.7', bytes: 32 },
  { size: 384, openssl: 'secp384r1', jwk: 'P-384', oid: '1.3.132.0.34', bytes: 48 },
  { size: 521, openssl: 'secp521r1', jwk: 'P-521', oid: '1.3.132.0.35', bytes: 66 },
];

const by = <K extends keyof Curve>(k: K) => new Map<Curve[K], Curve>(CURVES.map((c) => [c[k], c]));
export const curveBySize = by('size') as ReadonlyMap<number, Curve>;
export const curveByOpenSSLName = by('openssl') as ReadonlyMap<string, Curve>;
export const curveByJWK = by('jwk') as ReadonlyMap<string, Curve>;
export const curveByOID = by('oid') as ReadonlyMap<string, Curve>;

/** SubjectPublicKeyInfo algorithms (RFC 5480, RFC 8017, RFC 8410) */
export const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1';
export const OID_RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
export const OID_ED25519 = '1.3.101.112';
