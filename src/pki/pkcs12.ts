// PKCS#12 (RFC 7292) keystores as cert-manager's go-pkcs12 profiles write them. WebCrypto (and so
// pkijs' PFX helpers) has neither 3DES nor RC2, so the structures are built with asn1js and the
// ciphers come from Node (3DES, AES, PBKDF2) and rc2.ts.
import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import { encodePrivateKey, parsePrivateKey } from './keys.ts';
import { certificateBlocks } from './pem.ts';
import { rc2CbcEncrypt } from './rc2.ts';
import { decodeCertificate } from './parse.ts';
import { decodeName, formatName } from './x509-fields.ts';

export type PKCS12Profile = 'LegacyRC2' | 'LegacyDES' | 'Modern2023' | 'Modern2026';

/**
 * LegacyDES opens with a plain `openssl pkcs12` on OpenSSL 3 and in every JDK; cert-manager's own
 * default, LegacyRC2, needs `openssl pkcs12 -legacy`.
 */
export const DEFAULT_PKCS12_PROFILE: PKCS12Profile = 'LegacyDES';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  pbeSHA3DES: '1.2.840.113549.1.12.1.3',
  pbeSHARC2_40: '1.2.840.113549.1.12.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbmac1: '1.2.840.113549.1.5.14',
  hmacSHA256: '1.2.840.113549.2.9',
  hmacSHA512: '1.2.840.113549.2.11',
  aes256CBC: '2.16.840.1.101.3.4.1.42',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  // Oracle's "trusted key usage" attribute: without it Java ignores certificates in a PKCS#12 truststore.
  javaTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
};

const ITERATIONS = 2048;

const oid = (v: string) => new asn1js.ObjectIdentifier({ value: v });
const octets = (b: Uint8Array) => new asn1js.OctetString({ valueHex: new Uint8Array(b).buffer });
const int = (n: number) => new asn1js.Integer({ value: n });
const seq = (...value: asn1js.AsnType[]) => new asn1js.Sequence({ value });
const explicit0 = (...value: asn1js.AsnType[]) => new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value });
const der = (v: asn1js.AsnType) => Buffer.from(v.toBER(false));

/** UTF-16BE with a terminating NUL, as the PKCS#12 KDF and MAC expect. */
function bmpPassword(password: string): Buffer {
  const out = Buffer.alloc(password.length * 2 + 2);
  for (let i = 0; i < password.length; i++) out.writeUInt16BE(password.charCodeAt(i), i * 2);
  return out;
}

/** RFC 7292 appendix B.2. */
function pkcs12KDF(hash: 'sha1' | 'sha256', password: Buffer, salt: Buffer, id: number, iterations: number, n: number): Buffer {
  const u = hash === 'sha1' ? 20 : 32;
  const v = 64;
  const fill = (src: Buffer) => {
    if (src.length === 0) return Buffer.alloc(0);
    const len = v * Math.ceil(src.length / v);
    const out = Buffer.alloc(len);
    for (let i = 0; i < len; i++) out[i] = src[i % src.length];
    return out;
  };
  const D = Buffer.alloc(v, id);
  const I = Buffer.concat([fill(salt), fill(password)]);
  const blocks: Buffer[] = [];
  for (let produced = 0; produced < n; produced += u) {
    let A = crypto.createHash(hash).update(D).update(I).digest();
    for (let r = 1; r < iterations; r++) A = crypto.createHash(hash).update(A).digest();
    blocks.push(A);
    const B = fill(A);
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[j + k] + B[k] + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, n);
}

interface Encrypted { algorithm: asn1js.Sequence; ciphertext: Buffer }

function pbeEncrypt(kind: 'des' | 'rc2' | 'aes', password: string, plain: Buffer): Encrypted {
  const salt = crypto.randomBytes(kind === 'aes' ? 16 : 8);
  if (kind === 'aes') {
    const iv = crypto.randomBytes(16);
    const key = crypto.pbkdf2Sync(Buffer.from(password, 'utf8'), salt, ITERATIONS, 32, 'sha256');
    const c = crypto.createCipheriv('aes-256-cbc', key, iv);
    const ciphertext = Buffer.concat([c.update(plain), c.final()]);
    const params = seq(
      seq(oid(OID.pbkdf2), seq(octets(salt), int(ITERATIONS), seq(oid(OID.hmacSHA256), new asn1js.Null()))),
      seq(oid(OID.aes256CBC), octets(iv)),
    );
    return { algorithm: seq(oid(OID.pbes2), params), ciphertext };
  }
  const bmp = bmpPassword(password);
  const keyLen = kind === 'des' ? 24 : 5;
  const key = pkcs12KDF('sha1', bmp, salt, 1, ITERATIONS, keyLen);
  const iv = pkcs12KDF('sha1', bmp, salt, 2, ITERATIONS, 8);
  let ciphertext: Buffer;
  if (kind === 'des') {
    const c = crypto.createCipheriv('des-ede3-cbc', key, iv);
    ciphertext = Buffer.concat([c.update(plain), c.final()]);
  } else {
    ciphertext = rc2CbcEncrypt(key, 40, iv, plain);
  }
  return { algorithm: seq(oid(kind === 'des' ? OID.pbeSHA3DES : OID.pbeSHARC2_40), seq(octets(salt), int(ITERATIONS))), ciphertext };
}

function bagAttributes(attrs: { localKeyId?: Buffer; friendlyName?: string; javaTrusted?: boolean }): asn1js.Set | undefined {
  const value: asn1js.AsnType[] = [];
  if (attrs.javaTrusted) value.push(seq(oid(OID.javaTrustedKeyUsage), new asn1js.Set({ value: [oid(OID.anyExtendedKeyUsage)] })));
  if (attrs.friendlyName) value.push(seq(oid(OID.friendlyName), new asn1js.Set({ value: [new asn1js.BmpString({ value: attrs.friendlyName })] })));
  if (attrs.localKeyId) value.push(seq(oid(OID.localKeyId), new asn1js.Set({ value: [octets(attrs.localKeyId)] })));
  return value.length > 0 ? new asn1js.Set({ value }) : undefined;
}

function safeBag(bagId: string, bagValue: asn1js.AsnType, attrs: asn1js.Set | undefined): asn1js.Sequence {
  return attrs ? seq(oid(bagId), explicit0(bagValue), attrs) : seq(oid(bagId), explicit0(bagValue));
}

function certBag(certDER: Buffer, attrs: asn1js.Set | undefined): asn1js.Sequence {
  return safeBag(OID.certBag, seq(oid(OID.x509Certificate), explicit0(octets(certDER))), attrs);
}

function dataContentInfo(content: Buffer): asn1js.Sequence {
  return seq(oid(OID.data), explicit0(octets(content)));
}

function encryptedContentInfo(enc: Encrypted): asn1js.Sequence {
  const encryptedContent = new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 }, valueHex: new Uint8Array(enc.ciphertext).buffer });
  return seq(oid(OID.encryptedData), explicit0(seq(int(0), seq(oid(OID.data), enc.algorithm, encryptedContent))));
}

/** The parameters of an RFC 9579 PBMAC1 MAC: PBKDF2 (salt, iterations, key length, PRF) and the HMAC. */
export interface PBMAC1Params {
  salt: Buffer;
  iterations: number;
  keyLength: number;
  prf: 'sha256' | 'sha512';
  hmac: 'sha256' | 'sha512';
}

/**
 * RFC 9579: the MAC key is PBKDF2 of the password's UTF-8 bytes (not the BMPString the RFC 7292
 * KDF takes), and the MAC an HMAC over the authSafe content octets.
 */
export function pbmac1(authSafe: Buffer, password: string, p: PBMAC1Params): Buffer {
  const key = crypto.pbkdf2Sync(Buffer.from(password, 'utf8'), p.salt, p.iterations, p.keyLength, p.prf);
  return crypto.createHmac(p.hmac, key).update(authSafe).digest();
}

const HMAC_OID = { sha256: OID.hmacSHA256, sha512: OID.hmacSHA512 } as const;

/** MacData with a PBMAC1 DigestInfo; macSalt and iterations are unused, set as RFC 9579 section 3 says. */
function pbmac1MacData(authSafe: Buffer, password: string): asn1js.Sequence {
  const p: PBMAC1Params = { salt: crypto.randomBytes(16), iterations: ITERATIONS, keyLength: 32, prf: 'sha256', hmac: 'sha256' };
  const params = seq(
    seq(oid(OID.pbkdf2), seq(octets(p.salt), int(p.iterations), int(p.keyLength), seq(oid(HMAC_OID[p.prf]), new asn1js.Null()))),
    seq(oid(HMAC_OID[p.hmac]), new asn1js.Null()),
  );
  return seq(seq(seq(oid(OID.pbmac1), params), octets(pbmac1(authSafe, password, p))), octets(Buffer.from('NOT USED')), int(1));
}

function pfx(contentInfos: asn1js.Sequence[], password: string, macHash: 'sha1' | 'sha256' | 'pbmac1'): Buffer {
  const authSafe = der(seq(...contentInfos));
  if (macHash === 'pbmac1') return der(seq(int(3), dataContentInfo(authSafe), pbmac1MacData(authSafe, password)));
  const salt = crypto.randomBytes(8);
  const macKey = pkcs12KDF(macHash, bmpPassword(password), salt, 3, ITERATIONS, macHash === 'sha1' ? 20 : 32);
  const mac = crypto.createHmac(macHash, macKey).update(authSafe).digest();
  const macData = seq(seq(seq(oid(macHash === 'sha1' ? OID.sha1 : OID.sha256), new asn1js.Null()), octets(mac)), octets(salt), int(ITERATIONS));
  return der(seq(int(3), dataContentInfo(authSafe), macData));
}

/** Modern2026 is Modern2023's PBES2/AES-256-CBC/PBKDF2-HMAC-SHA256 with a PBMAC1 (RFC 9579) MAC. */
const cipherFor = (profile: PKCS12Profile) => {
  const modern = profile === 'Modern2023' || profile === 'Modern2026';
  return {
    key: modern ? 'aes' as const : 'des' as const,
    certs: modern ? 'aes' as const : profile === 'LegacyRC2' ? 'rc2' as const : 'des' as const,
    mac: profile === 'Modern2026' ? 'pbmac1' as const : modern ? 'sha256' as const : 'sha1' as const,
  };
};

/**
 * keystore.p12: the key and the first certificate of the chain (sharing a localKeyId), the rest of the
 * chain and then caPem as CA certificates, as cert-manager writes it.
 */
export async function createPKCS12(o: { keyPem: string; chainPem: string; caPem?: string; password: string; profile?: PKCS12Profile }): Promise<Buffer> {
  const profile = o.profile ?? DEFAULT_PKCS12_PROFILE;
  const ciphers = cipherFor(profile);
  const chain = certificateBlocks(o.chainPem).map((b) => b.der);
  if (chain.length === 0) throw new Error('PKCS#12: the chain holds no certificate');
  const cas = [...chain.slice(1), ...certificateBlocks(o.caPem ?? '').map((b) => b.der)];
  const key = parsePrivateKey(o.keyPem);
  const pkcs8 = Buffer.from(encodePrivateKey(key, 'PKCS8').replace(/-----[A-Z ]+-----|\s+/g, ''), 'base64');
  const localKeyId = crypto.createHash('sha1').update(chain[0]).digest();

  const certBags = [certBag(chain[0], bagAttributes({ localKeyId })), ...cas.map((c) => certBag(c, undefined))];
  const encryptedCerts = pbeEncrypt(ciphers.certs, o.password, der(seq(...certBags)));
  const shrouded = pbeEncrypt(ciphers.key, o.password, pkcs8);
  const keyBag = safeBag(OID.keyBag, seq(shrouded.algorithm, octets(shrouded.ciphertext)), bagAttributes({ localKeyId }));
  return pfx([encryptedContentInfo(encryptedCerts), dataContentInfo(der(seq(keyBag)))], o.password, ciphers.mac);
}

/** truststore.p12: the CA certificates only, each marked trusted for Java. */
export async function createTruststorePKCS12(o: { caPem: string; password: string; profile?: PKCS12Profile }): Promise<Buffer> {
  const ciphers = cipherFor(o.profile ?? DEFAULT_PKCS12_PROFILE);
  const cas = certificateBlocks(o.caPem).map((b) => b.der);
  if (cas.length === 0) throw new Error('PKCS#12 truststore: caPem holds no certificate');
  // each named by its subject, as go-pkcs12's EncodeTrustStore (cert-manager's) names them: Java shows it as the alias
  const bags = cas.map((c) => certBag(c, bagAttributes({ javaTrusted: true, friendlyName: formatName(decodeName(decodeCertificate(c).subject)) })));
  return pfx([encryptedContentInfo(pbeEncrypt(ciphers.certs, o.password, der(seq(...bags))))], o.password, ciphers.mac);
}
