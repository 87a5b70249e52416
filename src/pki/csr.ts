// PKCS#10 (RFC 2986) requests, encoded and decoded with the DER codec in der.ts.
import { BoundedCache } from '../runtime/bounded-cache.ts';
import {
  bitString, contents, decodeOID, decodeSmallInteger, integer, oid, ownedBuffer, sequence,
  setOf, TAG, tlv,
} from './der.ts';
import { parsePrivateKey } from './keys.ts';
import { subjectPublicKey, type SubjectPublicKey } from './key-facts.ts';
import { decodePEMBlocks, encodePEM } from './pem.ts';
import { publicKeyFromSPKI, spkiDER } from './spki.ts';
import { decodeSigned, signatureAlgorithmFor, signatureSchemeFor, signTBS, verifyTBS } from './signature.ts';
import type { CertificateTemplate } from './template.ts';
import {
  decodeExtensions, decodeName, encodeExtensions, fieldsFromExtensions, keyUsageExtensions, nameConstraintsExtension,
  subjectAltNameExtension, subjectFieldsFromName, subjectNameFromTemplate, type Extension,
} from './x509-fields.ts';

const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14';

export interface CSRInfo {
  template: CertificateTemplate;
  keyType: SubjectPublicKey['keyType'];
  /** the public key's SubjectPublicKeyInfo as certsmith encodes it, for the certificate */
  spki: Buffer;
  publicKeyFingerprint: string;
  /** DER of the subject as encoded in the CSR (literalSubject comparisons are byte-exact upstream) */
  subjectDER: Buffer;
  /** the CSR carried KU/EKU; when false the issuer decides usages */
  hasUsages: boolean;
  /** the CSR carried BasicConstraints (template.isCA is then what they say) */
  hasBasicConstraints: boolean;
  /** the KeyUsage bits and ExtendedKeyUsage OIDs (unknown ones too) as stated, each when its extension is there */
  keyUsageBits?: number[];
  extKeyUsageOids?: string[];
  /** the requested extensions, for a signer that copies some of them */
  extensions: Extension[];
}

/** An empty Name encodes as an empty SEQUENCE. */
const EMPTY_NAME_LENGTH = 2;

/**
 * Extensions as cert-manager's request manager puts them in the CSR's extensionRequest: SANs,
 * usages (cert sign added for a CA; none at all when the template says encodeUsagesInRequest:
 * false, as upstream's GenerateCSR), name constraints. No BasicConstraints: upstream writes them
 * only behind the UseCertificateRequestBasicConstraints feature gate, off by default, and certsmith
 * has no feature gates. Signers take isCA (and the path length) from the request's spec, never
 * from the CSR; requests stored by earlier versions, which carry BasicConstraints, still match
 * and still sign (match.ts, sign.ts).
 */
export function requestExtensions(template: CertificateTemplate, subjectEmpty: boolean): Extension[] {
  const isCA = template.isCA ?? false;
  const exts: Extension[] = [];
  const san = subjectAltNameExtension(template, subjectEmpty);
  if (san) exts.push(san);
  if (template.encodeUsagesInRequest !== false) exts.push(...keyUsageExtensions(template.usages, isCA));
  const nc = nameConstraintsExtension(template.nameConstraints);
  if (nc) exts.push(nc);
  return exts;
}

const hasAny = (list: readonly unknown[] | undefined) => (list?.length ?? 0) > 0;

/**
 * Why a request with this subject and these SANs would name nobody: cert-manager's GenerateCSR
 * refuses it when the common name it encodes (from the literalSubject alone when one is set, the
 * first CN of the Name) is empty and there is no SAN of any kind. Undefined when it names someone.
 */
function missingIdentity(template: CertificateTemplate, subject: Buffer): string | undefined {
  if (subjectFieldsFromName(decodeName(subject)).commonName) return undefined;
  if ([template.dnsNames, template.uris, template.emailAddresses, template.ipAddresses, template.otherNames].some(hasAny)) return undefined;
  return 'no identity to request: at least one of commonName (from the commonName field or from a literalSubject), dnsNames, uris, emailAddresses, ipAddresses or otherNames must be set';
}

/** `signatureAlgorithm`: cert-manager's spec.signatureAlgorithm; without it the key's size or curve decides. */
export async function createCSR(template: CertificateTemplate, privateKeyPem: string, signatureAlgorithm?: string): Promise<string> {
  const key = parsePrivateKey(privateKeyPem);
  const scheme = signatureSchemeFor(key, signatureAlgorithm);
  const subject = subjectNameFromTemplate(template);
  // Admission refuses such a Certificate; this covers one stored without it (CRDs only, or an
  // older object) and every other caller. The request manager records the error as a failed issuance.
  const missing = missingIdentity(template, subject);
  if (missing) throw new Error(missing);
  const extensions = requestExtensions(template, subject.length === EMPTY_NAME_LENGTH);
  const extensionRequest = sequence(oid(EXTENSION_REQUEST_OID), setOf([encodeExtensions(extensions)]));
  // attributes is [0] IMPLICIT SET OF Attribute.
  const info = sequence(integer(0), subject, spkiDER(key), tlv(0xa0, extensionRequest));
  const signature = await signTBS(key, info, scheme);
  const pem = encodePEM('CERTIFICATE REQUEST', sequence(info, signatureAlgorithmFor(key, scheme), bitString(signature)));
  // admission parses every CSR a request carries: one signed here a moment ago needs no check of
  // its signature (0.2 ms of OpenSSL per issuance, issue 17); it is read from the PEM like any other
  signedHere.set(pem, true);
  return pem;
}

// Admission, the request flow and signing parse the same CSR; keep recent results (their
// buffers copied out of the PEM's decoded DER, see ownedBuffer).
const parsedCSRs = new BoundedCache<string, CSRInfo>(4096);
/** CSRs createCSR signed and nobody has parsed yet (the parse takes them out) */
const signedHere = new BoundedCache<string, true>(1024);

export function parseCSR(pem: string): CSRInfo {
  const hit = typeof pem === 'string' ? parsedCSRs.get(pem) : undefined;
  if (hit) return hit;
  const info = parseCSRUncached(pem, true);
  parsedCSRs.set(pem, info);
  return info;
}

/**
 * A CSR's contents without a check of its signature, for deciding whether a request still fits
 * its Certificate: the request was admitted with its signature checked and its spec cannot
 * change, and signing it checks again (parseCSR). After a restart the trigger and readiness
 * controllers read every Certificate's request; OpenSSL's part of a checked parse was most of
 * their first pass (issue 17).
 */
export function readCSR(pem: string): CSRInfo {
  return (typeof pem === 'string' ? parsedCSRs.get(pem) : undefined) ?? parseCSRUncached(pem, false);
}

interface DecodedCSR {
  info: Buffer;
  subject: Buffer;
  spki: Buffer;
  extensions: Extension[];
  signatureAlgorithm: string;
  signature: Buffer;
}

function decodeCSR(der: Buffer): DecodedCSR {
  const { tbs: infoEl, signatureAlgorithm, signature } = decodeSigned(der, 'CertificationRequest', 'certificationRequestInfo');
  const info = contents(infoEl, 'certificationRequestInfo');
  const version = decodeSmallInteger(info.expect(TAG.INTEGER, 'version'));
  if (version !== 0) throw new Error(`unsupported version ${version}`);
  const subject = info.expect(TAG.SEQUENCE, 'subject').der;
  const spki = info.expect(TAG.SEQUENCE, 'subjectPKInfo').der;
  const attributes = info.optional(0xa0);
  info.end();
  const extensions: Extension[] = [];
  if (attributes) {
    const attrs = contents(attributes, 'attributes');
    while (!attrs.done) {
      const attr = contents(attrs.expect(TAG.SEQUENCE, 'Attribute'), 'Attribute');
      const type = decodeOID(attr.expect(TAG.OID, 'attribute type'));
      const values = contents(attr.expect(TAG.SET, 'attribute values'), 'attribute values');
      attr.end();
      if (type !== EXTENSION_REQUEST_OID) continue;
      while (!values.done) extensions.push(...decodeExtensions(values.expect(TAG.SEQUENCE, 'extensionRequest')));
    }
  }
  return {
    info: infoEl.der, subject, spki, extensions, signatureAlgorithm, signature,
  };
}

function parseCSRUncached(pem: string, checkSignature: boolean): CSRInfo {
  const block = decodePEMBlocks(typeof pem === 'string' ? pem : '')
    .find((b) => b.type === 'CERTIFICATE REQUEST' || b.type === 'NEW CERTIFICATE REQUEST');
  if (!block) throw new Error('invalid certificate request: no CERTIFICATE REQUEST PEM block found');
  let csr: DecodedCSR;
  let key: SubjectPublicKey;
  let verified = true;
  try {
    csr = decodeCSR(block.der);
    key = subjectPublicKey(csr.spki);
    if (checkSignature) verified = signedHere.delete(pem) || verifyTBS(publicKeyFromSPKI(csr.spki), csr.signatureAlgorithm, csr.info, csr.signature);
  } catch (err) {
    throw new Error(`invalid certificate request: ${(err as Error).message}`);
  }
  if (!verified) throw new Error('invalid certificate request: signature does not verify');
  let fields;
  let name;
  try {
    fields = fieldsFromExtensions(csr.extensions);
  } catch (err) {
    throw new Error(`invalid certificate request: bad extension: ${(err as Error).message}`);
  }
  try {
    name = subjectFieldsFromName(decodeName(csr.subject));
  } catch (err) {
    throw new Error(`invalid certificate request: subject: ${(err as Error).message}`);
  }
  const template: CertificateTemplate = { ...fields.template, subject: name.subject };
  if (name.commonName !== undefined) template.commonName = name.commonName;
  return {
    template,
    keyType: key.keyType,
    // in a buffer of its own: a parse is memoised, and allocUnsafe's come from Node's shared pool
    spki: ownedBuffer(key.spki),
    publicKeyFingerprint: key.fingerprint,
    subjectDER: ownedBuffer(csr.subject),
    hasUsages: fields.hasUsages,
    hasBasicConstraints: fields.hasBasicConstraints,
    keyUsageBits: fields.keyUsageBits,
    extKeyUsageOids: fields.extKeyUsageOids,
    extensions: csr.extensions.map((e) => ({ ...e, value: ownedBuffer(e.value) })),
  };
}
