import 'reflect-metadata';
import crypto from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import * as ax from '@peculiar/asn1-x509';
import { parseCSR, spkiFromKey } from './csr.ts';
import { parsePrivateKey, publicKeyFingerprint } from './keys.ts';
import { certificateBlocks, encodePEM } from './pem.ts';
import { signatureAlgorithmFor, signTBS } from './signature.ts';
import {
  authorityKeyIdentifierExtension, basicConstraintsExtension, fieldsFromExtensions, keyIdentifier,
  keyUsageExtensions, subjectKeyIdentifierExtension,
} from './x509-fields.ts';

export interface SignOptions {
  csrPem: string;
  notBefore: Date;
  durationMs: number;
  isCA?: boolean;
  usages?: string[];
  maxPathLen?: number;
  /** absent = self-signed with the CSR's own key, which must be passed as selfSignKeyPem */
  issuer?: { certPem: string; keyPem: string };
  selfSignKeyPem?: string;
  /** a CA-issued certificate is clipped to its issuer's notAfter unless this is false */
  clipToIssuer?: boolean;
}

const COPIED_FROM_REQUEST = new Set([ax.id_ce_subjectAltName, ax.id_ce_nameConstraints]);

/** 16 random bytes with the top bit clear: a positive 128-bit serial with no DER padding byte. */
function randomSerial(): ArrayBuffer {
  const b = crypto.randomBytes(16);
  b[0] &= 0x7f;
  if (b[0] === 0) b[0] = 1;
  return new Uint8Array(b).buffer;
}

function floorToSecond(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

interface Signer { key: crypto.KeyObject; subject: ax.Name; keyId: Buffer; notAfter?: Date }

// A CA signs many certificates in a row; decoding and cross-checking its pair once saves ~1 ms each.
const issuerCache = new Map<string, Signer>();
const ISSUER_CACHE_LIMIT = 64;

function loadIssuer(certPem: string, keyPem: string): Signer {
  const cacheKey = `${certPem}\0${keyPem}`;
  const cached = issuerCache.get(cacheKey);
  if (cached) return cached;
  const signer = decodeIssuer(certPem, keyPem);
  if (issuerCache.size >= ISSUER_CACHE_LIMIT) issuerCache.delete(issuerCache.keys().next().value as string);
  issuerCache.set(cacheKey, signer);
  return signer;
}

function decodeIssuer(certPem: string, keyPem: string): Signer {
  const block = certificateBlocks(certPem)[0];
  if (!block) throw new Error('issuer certificate: no CERTIFICATE PEM block found');
  let cert: ax.Certificate;
  try {
    cert = AsnConvert.parse(block.der, ax.Certificate);
  } catch (err) {
    throw new Error(`issuer certificate: cannot decode: ${(err as Error).message}`);
  }
  const key = parsePrivateKey(keyPem);
  const tbs = cert.tbsCertificate;
  const issuerSpkiDER = Buffer.from(AsnConvert.serialize(tbs.subjectPublicKeyInfo));
  if (publicKeyFingerprint(key) !== crypto.createHash('sha256').update(issuerSpkiDER).digest('hex')) {
    throw new Error('issuer private key does not match the issuer certificate');
  }
  const fields = fieldsFromExtensions(tbs.extensions ?? []);
  return {
    key,
    subject: tbs.subject,
    keyId: fields.subjectKeyId ?? keyIdentifier(tbs.subjectPublicKeyInfo),
    notAfter: tbs.validity.notAfter.getTime(),
  };
}

/**
 * Issues a certificate for a CSR as cert-manager's SelfSigned and CA issuers do: subject and SANs
 * from the request, usages from the options (defaults applied, cert sign added for a CA),
 * BasicConstraints always present, SKI on every certificate and AKI on CA-issued ones.
 */
export async function signCertificate(o: SignOptions): Promise<string> {
  const csr = parseCSR(o.csrPem);
  let signer: Signer;
  let selfSigned = false;
  if (o.issuer) {
    signer = loadIssuer(o.issuer.certPem, o.issuer.keyPem);
  } else {
    if (!o.selfSignKeyPem) throw new Error('self-signing needs selfSignKeyPem');
    const key = parsePrivateKey(o.selfSignKeyPem);
    if (publicKeyFingerprint(key) !== csr.publicKeyFingerprint) throw new Error('CSR not signed by referenced private key');
    selfSigned = true;
    signer = { key, subject: new ax.Name(), keyId: Buffer.alloc(0) };
  }
  const subject = AsnConvert.parse(csr.subjectDER, ax.Name);
  const spki = spkiFromKey(csr.publicKey);
  const subjectKeyId = keyIdentifier(spki);
  if (selfSigned) signer = { ...signer, subject, keyId: subjectKeyId };

  if (!Number.isFinite(o.durationMs) || o.durationMs <= 0) throw new Error('certificate duration must be positive');
  const notBefore = floorToSecond(o.notBefore.getTime());
  let notAfter = floorToSecond(notBefore.getTime() + o.durationMs);
  if (signer.notAfter && o.clipToIssuer !== false && notAfter > signer.notAfter) notAfter = signer.notAfter;

  const isCA = o.isCA ?? csr.template.isCA ?? false;
  // Without explicit usages, keep what the request asked for, else the cert-manager defaults.
  const usages = o.usages ?? (csr.hasUsages ? csr.template.usages : undefined);
  const extensions: ax.Extension[] = [
    ...keyUsageExtensions(usages, isCA),
    basicConstraintsExtension(isCA, o.maxPathLen ?? csr.template.maxPathLen),
    subjectKeyIdentifierExtension(subjectKeyId),
  ];
  if (!selfSigned) extensions.push(authorityKeyIdentifierExtension(signer.keyId));
  extensions.push(...csr.extensions.filter((e) => COPIED_FROM_REQUEST.has(e.extnID)));

  const signatureAlgorithm = signatureAlgorithmFor(signer.key);
  const tbs = new ax.TBSCertificate({
    version: ax.Version.v3,
    serialNumber: randomSerial(),
    signature: signatureAlgorithm,
    issuer: signer.subject,
    validity: new ax.Validity({ notBefore, notAfter }),
    subject,
    subjectPublicKeyInfo: spki,
    extensions: new ax.Extensions(extensions),
  });
  const signature = await signTBS(signer.key, AsnConvert.serialize(tbs));
  const cert = new ax.Certificate({ tbsCertificate: tbs, signatureAlgorithm, signatureValue: new Uint8Array(signature).buffer });
  return encodePEM('CERTIFICATE', AsnConvert.serialize(cert));
}
