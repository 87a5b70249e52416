// Annotation and label keys the certificate controllers write on requests and Secrets.

export const ANN = {
  revision: 'cert-manager.io/certificate-revision',
  privateKeySecretName: 'cert-manager.io/private-key-secret-name',
  certificateName: 'cert-manager.io/certificate-name',
  issuerName: 'cert-manager.io/issuer-name',
  issuerKind: 'cert-manager.io/issuer-kind',
  issuerGroup: 'cert-manager.io/issuer-group',
  commonName: 'cert-manager.io/common-name',
  altNames: 'cert-manager.io/alt-names',
  ipSANs: 'cert-manager.io/ip-sans',
  uriSANs: 'cert-manager.io/uri-sans',
  emailSANs: 'cert-manager.io/email-sans',
  /** which failed attempt a request was made for: a request from an older attempt is never reused */
  issuanceAttempt: 'certsmith.io/issuance-attempt',
  /** "false": never mirror this Certificate's Secret to --secrets-dir; "true": mirror it even though it is a CA */
  mirrorFiles: 'certsmith.io/mirror-files',
} as const;

export const LABEL = {
  fao: 'controller.cert-manager.io/fao',
  nextPrivateKey: 'cert-manager.io/next-private-key',
} as const;
