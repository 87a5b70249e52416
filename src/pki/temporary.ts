// cert-manager's temporary certificate: something a workload can load while the real issuance
// is still pending. It is signed by a throwaway CA nobody trusts, so it never passes for a
// certificate from the configured issuer.
import { createCSR } from './csr.ts';
import { generatePrivateKey } from './keys.ts';
import { signCertificate } from './sign.ts';
import type { CertificateTemplate } from './template.ts';

/** Subject of the throwaway CA; readers recognise a temporary certificate by this issuer. */
export const TEMPORARY_CA_COMMON_NAME = 'cert-manager.local';
/** The subject serialNumber cert-manager stamps on every temporary certificate. */
export const TEMPORARY_SUBJECT_SERIAL_NUMBER = '1234567890';

export interface TemporaryCertificateOptions {
  /** what the Certificate asks for: subject, SANs, usages, isCA */
  template: CertificateTemplate;
  /** the key the real certificate will be issued for; the temporary one certifies it too */
  keyPem: string;
  notBefore: Date;
  durationMs: number;
}

/** PEM of a leaf for keyPem, signed by a fresh P-521 CA whose key is discarded on return. */
export async function createTemporaryCertificate(o: TemporaryCertificateOptions): Promise<string> {
  const caKeyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 521, encoding: 'PKCS8' });
  const caCertPem = await signCertificate({
    csrPem: await createCSR({ commonName: TEMPORARY_CA_COMMON_NAME, isCA: true }, caKeyPem),
    notBefore: o.notBefore, durationMs: o.durationMs, isCA: true, selfSignKeyPem: caKeyPem,
  });
  const template: CertificateTemplate = {
    ...o.template,
    subject: { ...(o.template.subject ?? {}), serialNumber: TEMPORARY_SUBJECT_SERIAL_NUMBER },
  };
  return signCertificate({
    csrPem: await createCSR(template, o.keyPem),
    notBefore: o.notBefore, durationMs: o.durationMs, isCA: template.isCA ?? false, usages: template.usages,
    issuer: { certPem: caCertPem, keyPem: caKeyPem }, oneOffIssuer: true,
  });
}
