// The ordered policy chains of the trigger and readiness controllers: each policy looks at the
// gathered objects and names the first reason a Certificate needs (re-)issuing, as cert-manager does.
import { isTrue } from '../../api/conditions.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { type Secret } from '../../api/meta.ts';
import { decodeBase64, keyFactsMemo, parseCertMemo, requestCSRContent } from '../../shared/parse-memo.ts';
import { issuerRefKey, keySpecOf, templateOf } from '../../shared/certificate-template.ts';
import { parseDuration } from '../../api/duration.ts';
import { keySpecMismatches } from '../../pki/keys.ts';
import { nonCertificateBlockIn } from '../../pki/pem.ts';
import { csrMismatches, certificateMismatches } from '../../pki/match.ts';
import { TEMPORARY_CA_COMMON_NAME } from '../../pki/temporary.ts';

export interface CertificateInput {
  certificate: CertificateObj;
  secret?: Secret;
  currentCR?: CertificateRequestObj;
  nextCR?: CertificateRequestObj;
}

export interface Violation {
  reason: string;
  message: string;
}

export type Policy = (input: CertificateInput) => Violation | undefined;

const secretExists: Policy = ({ secret }) =>
  secret ? undefined : { reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' };

const secretHasData: Policy = ({ secret }) => {
  if (!secret?.data) return { reason: 'MissingData', message: 'Issuing certificate as Secret does not contain any data' };
  if (!secret.data['tls.key']) return { reason: 'MissingData', message: 'Issuing certificate as Secret does not contain a private key' };
  if (!secret.data['tls.crt']) return { reason: 'MissingData', message: 'Issuing certificate as Secret does not contain a certificate' };
  return undefined;
};

const keyPairValid: Policy = ({ secret }) => {
  const key = keyFactsMemo(decodeBase64(secret!.data!['tls.key']));
  if (key.error) return { reason: 'InvalidKeyPair', message: `Issuing certificate as Secret contains invalid private key data: ${key.error}` };
  const crtPem = decodeBase64(secret!.data!['tls.crt']);
  const cert = parseCertMemo(crtPem);
  const certError = cert.error ?? nonCertificateBlockIn(crtPem, 'tls.crt');
  if (certError) return { reason: 'InvalidCertificate', message: `Issuing certificate as Secret contains an invalid certificate: ${certError}` };
  if (key.value!.fingerprint !== cert.value!.publicKeyFingerprint) {
    return { reason: 'InvalidKeyPair', message: 'Issuing certificate as Secret contains a private key that does not match the certificate' };
  }
  return undefined;
};

// Unlike upstream, a Secret without any issuer annotation is not a mismatch (reference section 9.1),
// unless it holds a temporary certificate: that one is written without issuer annotations on
// purpose, and must neither count as Ready nor survive a failed issuance until its renewal time.
const issuerAnnotationsMatch: Policy = ({ certificate, secret }) => {
  const a = secret!.metadata.annotations ?? {};
  if (a[CertificateAnnotation.issuerName] === undefined && a[CertificateAnnotation.issuerKind] === undefined && a[CertificateAnnotation.issuerGroup] === undefined) {
    if (secretCertificate(secret)?.issuer !== `CN=${TEMPORARY_CA_COMMON_NAME}`) return undefined;
    return { reason: 'IncorrectIssuer', message: 'Issuing certificate as Secret contains a temporary certificate' };
  }
  const was = issuerRefKey({ name: a[CertificateAnnotation.issuerName] ?? '', kind: a[CertificateAnnotation.issuerKind], group: a[CertificateAnnotation.issuerGroup] });
  if (was === issuerRefKey(certificate.spec.issuerRef)) return undefined;
  return { reason: 'IncorrectIssuer', message: `Issuing certificate as Secret was previously issued by "${was}"` };
};

const certificateNameMatches: Policy = ({ certificate, secret }) => {
  const name = secret!.metadata.annotations?.[CertificateAnnotation.certificateName];
  if (name === undefined || name === certificate.metadata.name) return undefined;
  return { reason: 'IncorrectCertificate', message: `Secret was issued for "${name}". If this message is not transient, you might have two conflicting Certificates pointing to the same secret.` };
};

const keyMatchesCertificateSpec: Policy = ({ certificate, secret }) => {
  const key = keyFactsMemo(decodeBase64(secret!.data!['tls.key']));
  if (key.error) return { reason: 'InvalidKeyPair', message: `Issuing certificate as Secret contains invalid private key data: ${key.error}` };
  const spec = keySpecOf(certificate.spec);
  const fields = keySpecMismatches(key.value!, spec);
  if (!fields.length) return undefined;
  return { reason: 'SecretMismatch', message: `Existing private key is not up to date for spec: [${fields.join(', ')}]` };
};

const secretKeyMatchesCurrentRequest: Policy = ({ secret, currentCR }) => {
  if (!currentCR) return undefined;
  const csr = requestCSRContent(currentCR);
  if (csr.error) return { reason: 'InvalidCertificateRequest', message: `Failed to decode current CertificateRequest: ${csr.error}` };
  const key = keyFactsMemo(decodeBase64(secret!.data!['tls.key']));
  if (key.value!.fingerprint === csr.value!.publicKeyFingerprint) return undefined;
  return { reason: 'SecretMismatch', message: 'Secret contains a private key that does not match the current CertificateRequest' };
};

/**
 * Equal strings are equal durations even when they do not parse (one stored without admission,
 * e.g. beyond Go's 292 years): the request then fails at signing with the reason, and the
 * issuance is recorded as failed, instead of every comparison throwing.
 */
function sameDuration(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return parseDuration(a) === parseDuration(b);
  } catch {
    return false;
  }
}

/** Violated spec fields of a request against its Certificate (cert-manager's RequestMatchesSpec). */
export function requestMismatches(certificate: CertificateObj, cr: CertificateRequestObj): string[] | undefined {
  const csr = requestCSRContent(cr);
  if (csr.error) return undefined;
  // isCA and usages on the request's spec, as upstream's RequestMatchesSpec: the CSR need not
  // state them (encodeUsagesInRequest: false), and admission held those it states to the spec
  const out = csrMismatches(csr.value!, templateOf(certificate.spec), { isCA: cr.spec.isCA ?? false, usages: cr.spec.usages });
  if (certificate.spec.duration && cr.spec.duration && !sameDuration(certificate.spec.duration, cr.spec.duration)) out.push('spec.duration');
  if (issuerRefKey(certificate.spec.issuerRef) !== issuerRefKey(cr.spec.issuerRef)) out.push('spec.issuerRef');
  return out;
}

const currentRequestMatchesSpec: Policy = ({ certificate, secret, currentCR }) => {
  if (currentCR) {
    const bad = requestMismatches(certificate, currentCR);
    if (!bad?.length) return undefined;
    return { reason: 'RequestChanged', message: `Fields on existing CertificateRequest resource not up to date: [${bad.join(', ')}]` };
  }
  const cert = parseCertMemo(decodeBase64(secret!.data!['tls.crt']));
  if (cert.error) return { reason: 'InvalidCertificate', message: `Issuing certificate as Secret contains an invalid certificate: ${cert.error}` };
  const bad = certificateMismatches(cert.value!, templateOf(certificate.spec));
  if (!bad.length) return undefined;
  return { reason: 'SecretMismatch', message: `Issuing certificate as Existing issued Secret is not up to date for spec: [${bad.join(', ')}]` };
};

/** Checks 1–8: everything except time. Shared by trigger and readiness. */
export const secretPolicies: Policy[] = [
  secretExists,
  secretHasData,
  keyPairValid,
  issuerAnnotationsMatch,
  certificateNameMatches,
  keyMatchesCertificateSpec,
  secretKeyMatchesCurrentRequest,
  currentRequestMatchesSpec,
];

/** cert-manager's temporary certificate chain: whether the Secret lacks a usable key pair. */
export const temporaryCertificatePolicies: Policy[] = [secretExists, secretHasData, keyPairValid];

export function firstViolation(chain: Policy[], input: CertificateInput): Violation | undefined {
  for (const p of chain) {
    const v = p(input);
    if (v) return v;
  }
  return undefined;
}

/** The leaf certificate in the Secret, when it parses. */
export function secretCertificate(secret: Secret | undefined) {
  const pem = decodeBase64(secret?.data?.['tls.crt']);
  return pem ? parseCertMemo(pem).value : undefined;
}

/**
 * The issuing controller has written the Secret from the next revision's request and its status
 * write (revision, readiness fields) is still to come: the status describes the certificate
 * that was in the Secret before. Readiness leaves such a Certificate alone (a write now would
 * only race issuing's), and the files controller waits before running the deploy hook. If
 * issuing never finishes, Issuing stays True and the trigger and backoff deal with it.
 */
export function issuanceCompleting(input: CertificateInput): boolean {
  if (!isTrue(input.certificate.status?.conditions, 'Issuing') || !input.nextCR?.status?.certificate) return false;
  const leaf = secretCertificate(input.secret);
  const issued = parseCertMemo(decodeBase64(input.nextCR.status.certificate)).value;
  return !!leaf && !!issued && leaf.der.equals(issued.der);
}
