// X.509 certificates (RFC 5280), decoded with the DER codec in der.ts.
import {
  contents, decodeIntegerBytes, decodeSmallInteger, decodeTime, TAG,
  type DERReader,
} from './der.ts';
import { parsePrivateKey, publicKeyFingerprint } from './keys.ts';
import { subjectPublicKey, type SubjectPublicKey } from './key-facts.ts';
import { certificateBlocks } from './pem.ts';
import { publicKeyFromSPKI } from './spki.ts';
import { decodeSigned, signatureAlgorithmName, verifyTBS } from './signature.ts';
import type { CertificateTemplate } from './template.ts';
import { decodeExtensions, decodeName, fieldsFromExtensions, formatName, subjectFieldsFromName, type Extension } from './x509-fields.ts';

export { splitPEM } from './pem.ts';

export interface CertificateInfo {
  template: CertificateTemplate;
  notBefore: Date;
  notAfter: Date;
  /** lower-case hex, no leading zero bytes */
  serialNumber: string;
  /** RFC 4514 form, e.g. "CN=my-ca,O=acme" */
  issuer: string;
  subject: string;
  isCA: boolean;
  keyType: SubjectPublicKey['keyType'];
  publicKeyFingerprint: string;
  /** Go's names: SHA256-RSA, ECDSA-SHA256, Ed25519 ... */
  signatureAlgorithm: string;
  selfSigned: boolean;
  subjectDER: Buffer;
  subjectKeyId?: string;
  authorityKeyId?: string;
  /** DER of the whole certificate */
  der: Buffer;
}

/** A certificate's parts as slices of its DER: nothing is re-encoded. */
export interface DecodedCertificate {
  tbs: Buffer;
  version: number;
  serialNumber: Buffer;
  issuer: Buffer;
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  spki: Buffer;
  extensions: Extension[];
  signatureAlgorithm: string;
  signature: Buffer;
}

function readTime(r: DERReader, name: string): Date {
  const t = r.peekTag();
  return decodeTime(r.expect(t === TAG.GENERALIZED_TIME ? TAG.GENERALIZED_TIME : TAG.UTC_TIME, name));
}

/** Throws a DERError (or Error) naming the first part that is not as RFC 5280 describes it. */
export function decodeCertificate(der: Buffer): DecodedCertificate {
  const { tbs: tbsEl, signatureAlgorithm, signature } = decodeSigned(der, 'Certificate', 'tbsCertificate');
  const tbs = contents(tbsEl, 'tbsCertificate');
  // version is [0] EXPLICIT INTEGER DEFAULT v1(0).
  const versionEl = tbs.optional(0xa0);
  let version = 0;
  if (versionEl) {
    const v = contents(versionEl, 'version');
    version = decodeSmallInteger(v.expect(TAG.INTEGER, 'version'));
    v.end();
    if (version > 2) throw new Error(`unsupported version ${version + 1}`);
  }
  const serialNumber = decodeIntegerBytes(tbs.expect(TAG.INTEGER, 'serialNumber'));
  tbs.expect(TAG.SEQUENCE, 'signature');
  const issuer = tbs.expect(TAG.SEQUENCE, 'issuer').der;
  const validity = contents(tbs.expect(TAG.SEQUENCE, 'validity'), 'validity');
  const notBefore = readTime(validity, 'notBefore');
  const notAfter = readTime(validity, 'notAfter');
  validity.end();
  const subject = tbs.expect(TAG.SEQUENCE, 'subject').der;
  const spki = tbs.expect(TAG.SEQUENCE, 'subjectPublicKeyInfo').der;
  tbs.optional(0x81); // issuerUniqueID
  tbs.optional(0x82); // subjectUniqueID
  const extensionsEl = tbs.optional(0xa3);
  tbs.end();
  let extensions: Extension[] = [];
  if (extensionsEl) {
    const wrapper = contents(extensionsEl, 'extensions');
    extensions = decodeExtensions(wrapper.expect(TAG.SEQUENCE, 'extensions'));
    wrapper.end();
  }
  return {
    tbs: tbsEl.der, version, serialNumber, issuer, subject, notBefore, notAfter, spki, extensions, signatureAlgorithm, signature,
  };
}

/** The issuer name's fields of a certificate (its DER), as for a subject: what cmctl shows of the issuer. */
export function issuerFieldsOf(der: Buffer): ReturnType<typeof subjectFieldsFromName> {
  return subjectFieldsFromName(decodeName(decodeCertificate(der).issuer));
}

/** Parses the first certificate of a bundle. */
export function parseCertificate(pem: string): CertificateInfo {
  const block = certificateBlocks(typeof pem === 'string' ? pem : '')[0];
  if (!block) throw new Error('invalid certificate: no CERTIFICATE PEM block found');
  let cert: DecodedCertificate;
  let key: SubjectPublicKey;
  let fields;
  let subjectFields;
  let subjectText;
  let issuerText;
  try {
    cert = decodeCertificate(block.der);
    // read from the DER where it can be (key-facts.ts): OpenSSL's SPKI decoder costs 0.25 ms
    key = subjectPublicKey(cert.spki);
    fields = fieldsFromExtensions(cert.extensions);
    const subjectName = decodeName(cert.subject);
    subjectFields = subjectFieldsFromName(subjectName);
    subjectText = formatName(subjectName);
    issuerText = formatName(decodeName(cert.issuer));
  } catch (err) {
    throw new Error(`invalid certificate: ${(err as Error).message}`);
  }
  const { commonName, subject } = subjectFields;
  const template: CertificateTemplate = { ...fields.template, subject };
  if (commonName !== undefined) template.commonName = commonName;
  let selfSigned = false;
  if (cert.subject.equals(cert.issuer)) {
    try {
      selfSigned = verifyTBS(publicKeyFromSPKI(cert.spki), cert.signatureAlgorithm, cert.tbs, cert.signature);
    } catch {
      selfSigned = false;
    }
  }
  return {
    template,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    serialNumber: cert.serialNumber.toString('hex').replace(/^(00)+(?=.)/, ''),
    issuer: issuerText,
    subject: subjectText,
    isCA: fields.template.isCA ?? false,
    keyType: key.keyType,
    publicKeyFingerprint: key.fingerprint,
    signatureAlgorithm: signatureAlgorithmName(cert.signatureAlgorithm),
    selfSigned,
    subjectDER: cert.subject,
    subjectKeyId: fields.subjectKeyId?.toString('hex'),
    authorityKeyId: fields.authorityKeyId?.toString('hex'),
    der: block.der,
  };
}

/** False, not an exception, when either side does not decode. */
export function certificateMatchesKey(certPem: string, keyPem: string): boolean {
  try {
    return parseCertificate(certPem).publicKeyFingerprint === publicKeyFingerprint(parsePrivateKey(keyPem));
  } catch {
    return false;
  }
}
