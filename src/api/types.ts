// TypeScript types of the cert-manager kinds, derived from the one schema in schema.ts.

import type { Static } from '@sinclair/typebox';
import type { KubeObject } from './meta.ts';
import type * as S from './schema.ts';
import type { CertificateAriStatus } from '../acme/ari.ts';

export type IssuerRef = Static<typeof S.IssuerRefSchema>;
export type LocalObjectReference = Static<typeof S.LocalObjectReferenceSchema>;
export type SecretKeySelector = Static<typeof S.SecretKeySelectorSchema>;
export type APICondition = Static<typeof S.ConditionSchema>;
export type KeyUsage = Static<typeof S.KeyUsageSchema>;

export type X509Subject = Static<typeof S.X509SubjectSchema>;
export type OtherName = Static<typeof S.OtherNameSchema>;
export type PrivateKeySpec = Static<typeof S.PrivateKeySchema>;
export type PrivateKeyAlgorithm = Static<typeof S.PrivateKeyAlgorithmSchema>;
export type NameConstraintItem = Static<typeof S.NameConstraintItemSchema>;
export type RenewalPolicy = Static<typeof S.RenewalPolicySchema>;
export type RenewalWindow = Static<typeof S.RenewalWindowSchema>;
export type RenewalSpec = Static<typeof S.RenewalSchema>;
export type CertificateSpec = Static<typeof S.CertificateSpecSchema>;
/** status.acme: the ACME renewal information (RFC 9773) of the certificate in use, in status.acme.ari. */
export interface CertificateAcmeStatus {
  ari?: CertificateAriStatus;
}
export type CertificateStatus = Omit<Static<typeof S.CertificateStatusSchema>, 'acme'> & { acme?: CertificateAcmeStatus };

export type CertificateRequestSpec = Static<typeof S.CertificateRequestSpecSchema>;
export type CertificateRequestStatus = Static<typeof S.CertificateRequestStatusSchema>;

export type PodTemplate = Static<typeof S.PodTemplateSchema>;
export type ACMEHTTP01Ingress = Static<typeof S.ACMEHTTP01IngressSchema>;
export type ACMEHTTP01GatewayHTTPRoute = Static<typeof S.ACMEHTTP01GatewayHTTPRouteSchema>;
export type ACMEHTTP01 = Static<typeof S.ACMEHTTP01Schema>;
export type ACMEDNS01RFC2136 = Static<typeof S.ACMEDNS01RFC2136Schema>;
export type ACMEDNS01AzureDNS = Static<typeof S.ACMEDNS01AzureDNSSchema>;
export type ACMEDNS01CloudDNS = Static<typeof S.ACMEDNS01CloudDNSSchema>;
export type ACMEDNS01Akamai = Static<typeof S.ACMEDNS01AkamaiSchema>;
export type GatewayParentReference = Static<typeof S.GatewayParentReferenceSchema>;
export type ACMEDNS01 = Static<typeof S.ACMEDNS01Schema>;
export type ACMESolver = Static<typeof S.ACMESolverSchema>;
export type ACMEIssuer = Static<typeof S.ACMEIssuerSchema>;
export type CAIssuer = Static<typeof S.CAIssuerSchema>;
export type SelfSignedIssuer = Static<typeof S.SelfSignedIssuerSchema>;
export type VaultIssuer = Static<typeof S.VaultIssuerSchema>;
export type VenafiIssuer = Static<typeof S.VenafiIssuerSchema>;
/** Spec shared by Issuer and ClusterIssuer. */
export type IssuerSpec = Static<typeof S.IssuerSpecSchema>;
export type IssuerStatus = Static<typeof S.IssuerStatusSchema>;

export type ACMEState = Static<typeof S.ACMEStateSchema>;
export type OrderSpec = Static<typeof S.OrderSpecSchema>;
export type OrderStatus = Static<typeof S.OrderStatusSchema>;
export type ACMEAuthorization = Static<typeof S.ACMEAuthorizationSchema>;
export type ACMEChallengeRef = Static<typeof S.ACMEChallengeRefSchema>;
export type ChallengeSpec = Static<typeof S.ChallengeSpecSchema>;
export type ChallengeStatus = Static<typeof S.ChallengeStatusSchema>;

export interface Certificate extends KubeObject {
  spec: CertificateSpec;
  status?: CertificateStatus;
}

export interface CertificateRequest extends KubeObject {
  spec: CertificateRequestSpec;
  status?: CertificateRequestStatus;
}

export interface Issuer extends KubeObject {
  spec: IssuerSpec;
  status?: IssuerStatus;
}

export interface ClusterIssuer extends KubeObject {
  spec: IssuerSpec;
  status?: IssuerStatus;
}

/** An Issuer or a ClusterIssuer, told apart by kind: what a request's issuerRef finds. */
export type AnyIssuer = Issuer | ClusterIssuer;

export interface Order extends KubeObject {
  spec: OrderSpec;
  status?: OrderStatus;
}

export interface Challenge extends KubeObject {
  spec: ChallengeSpec;
  status?: ChallengeStatus;
}
