// The SelfSigned and CA signers: given a request and the key material they read, produce the
// certificate and CA, or say why not (pending = retry later, failed = terminal for this request).
import { durationMsOf } from '../../api/defaults.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';
import { decodeBase64, parseCertCached, parseCertMemo, parseKeyMemo, requestCSR } from '../../shared/parse-memo.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { Secret } from '../../api/meta.ts';
import { publicKeyFingerprint } from '../../pki/keys.ts';
import { signCertificate, type AuthorityURLs } from '../../pki/sign.ts';
import { splitPEM } from '../../pki/parse.ts';
import { nonCertificateBlockIn } from '../../pki/pem.ts';

export type SignOutcome =
  | { kind: 'issued'; certificatePem: string; caPem?: string }
  | { kind: 'pending'; reason: string; message: string }
  | { kind: 'failed'; reason: string; message: string };

/** `crl`: the SelfSigned issuer's crlDistributionPoints, written into what it signs (cert-manager's selfsigned.go). */
export async function signSelfSigned(cr: CertificateRequestObj, keySecret: Secret | undefined, now: Date, crl?: Pick<AuthorityURLs, 'crlDistributionPoints'>): Promise<SignOutcome> {
  const keyName = cr.metadata.annotations?.[CertificateAnnotation.privateKeySecretName];
  if (!keyName) return { kind: 'failed', reason: 'MissingAnnotation', message: `Annotation "${CertificateAnnotation.privateKeySecretName}" missing or reference empty: secret name missing` };
  if (!keySecret) return { kind: 'pending', reason: 'MissingSecret', message: `Referenced secret ${cr.metadata.namespace}/${keyName} not found` };
  const keyPem = decodeBase64(keySecret.data?.['tls.key']);
  const key = parseKeyMemo(keyPem);
  if (!key.value) return { kind: 'pending', reason: 'ErrorParsingKey', message: `Failed to get key "${keyName}" referenced in annotation "${CertificateAnnotation.privateKeySecretName}": ${key.error}` };
  const csr = requestCSR(cr);
  if (!csr.value) return { kind: 'failed', reason: 'ErrorGenerating', message: `Failed to generate certificate template: ${csr.error}` };
  if (csr.value.publicKeyFingerprint !== publicKeyFingerprint(key.value)) {
    return { kind: 'failed', reason: 'ErrorKeyMatch', message: 'Error generating certificate template: CSR not signed by referenced private key' };
  }
  try {
    const pem = await signCertificate({
      csrPem: decodeBase64(cr.spec.request), notBefore: now, durationMs: durationMsOf(cr.spec),
      isCA: cr.spec.isCA, usages: cr.spec.usages, selfSignKeyPem: keyPem, authorityURLs: crl,
    });
    return { kind: 'issued', certificatePem: pem, caPem: pem };
  } catch (e) {
    return { kind: 'failed', reason: 'ErrorSigning', message: `Error signing certificate: ${(e as Error).message}` };
  }
}

/**
 * Why a CA issuer's Secret cannot give the chain of what it signs: a PEM block other than a
 * certificate in tls.crt or ca.crt (a key pasted there would go into every Secret it signs for).
 * Its readiness and its signing ask the same.
 */
export function caChainProblem(caSecret: Secret | undefined): string | undefined {
  return nonCertificateBlockIn(decodeBase64(caSecret?.data?.['tls.crt']), 'tls.crt') ?? nonCertificateBlockIn(decodeBase64(caSecret?.data?.['ca.crt']), 'ca.crt');
}

/** `urls`: the CA issuer's CRL, OCSP and issuing-certificate URLs, written into every certificate it signs. */
export async function signWithCA(cr: CertificateRequestObj, caSecret: Secret | undefined, secretName: string, now: Date, urls?: AuthorityURLs): Promise<SignOutcome> {
  if (!caSecret) return { kind: 'pending', reason: 'SecretMissing', message: `Referenced secret ${secretName} not found` };
  const keyPem = decodeBase64(caSecret.data?.['tls.key']);
  const notCertificates = caChainProblem(caSecret);
  if (notCertificates) return { kind: 'pending', reason: 'SecretInvalidData', message: `Failed to parse signing CA keypair from secret ${secretName}: ${notCertificates}` };
  const chain = [...splitPEM(decodeBase64(caSecret.data?.['tls.crt'])), ...splitPEM(decodeBase64(caSecret.data?.['ca.crt']))];
  if (!keyPem || !parseKeyMemo(keyPem).value || chain.length === 0 || !parseCertMemo(chain[0]).value) {
    return { kind: 'pending', reason: 'SecretInvalidData', message: `Failed to parse signing CA keypair from secret ${secretName}: the secret must hold a PEM tls.crt and tls.key` };
  }
  const csr = requestCSR(cr);
  if (!csr.value) return { kind: 'failed', reason: 'SigningError', message: `Error generating certificate template: ${csr.error}` };
  try {
    const leaf = await signCertificate({
      csrPem: decodeBase64(cr.spec.request), notBefore: now, durationMs: durationMsOf(cr.spec),
      isCA: cr.spec.isCA, usages: cr.spec.usages, issuer: { certPem: chain[0], keyPem }, authorityURLs: urls,
    });
    const { certificatePem, caPem } = buildChain(leaf, chain);
    return { kind: 'issued', certificatePem, caPem };
  } catch (e) {
    return { kind: 'failed', reason: 'SigningError', message: `Error signing certificate: ${(e as Error).message}` };
  }
}

/**
 * Orders [leaf, CA certs…] by issuer links: the returned certificate is the leaf plus
 * intermediates (without a self-signed root), the CA is the top of the chain.
 */
export function buildChain(leafPem: string, caChain: string[]): { certificatePem: string; caPem: string } {
  const unique = [...new Set(caChain.map((p) => p.trim() + '\n'))];
  const infos = unique.map((pem) => ({ pem, info: parseCertCached(pem) }));
  const path = [{ pem: leafPem.trim() + '\n', info: parseCertCached(leafPem) }];
  for (;;) {
    const last = path[path.length - 1].info;
    if (last.selfSigned) break;
    const parent = infos.find((c) => c.info.subject === last.issuer && !path.some((p) => p.pem === c.pem));
    if (!parent) break;
    path.push(parent);
  }
  const top = path[path.length - 1];
  const withoutRoot = top.info.selfSigned && path.length > 1 ? path.slice(0, -1) : path;
  return { certificatePem: withoutRoot.map((p) => p.pem).join(''), caPem: path.length > 1 ? top.pem : (unique[unique.length - 1] ?? top.pem) };
}
