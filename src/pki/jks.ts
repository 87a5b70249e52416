// Java KeyStore (JKS) writer. No npm library writes JKS, so this follows the format as
// sun.security.provider.JavaKeyStore and KeyProtector define it.
import crypto from 'node:crypto';
import * as asn1js from 'asn1js';
import { encodePrivateKey, parsePrivateKey } from './keys.ts';
import { certificateBlocks } from './pem.ts';

const MAGIC = 0xfeedfeed;
const VERSION_2 = 2;
const PRIVATE_KEY_ENTRY = 1;
const TRUSTED_CERT_ENTRY = 2;
const SUN_KEY_PROTECTOR_OID = '1.3.6.1.4.1.42.2.17.1.1';

/** Java's password bytes: each char as two big-endian bytes, no terminator. */
function javaPasswordBytes(password: string): Buffer {
  const out = Buffer.alloc(password.length * 2);
  for (let i = 0; i < password.length; i++) out.writeUInt16BE(password.charCodeAt(i), i * 2);
  return out;
}

/** Sun KeyProtector: XOR with a SHA-1 keystream seeded by a random salt, then a SHA-1 check over the plain key. */
function protectKey(pkcs8: Buffer, password: string): Buffer {
  const pw = javaPasswordBytes(password);
  const salt = crypto.randomBytes(20);
  const encrypted = Buffer.alloc(pkcs8.length);
  let digest: Buffer = salt;
  for (let off = 0; off < pkcs8.length; off += 20) {
    digest = crypto.createHash('sha1').update(pw).update(digest).digest();
    for (let i = 0; i < 20 && off + i < pkcs8.length; i++) encrypted[off + i] = pkcs8[off + i] ^ digest[i];
  }
  const check = crypto.createHash('sha1').update(pw).update(pkcs8).digest();
  const info = new asn1js.Sequence({ value: [
    new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: SUN_KEY_PROTECTOR_OID }), new asn1js.Null()] }),
    new asn1js.OctetString({ valueHex: new Uint8Array(Buffer.concat([salt, encrypted, check])).buffer }),
  ] });
  return Buffer.from(info.toBER(false));
}

class JavaOutput {
  private readonly parts: Buffer[] = [];
  u32(n: number) { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); this.parts.push(b); }
  u64(n: number) { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); this.parts.push(b); }
  /** DataOutputStream.writeUTF; aliases and "X.509" are ASCII, where modified UTF-8 equals UTF-8. */
  utf(s: string) { const b = Buffer.from(s, 'utf8'); const l = Buffer.alloc(2); l.writeUInt16BE(b.length); this.parts.push(l, b); }
  bytes(b: Buffer) { this.u32(b.length); this.parts.push(b); }
  cert(der: Buffer) { this.utf('X.509'); this.bytes(der); }
  done(password: string): Buffer {
    const body = Buffer.concat(this.parts);
    const mac = crypto.createHash('sha1').update(javaPasswordBytes(password)).update('Mighty Aphrodite', 'utf8').update(body).digest();
    return Buffer.concat([body, mac]);
  }
}

function caAliases(count: number): string[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? 'ca' : `ca-${i}`));
}

/** keystore.jks: one PrivateKeyEntry (alias default 'certificate', PKCS#8 key, full chain), plus trusted 'ca', 'ca-1', ... from caPem. */
export function createJKS(o: { keyPem: string; chainPem: string; caPem?: string; password: string; alias?: string; now?: Date }): Buffer {
  const chain = certificateBlocks(o.chainPem).map((b) => b.der);
  if (chain.length === 0) throw new Error('JKS: the chain holds no certificate');
  const cas = certificateBlocks(o.caPem ?? '').map((b) => b.der);
  const pkcs8 = Buffer.from(encodePrivateKey(parsePrivateKey(o.keyPem), 'PKCS8').replace(/-----[A-Z ]+-----|\s+/g, ''), 'base64');
  const ts = (o.now ?? new Date()).getTime();
  const out = new JavaOutput();
  out.u32(MAGIC); out.u32(VERSION_2); out.u32(1 + cas.length);
  // keytool lower-cases JKS aliases on load, so they are stored that way.
  out.u32(PRIVATE_KEY_ENTRY); out.utf((o.alias ?? 'certificate').toLowerCase()); out.u64(ts);
  out.bytes(protectKey(pkcs8, o.password));
  out.u32(chain.length);
  for (const c of chain) out.cert(c);
  caAliases(cas.length).forEach((alias, i) => { out.u32(TRUSTED_CERT_ENTRY); out.utf(alias); out.u64(ts); out.cert(cas[i]); });
  return out.done(o.password);
}

/** truststore.jks: each CA certificate as a trustedCertEntry. */
export function createTruststoreJKS(o: { caPem: string; password: string; alias?: string; now?: Date }): Buffer {
  const cas = certificateBlocks(o.caPem).map((b) => b.der);
  if (cas.length === 0) throw new Error('JKS truststore: caPem holds no certificate');
  const base = (o.alias ?? 'ca').toLowerCase();
  const ts = (o.now ?? new Date()).getTime();
  const out = new JavaOutput();
  out.u32(MAGIC); out.u32(VERSION_2); out.u32(cas.length);
  cas.forEach((der, i) => { out.u32(TRUSTED_CERT_ENTRY); out.utf(i === 0 ? base : `${base}-${i}`); out.u64(ts); out.cert(der); });
  return out.done(o.password);
}
