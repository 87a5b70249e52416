// The controllers' view of the objects they read: the fields they rely on, nothing more.
import type { Condition, KubeObject, Secret } from '../../api/meta.ts';
import type { CertificateSpecLike } from '../../shared/certificate-template.ts';

export interface CertificateStatusLike {
  conditions?: Condition[];
  lastFailureTime?: string;
  issuanceAttempts?: number;
  failedIssuanceAttempts?: number;
  notBefore?: string;
  notAfter?: string;
  renewalTime?: string;
  revision?: number;
  nextPrivateKeySecretName?: string;
  renewal?: { policy?: string; windows?: { valid: boolean; message?: string } };
  /** ACME renewal information (RFC 9773), see acme/ari.ts CertificateAriStatus */
  acme?: { ari?: import('../../acme/ari.ts').CertificateAriStatus; [k: string]: unknown };
}

export interface CertificateObj extends KubeObject {
  spec: CertificateSpecLike;
  status?: CertificateStatusLike;
}

export interface CertificateRequestObj extends KubeObject {
  spec: {
    request: string;
    issuerRef: { name: string; kind?: string; group?: string };
    duration?: string;
    isCA?: boolean;
    usages?: string[];
    username?: string;
  };
  status?: {
    conditions?: Condition[];
    certificate?: string;
    ca?: string;
    failureTime?: string;
  };
}

export type { Secret };

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
