import 'reflect-metadata';
import crypto from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import * as ax from '@peculiar/asn1-x509';
import { Attributes, CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import { parsePrivateKey, publicKeyFingerprint } from './keys.ts';
import { decodePEMBlocks, encodePEM } from './pem.ts';
import { publicKeyFromSPKI, spkiDER } from './spki.ts';
import { signatureAlgorithmFor, signTBS, verifyTBS } from './signature.ts';
import type { CertificateTemplate } from './template.ts';
import {
  basicConstraintsExtension, fieldsFromExtensions, keyUsageExtensions, nameConstraintsExtension,
  subjectAltNameExtension, subjectFieldsFromName, subjectNameFromTemplate,
} from './x509-fields.ts';

const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14';

export interface CSRInfo {
  template: CertificateTemplate;
  publicKey: crypto.KeyObject;
  publicKeyFingerprint: string;
  /** DER of the subject as encoded in the CSR (literalSubject comparisons are byte-exact upstream) */
  subjectDER: Buffer;
  /** the CSR carried KU/EKU; when false the issuer decides usages */
  hasUsages: boolean;
  /** DER of the whole extension list, for a signer that copies the request's extensions */
  extensions: ax.Extension[];
}

export function spkiFromKey(key: crypto.KeyObject): ax.SubjectPublicKeyInfo {
  return AsnConvert.parse(spkiDER(key), ax.SubjectPublicKeyInfo);
}

/** Extensions as cert-manager's request manager puts them in the CSR's extensionRequest. */
export function requestExtensions(template: CertificateTemplate, subjectEmpty: boolean): ax.Extension[] {
  const isCA = template.isCA ?? false;
  const exts: ax.Extension[] = [];
  const san = subjectAltNameExtension(template, subjectEmpty);
  if (san) exts.push(san);
  exts.push(...keyUsageExtensions(template.usages, isCA));
  exts.push(basicConstraintsExtension(isCA, template.maxPathLen));
  const nc = nameConstraintsExtension(template.nameConstraints);
  if (nc) exts.push(nc);
  return exts;
}

export async function createCSR(template: CertificateTemplate, privateKeyPem: string): Promise<string> {
  const key = parsePrivateKey(privateKeyPem);
  const subject = subjectNameFromTemplate(template);
  const extensions = requestExtensions(template, subject.length === 0);
  const info = new CertificationRequestInfo({
    version: 0,
    subject,
    subjectPKInfo: spkiFromKey(key),
    attributes: new Attributes([
      new ax.Attribute({ type: EXTENSION_REQUEST_OID, values: [AsnConvert.serialize(new ax.Extensions(extensions))] }),
    ]),
  });
  const signatureAlgorithm = signatureAlgorithmFor(key);
  const tbs = AsnConvert.serialize(info);
  const signature = await signTBS(key, tbs);
  const csr = new CertificationRequest({ certificationRequestInfo: info, signatureAlgorithm, signature: new Uint8Array(signature).buffer });
  return encodePEM('CERTIFICATE REQUEST', AsnConvert.serialize(csr));
}

// Signing parses the CSR that the request flow has parsed already; keep recent results.
const parsedCSRs = new Map<string, CSRInfo>();
const PARSED_CSR_LIMIT = 4096;

export function parseCSR(pem: string): CSRInfo {
  const hit = typeof pem === 'string' ? parsedCSRs.get(pem) : undefined;
  if (hit) return hit;
  const info = parseCSRUncached(pem);
  if (parsedCSRs.size >= PARSED_CSR_LIMIT) parsedCSRs.delete(parsedCSRs.keys().next().value as string);
  parsedCSRs.set(pem, info);
  return info;
}

function parseCSRUncached(pem: string): CSRInfo {
  const block = decodePEMBlocks(typeof pem === 'string' ? pem : '')
    .find((b) => b.type === 'CERTIFICATE REQUEST' || b.type === 'NEW CERTIFICATE REQUEST');
  if (!block) throw new Error('invalid certificate request: no CERTIFICATE REQUEST PEM block found');
  let csr: CertificationRequest;
  let publicKey: crypto.KeyObject;
  try {
    csr = AsnConvert.parse(block.der, CertificationRequest);
    publicKey = publicKeyFromSPKI(Buffer.from(AsnConvert.serialize(csr.certificationRequestInfo.subjectPKInfo)));
  } catch (err) {
    throw new Error(`invalid certificate request: ${(err as Error).message}`);
  }
  const info = csr.certificationRequestInfo;
  const tbs = csr.certificationRequestInfoRaw ?? AsnConvert.serialize(info);
  if (!verifyTBS(publicKey, csr.signatureAlgorithm.algorithm, tbs, csr.signature)) {
    throw new Error('invalid certificate request: signature does not verify');
  }
  const extensions: ax.Extension[] = [];
  for (const attr of info.attributes) {
    if (attr.type !== EXTENSION_REQUEST_OID) continue;
    for (const v of attr.values) extensions.push(...AsnConvert.parse(v, ax.Extensions));
  }
  let fields;
  try {
    fields = fieldsFromExtensions(extensions);
  } catch (err) {
    throw new Error(`invalid certificate request: bad extension: ${(err as Error).message}`);
  }
  const { commonName, subject } = subjectFieldsFromName(info.subject);
  const template: CertificateTemplate = { ...fields.template, subject };
  if (commonName !== undefined) template.commonName = commonName;
  return {
    template,
    publicKey,
    publicKeyFingerprint: publicKeyFingerprint(publicKey),
    subjectDER: Buffer.from(AsnConvert.serialize(info.subject)),
    hasUsages: fields.hasUsages,
    extensions,
  };
}
