import crypto, { type KeyObject } from 'node:crypto';

export type AccountKey = KeyObject | string;

export function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** A new ECDSA P-256 account key as PKCS#8 PEM (what cert-manager generates for ACME accounts is also EC or RSA). */
export function generateAccountKey(): string {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

function toKeyObject(key: AccountKey): KeyObject {
  return typeof key === 'string' ? crypto.createPrivateKey(key) : key;
}

export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

/** The public JWK with only the members RFC 7638 requires, in their canonical order. */
export function publicJwk(key: AccountKey): Jwk {
  const k = toKeyObject(key);
  const pub = (k.type === 'private' ? crypto.createPublicKey(k) : k).export({ format: 'jwk' }) as Record<string, string>;
  if (pub.kty === 'EC') return { crv: pub.crv, kty: 'EC', x: pub.x, y: pub.y };
  if (pub.kty === 'RSA') return { e: pub.e, kty: 'RSA', n: pub.n };
  throw new Error(`unsupported account key type ${pub.kty}`);
}

/** RFC 7638 SHA-256 thumbprint, base64url. */
export function jwkThumbprint(key: AccountKey | Jwk): string {
  const jwk = isJwk(key) ? key : publicJwk(key);
  const canonical =
    jwk.kty === 'EC'
      ? JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })
      : JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n });
  return base64url(crypto.createHash('sha256').update(canonical).digest());
}

function isJwk(key: unknown): key is Jwk {
  return typeof key === 'object' && key !== null && 'kty' in key && !('asymmetricKeyType' in key);
}

interface SigningParams {
  alg: string;
  hash: string;
  dsaEncoding?: 'ieee-p1363';
}

function signingParams(key: KeyObject): SigningParams {
  if (key.asymmetricKeyType === 'rsa') return { alg: 'RS256', hash: 'sha256' };
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    // JWS wants the raw r||s form, not DER.
    if (curve === 'prime256v1') return { alg: 'ES256', hash: 'sha256', dsaEncoding: 'ieee-p1363' };
    if (curve === 'secp384r1') return { alg: 'ES384', hash: 'sha384', dsaEncoding: 'ieee-p1363' };
    if (curve === 'secp521r1') return { alg: 'ES512', hash: 'sha512', dsaEncoding: 'ieee-p1363' };
    throw new Error(`unsupported EC curve ${curve} for an ACME account key`);
  }
  throw new Error(`unsupported account key type ${key.asymmetricKeyType}`);
}

export interface FlattenedJws {
  protected: string;
  payload: string;
  signature: string;
}

/**
 * Signs an ACME request body. `payload` undefined means POST-as-GET (empty payload).
 * Exactly one of kid/jwk identifies the account key (RFC 8555 §6.2).
 */
export function signJws(
  key: AccountKey,
  header: { url: string; nonce?: string; kid?: string },
  payload: unknown,
): FlattenedJws {
  const k = toKeyObject(key);
  const params = signingParams(k);
  const protectedHeader: Record<string, unknown> = { alg: params.alg };
  if (header.kid) protectedHeader.kid = header.kid;
  else protectedHeader.jwk = publicJwk(k);
  if (header.nonce !== undefined) protectedHeader.nonce = header.nonce;
  protectedHeader.url = header.url;
  const p = base64url(JSON.stringify(protectedHeader));
  const body = payload === undefined ? '' : base64url(JSON.stringify(payload));
  const signature = crypto.sign(params.hash, Buffer.from(`${p}.${body}`), {
    key: k,
    dsaEncoding: params.dsaEncoding,
  });
  return { protected: p, payload: body, signature: base64url(signature) };
}

/**
 * RFC 8555 §7.3.4 external account binding: an HS256 JWS over the account's public JWK, keyed by the CA-issued MAC key.
 * CAs hand out MAC keys base64url-encoded (sometimes with standard alphabet/padding); Node's base64 decoder takes both.
 */
export function externalAccountBinding(
  accountKey: AccountKey,
  eab: { keyId: string; hmacKeyBase64: string },
  newAccountUrl: string,
): FlattenedJws {
  const macKey = Buffer.from(eab.hmacKeyBase64, 'base64');
  if (macKey.length === 0) throw new Error(`external account binding key for ${eab.keyId} is empty or not base64`);
  const p = base64url(JSON.stringify({ alg: 'HS256', kid: eab.keyId, url: newAccountUrl }));
  const body = base64url(JSON.stringify(publicJwk(accountKey)));
  const signature = crypto.createHmac('sha256', macKey).update(`${p}.${body}`).digest();
  return { protected: p, payload: body, signature: base64url(signature) };
}
