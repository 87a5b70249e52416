import 'reflect-metadata';
import crypto from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import * as ax from '@peculiar/asn1-x509';
import { parsePrivateKey, publicKeyFingerprint } from './keys.ts';
import { certificateBlocks } from './pem.ts';
import { publicKeyFromSPKI } from './spki.ts';
import { signatureAlgorithmName, verifyTBS } from './signature.ts';
import type { CertificateTemplate } from './template.ts';
import { fieldsFromExtensions, formatName, subjectFieldsFromName } from './x509-fields.ts';

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
  publicKey: crypto.KeyObject;
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

/** Parses the first certificate of a bundle. */
export function parseCertificate(pem: string): CertificateInfo {
  const block = certificateBlocks(typeof pem === 'string' ? pem : '')[0];
  if (!block) throw new Error('invalid certificate: no CERTIFICATE PEM block found');
  let cert: ax.Certificate;
  let publicKey: crypto.KeyObject;
  let fields;
  try {
    cert = AsnConvert.parse(block.der, ax.Certificate);
    const spkiDER = Buffer.from(AsnConvert.serialize(cert.tbsCertificate.subjectPublicKeyInfo));
    publicKey = publicKeyFromSPKI(spkiDER);
    fields = fieldsFromExtensions(cert.tbsCertificate.extensions ?? []);
  } catch (err) {
    throw new Error(`invalid certificate: ${(err as Error).message}`);
  }
  const tbs = cert.tbsCertificate;
  const { commonName, subject } = subjectFieldsFromName(tbs.subject);
  const template: CertificateTemplate = { ...fields.template, subject };
  if (commonName !== undefined) template.commonName = commonName;
  const subjectDER = Buffer.from(AsnConvert.serialize(tbs.subject));
  const issuerDER = Buffer.from(AsnConvert.serialize(tbs.issuer));
  let selfSigned = false;
  if (subjectDER.equals(issuerDER)) {
    const raw = cert.tbsCertificateRaw ?? AsnConvert.serialize(tbs);
    try {
      selfSigned = verifyTBS(publicKey, cert.signatureAlgorithm.algorithm, raw, cert.signatureValue);
    } catch {
      selfSigned = false;
    }
  }
  return {
    template,
    notBefore: tbs.validity.notBefore.getTime(),
    notAfter: tbs.validity.notAfter.getTime(),
    serialNumber: Buffer.from(tbs.serialNumber).toString('hex').replace(/^(00)+(?=.)/, ''),
    issuer: formatName(tbs.issuer),
    subject: formatName(tbs.subject),
    isCA: fields.template.isCA ?? false,
    publicKey,
    publicKeyFingerprint: publicKeyFingerprint(publicKey),
    signatureAlgorithm: signatureAlgorithmName(cert.signatureAlgorithm.algorithm),
    selfSigned,
    subjectDER,
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
