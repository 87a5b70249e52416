import crypto from 'node:crypto';
import { BoundedCache } from '../runtime/bounded-cache.ts';
import { bitString, explicit, ia5Bytes, integer, oid, sequence, time, tlv } from './der.ts';
import { parseCSR } from './csr.ts';
import { parsePrivateKey, publicKeyFingerprint } from './keys.ts';
import { decodeCertificate } from './parse.ts';
import { certificateBlocks, encodePEM } from './pem.ts';
import { signatureAlgorithmFor, signTBS } from './signature.ts';
import {
  authorityKeyIdentifierExtension, basicConstraintsExtension, encodeExtensions, EXTENSION_OID, fieldsFromExtensions,
  keyIdentifier, keyUsageExtensions, subjectKeyIdentifierExtension, unsafeNameProblem, type Extension,
} from './x509-fields.ts';

export interface SignOptions {
  csrPem: string;
  notBefore: Date;
  durationMs: number;
  /** the request's spec.isCA; absent = false. Never read from the CSR (see signCertificate). */
  isCA?: boolean;
  usages?: string[];
  /** written in a CA's BasicConstraints; a CSR's path length is never copied */
  maxPathLen?: number;
  /** absent = self-signed with the CSR's own key, which must be passed as selfSignKeyPem */
  issuer?: { certPem: string; keyPem: string };
  selfSignKeyPem?: string;
  /** a CA-issued certificate is clipped to its issuer's notAfter unless this is false */
  clipToIssuer?: boolean;
  /** the issuer signs this one certificate only (a throwaway CA): not worth a slot in the issuer cache */
  oneOffIssuer?: boolean;
  /** where relying parties find the issuer's CRL, OCSP responder and certificate (the CA issuer's spec) */
  authorityURLs?: AuthorityURLs;
}

/** The CA issuer's crlDistributionPoints, ocspServers and issuingCertificateURLs. */
export interface AuthorityURLs {
  crlDistributionPoints?: readonly string[];
  ocspServers?: readonly string[];
  issuingCertificateURLs?: readonly string[];
}

const CRL_DISTRIBUTION_POINTS_OID = '2.5.29.31';
const AUTHORITY_INFO_ACCESS_OID = '1.3.6.1.5.5.7.1.1';
const ACCESS_METHOD_OID = { ocsp: '1.3.6.1.5.5.7.48.1', caIssuers: '1.3.6.1.5.5.7.48.2' } as const;

/** GeneralName uniformResourceIdentifier: [6] IMPLICIT IA5String. */
function uriName(url: string): Buffer {
  return tlv(0x86, ia5Bytes(url));
}

/**
 * CRL Distribution Points (RFC 5280 4.2.1.13) and Authority Information Access (4.2.2.1), as Go's
 * x509 writes them for cert-manager's CA issuer: one DistributionPoint with a fullName per URL,
 * OCSP access descriptions before caIssuers ones. Nothing is written for empty lists.
 */
export function authorityURLExtensions(urls: AuthorityURLs | undefined): Extension[] {
  const out: Extension[] = [];
  const crl = urls?.crlDistributionPoints ?? [];
  if (crl.length > 0) {
    // DistributionPoint { distributionPoint [0] { fullName [0] GeneralNames } }
    const points = crl.map((u) => sequence(tlv(0xa0, tlv(0xa0, uriName(u)))));
    out.push({ id: CRL_DISTRIBUTION_POINTS_OID, critical: false, value: sequence(...points) });
  }
  const access = [
    ...(urls?.ocspServers ?? []).map((u) => sequence(oid(ACCESS_METHOD_OID.ocsp), uriName(u))),
    ...(urls?.issuingCertificateURLs ?? []).map((u) => sequence(oid(ACCESS_METHOD_OID.caIssuers), uriName(u))),
  ];
  if (access.length > 0) out.push({ id: AUTHORITY_INFO_ACCESS_OID, critical: false, value: sequence(...access) });
  return out;
}

const COPIED_FROM_REQUEST = new Set<string>([EXTENSION_OID.subjectAltName, EXTENSION_OID.nameConstraints]);

/** 16 random bytes with the top bit clear: a positive 128-bit serial with no DER padding byte. */
// One CSPRNG call per 256 serials: a call costs several microseconds, most of it fixed overhead.
const SERIAL_POOL_SIZE = 16 * 256;
let serialPool = Buffer.alloc(0);
let serialPoolAt = SERIAL_POOL_SIZE;

function randomSerial(): Buffer {
  if (serialPoolAt >= SERIAL_POOL_SIZE) {
    serialPool = crypto.randomBytes(SERIAL_POOL_SIZE);
    serialPoolAt = 0;
  }
  const b = Buffer.from(serialPool.subarray(serialPoolAt, serialPoolAt + 16));
  serialPool.fill(0, serialPoolAt, serialPoolAt + 16);
  serialPoolAt += 16;
  b[0] &= 0x7f;
  if (b[0] === 0) b[0] = 1;
  return b;
}

const LAST_ENCODABLE_TIME = Date.UTC(9999, 11, 31, 23, 59, 59);

function floorToSecond(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

interface Signer { key: crypto.KeyObject; /** DER of the issuer's subject Name */ subject: Buffer; keyId: Buffer; notAfter?: Date }

// A CA signs many certificates in a row; decoding and cross-checking its pair once saves ~1 ms each.
const issuerCache = new BoundedCache<string, Signer>(64);

function loadIssuer(certPem: string, keyPem: string): Signer {
  const cacheKey = `${certPem}\0${keyPem}`;
  const cached = issuerCache.get(cacheKey);
  if (cached) return cached;
  const signer = decodeIssuer(certPem, keyPem);
  issuerCache.set(cacheKey, signer);
  return signer;
}

function decodeIssuer(certPem: string, keyPem: string): Signer {
  const block = certificateBlocks(certPem)[0];
  if (!block) throw new Error('issuer certificate: no CERTIFICATE PEM block found');
  let cert;
  try {
    cert = decodeCertificate(block.der);
  } catch (err) {
    throw new Error(`issuer certificate: cannot decode: ${(err as Error).message}`);
  }
  const key = parsePrivateKey(keyPem);
  if (publicKeyFingerprint(key) !== crypto.createHash('sha256').update(cert.spki).digest('hex')) {
    throw new Error('issuer private key does not match the issuer certificate');
  }
  let keyId: Buffer;
  try {
    keyId = fieldsFromExtensions(cert.extensions).subjectKeyId ?? keyIdentifier(cert.spki);
  } catch (err) {
    throw new Error(`issuer certificate: cannot decode: ${(err as Error).message}`);
  }
  return { key, subject: Buffer.from(cert.subject), keyId, notAfter: cert.notAfter };
}

/**
 * Issues a certificate for a CSR as cert-manager's SelfSigned and CA issuers do: subject and SANs
 * from the request, usages from the options (defaults applied, cert sign added for a CA),
 * BasicConstraints always present and taken from the options (the CertificateRequest's spec),
 * never from the CSR, SKI on every certificate and AKI on CA-issued ones.
 */
export async function signCertificate(o: SignOptions): Promise<string> {
  const csr = parseCSR(o.csrPem);
  // A CSR made elsewhere is not held to createCSR's rules: check what will be signed.
  const unsafe = unsafeNameProblem(csr.template);
  if (unsafe) throw new Error(`the request asks for a name no certificate may carry: ${unsafe}`);
  // isCA is the request's spec.isCA (absent: false), as upstream's signers take it. A CSR may state
  // BasicConstraints (certsmith's did before issue 15, cert-manager's do behind a feature gate):
  // they must then agree, as upstream's CertificateTemplateValidateAndOverrideBasicConstraints
  // requires, so a CSR alone never makes a CA. Its path length is never copied (upstream passes nil).
  const isCA = o.isCA ?? false;
  if (csr.extensions.some((e) => e.id === EXTENSION_OID.basicConstraints) && (csr.template.isCA ?? false) !== isCA) {
    throw new Error(`encoded CSR error: IsCA ${csr.template.isCA ?? false} does not match expected value ${isCA}`);
  }
  let signer: Signer;
  let selfSigned = false;
  if (o.issuer) {
    signer = o.oneOffIssuer ? decodeIssuer(o.issuer.certPem, o.issuer.keyPem) : loadIssuer(o.issuer.certPem, o.issuer.keyPem);
  } else {
    if (!o.selfSignKeyPem) throw new Error('self-signing needs selfSignKeyPem');
    const key = parsePrivateKey(o.selfSignKeyPem);
    if (publicKeyFingerprint(key) !== csr.publicKeyFingerprint) throw new Error('CSR not signed by referenced private key');
    selfSigned = true;
    signer = { key, subject: csr.subjectDER, keyId: Buffer.alloc(0) };
  }
  const subject = csr.subjectDER;
  const spki = csr.spki;
  const subjectKeyId = keyIdentifier(spki);
  if (selfSigned) signer = { ...signer, keyId: subjectKeyId };

  if (!Number.isFinite(o.durationMs) || o.durationMs <= 0) throw new Error('certificate duration must be positive');
  const notBefore = floorToSecond(o.notBefore.getTime());
  let notAfter = floorToSecond(notBefore.getTime() + o.durationMs);
  if (signer.notAfter && o.clipToIssuer !== false && notAfter > signer.notAfter) notAfter = signer.notAfter;
  // GeneralizedTime has four year digits; past them (or past Date's range) name the cause
  // instead of writing a malformed time.
  if (!(notAfter.getTime() <= LAST_ENCODABLE_TIME)) throw new Error('certificate duration too long: notAfter would be after 9999-12-31T23:59:59Z, the last time X.509 can encode');

  // Without explicit usages, keep what the request asked for, else the cert-manager defaults.
  const usages = o.usages ?? (csr.hasUsages ? csr.template.usages : undefined);
  const extensions: Extension[] = [
    ...keyUsageExtensions(usages, isCA),
    basicConstraintsExtension(isCA, o.maxPathLen),
    subjectKeyIdentifierExtension(subjectKeyId),
  ];
  if (!selfSigned) extensions.push(authorityKeyIdentifierExtension(signer.keyId));
  extensions.push(...authorityURLExtensions(o.authorityURLs));
  // RFC 5280 §4.2.1.6: the SAN is critical exactly when the subject is empty; upstream sets the
  // flag from the subject whatever a hand-made CSR said (CertificateTemplateFromCSR)
  const subjectEmpty = subject.length === 2 && subject[0] === 0x30 && subject[1] === 0;
  for (const e of csr.extensions) {
    if (!COPIED_FROM_REQUEST.has(e.id)) continue;
    extensions.push(e.id === EXTENSION_OID.subjectAltName ? { ...e, critical: subjectEmpty } : e);
  }

  const signatureAlgorithm = signatureAlgorithmFor(signer.key);
  const tbs = sequence(
    explicit(0, integer(2)), // v3
    integer(randomSerial()),
    signatureAlgorithm,
    signer.subject,
    sequence(time(notBefore), time(notAfter)),
    subject,
    spki,
    explicit(3, encodeExtensions(extensions)),
  );
  const signature = await signTBS(signer.key, tbs);
  return encodePEM('CERTIFICATE', sequence(tbs, signatureAlgorithm, bitString(signature)));
}
