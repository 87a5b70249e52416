// The Secret's additional output formats and keystores (cert-manager's tls-combined.pem, key.der, *.p12, *.jks).
export { pemToDER } from './pem.ts';
export { createPKCS12, createTruststorePKCS12, DEFAULT_PKCS12_PROFILE, type PKCS12Profile } from './pkcs12.ts';
export { createJKS, createTruststoreJKS } from './jks.ts';

/** tls-combined.pem exactly as cert-manager writes and checks it: key PEM, "\n", certificate chain PEM. */
export function combinedPEM(keyPem: string, chainPem: string): string {
  return `${keyPem}\n${chainPem}`;
}
