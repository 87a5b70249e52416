// The one schema source for cert-manager.io/v1 and acme.cert-manager.io/v1: the TS types,
// structural validation, the CRDs in deploy/crds and the served OpenAPI documents all come from here.
// Field names and shapes follow cert-manager's v1 API so that its manifests apply unchanged;
// the seed fields (issuanceAttempts, renewal windows, status.renewal) are added beside them.

import { Type, Kind, TypeRegistry, FormatRegistry, type TSchema, type SchemaOptions } from '@sinclair/typebox';
import { GatewayParentReferenceSchema, ObjectMetaTemplateSchema, PodTemplateSchema, StringMapSchema } from './schema-core.ts';
import { keyUsages, signatureAlgorithms } from './schema-values.ts';

export { PodTemplateSchema, GatewayParentReferenceSchema } from './schema-core.ts';
export { dns01Providers, issuerTypes, keyUsages, signatureAlgorithms, tsigAlgorithms } from './schema-values.ts';

// Go's metav1.Time marshals as RFC 3339; anything Date.parse accepts is too loose.
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
FormatRegistry.Set('date-time', (v) => rfc3339.test(v) && !Number.isNaN(Date.parse(v)));
// []byte fields are base64 in JSON (standard alphabet, padded), as encoding/json writes them.
FormatRegistry.Set('byte', (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v));

TypeRegistry.Set('StringEnum', (schema: { enum: string[] }, value) => typeof value === 'string' && schema.enum.includes(value));
TypeRegistry.Set('OpenObject', (_schema, value) => typeof value === 'object' && value !== null && !Array.isArray(value));
TypeRegistry.Set('StringOrStringArray', (_schema, value) =>
  typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string')));

/** A string restricted to a set of values; emitted as a plain `enum`, which CRDs need. */
export function StringEnum<const T extends string[]>(values: [...T], options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ ...options, [Kind]: 'StringEnum', type: 'string', enum: values });
}

TypeRegistry.Set('AnyJSON', () => true);

/** Any JSON value, kept as written (apiextensions JSON: the webhook solver's config). */
export function AnyJSON(options: SchemaOptions = {}) {
  return Type.Unsafe<unknown>({ ...options, [Kind]: 'AnyJSON', 'x-kubernetes-preserve-unknown-fields': true });
}

/** An object whose content cert-manager does not constrain (object metadata, checked by validation.ts). */
export function OpenObject(options: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, unknown>>({ ...options, [Kind]: 'OpenObject', type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

const opt = <T extends TSchema>(s: T) => Type.Optional(s);
const str = (description?: string) => Type.String(description ? { description } : {});
/** cert-manager's lists are all atomic: a write replaces the whole list. */
const list = <T extends TSchema>(items: T, options: SchemaOptions = {}) => Type.Array(items, { ...options, 'x-kubernetes-list-type': 'atomic' });
const strList = (description?: string) => list(Type.String(), description ? { description } : {});
const int32 = (description?: string) => Type.Integer({ format: 'int32', ...(description ? { description } : {}) });
const time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const bytes = (description?: string) => Type.String({ format: 'byte', ...(description ? { description } : {}) });
const StringMap = StringMapSchema;

// ---------------------------------------------------------------------------------------------
// shared references and conditions

export const LocalObjectReferenceSchema = Type.Object({
  name: str('Name of the resource being referred to.'),
});

export const SecretKeySelectorSchema = Type.Object({
  name: str('Name of the Secret being referred to.'),
  key: opt(str('The key of the entry in the Secret resource\'s `data` field to be used.')),
});

export const IssuerRefSchema = Type.Object({
  name: str('Name of the issuer being referred to.'),
  kind: opt(str('Kind of the issuer being referred to. Empty means Issuer.')),
  group: opt(str('Group of the issuer being referred to. Empty means cert-manager.io.')),
}, { description: 'Reference to the issuer responsible for issuing the certificate.' });

export const ConditionStatusSchema = StringEnum(['True', 'False', 'Unknown']);

export const ConditionSchema = Type.Object({
  type: str('Type of the condition, e.g. Ready or Issuing.'),
  status: ConditionStatusSchema,
  reason: opt(str()),
  message: opt(str()),
  lastTransitionTime: opt(time()),
  observedGeneration: opt(Type.Integer({ format: 'int64' })),
});

const conditions = () => opt(Type.Array(ConditionSchema, {
  'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'],
}));

// ---------------------------------------------------------------------------------------------
// Certificate

export const KeyUsageSchema = StringEnum([...keyUsages], { description: 'A key usage or extended key usage.' });

export const X509SubjectSchema = Type.Object({
  organizations: opt(strList()),
  countries: opt(strList()),
  organizationalUnits: opt(strList()),
  localities: opt(strList()),
  provinces: opt(strList()),
  streetAddresses: opt(strList()),
  postalCodes: opt(strList()),
  serialNumber: opt(str()),
});

export const OtherNameSchema = Type.Object({
  oid: opt(str('OID of the otherName SAN, in dotted form.')),
  utf8Value: opt(str('UTF-8 string value of the otherName SAN.')),
});

export const PrivateKeyAlgorithmSchema = StringEnum(['RSA', 'ECDSA', 'Ed25519']);
export const PrivateKeySchema = Type.Object({
  rotationPolicy: opt(StringEnum(['Never', 'Always'], { description: 'Whether to generate a new private key on each issuance. Defaults to Always (applied by the controllers, not stored).' })),
  encoding: opt(StringEnum(['PKCS1', 'PKCS8'])),
  algorithm: opt(PrivateKeyAlgorithmSchema),
  size: opt(Type.Integer({ description: 'Key bit size (RSA) or curve size (ECDSA).' })),
});


const jksKeystore = Type.Object({
  create: Type.Boolean({ description: 'Whether to create a JKS keystore in the Secret.' }),
  passwordSecretRef: opt(SecretKeySelectorSchema),
  password: opt(str('Literal password for the keystore; exclusive with passwordSecretRef.')),
  alias: opt(str('Alias of the private key entry; defaults to "certificate".')),
});
const pkcs12Keystore = Type.Object({
  create: Type.Boolean({ description: 'Whether to create a PKCS#12 keystore in the Secret.' }),
  passwordSecretRef: opt(SecretKeySelectorSchema),
  password: opt(str('Literal password for the keystore; exclusive with passwordSecretRef.')),
  profile: opt(StringEnum(['LegacyRC2', 'LegacyDES', 'Modern2023', 'Modern2026'])),
});

export const NameConstraintItemSchema = Type.Object({
  dnsDomains: opt(strList()),
  ipRanges: opt(strList('CIDR ranges.')),
  emailAddresses: opt(strList()),
  uriDomains: opt(strList()),
});

export const RenewalPolicySchema = StringEnum(['RenewBefore', 'EarliestWindow', 'Disabled']);

// The seed spells a window {cron: [..], duration, timeZone}; cert-manager shipped
// {cron: "..", windowDuration, timezone}. Both spellings are accepted on input.
export const RenewalWindowSchema = Type.Object({
  cron: Type.Unsafe<string | string[]>({
    [Kind]: 'StringOrStringArray', 'x-kubernetes-preserve-unknown-fields': true,
    description: 'Five-field cron expression(s) giving the start of each window; a string or a list of strings.',
  }),
  duration: opt(str('How long each window stays open, as a Go duration (seed spelling).')),
  windowDuration: opt(Type.String({ pattern: '^([0-9]+(\\.[0-9]+)?(s|m|h))+$', description: 'How long each window stays open, as a Go duration (cert-manager spelling).' })),
  timeZone: opt(str('IANA time zone the cron expression is evaluated in (seed spelling). Default UTC.')),
  timezone: opt(Type.String({ minLength: 1, description: 'IANA time zone the cron expression is evaluated in (cert-manager spelling). Default UTC.' })),
});

export const RenewalSchema = Type.Object({
  policy: opt(RenewalPolicySchema),
  windows: opt(list(RenewalWindowSchema)),
}, { description: 'Controls when automatic renewal may happen.' });

export const CertificateSpecSchema = Type.Object({
  subject: opt(X509SubjectSchema),
  literalSubject: opt(str('RFC 4514 subject, used verbatim; excludes commonName and subject.')),
  commonName: opt(str()),
  duration: opt(str('Requested lifetime, as a Go duration. Default 2160h.')),
  renewBefore: opt(str('How long before expiry to renew, as a Go duration.')),
  renewBeforePercentage: opt(int32('Renew when this percentage of the lifetime remains.')),
  dnsNames: opt(strList()),
  ipAddresses: opt(strList()),
  uris: opt(strList()),
  otherNames: opt(list(OtherNameSchema)),
  emailAddresses: opt(strList()),
  secretName: str('Name of the Secret that will hold the issued certificate and key.'),
  secretTemplate: opt(Type.Object({ annotations: opt(StringMap), labels: opt(StringMap) })),
  keystores: opt(Type.Object({ jks: opt(jksKeystore), pkcs12: opt(pkcs12Keystore) })),
  issuerRef: IssuerRefSchema,
  isCA: opt(Type.Boolean()),
  usages: opt(list(KeyUsageSchema)),
  privateKey: opt(PrivateKeySchema),
  signatureAlgorithm: opt(StringEnum([...signatureAlgorithms])),
  encodeUsagesInRequest: opt(Type.Boolean()),
  revisionHistoryLimit: opt(int32('How many CertificateRequest revisions to keep; at least 1.')),
  additionalOutputFormats: opt(list(Type.Object({ type: StringEnum(['DER', 'CombinedPEM']) }))),
  nameConstraints: opt(Type.Object({
    critical: opt(Type.Boolean()),
    permitted: opt(NameConstraintItemSchema),
    excluded: opt(NameConstraintItemSchema),
  })),
  renewal: opt(RenewalSchema),
});

/** cert-manager's CertificateACMEARIStatus, plus certID: the certificate the answer is about. */
export const CertificateAriStatusSchema = Type.Object({
  certID: opt(str('ARI CertID of the certificate this answer is about (certsmith).')),
  explanationURL: opt(str()),
  lastChecked: opt(time()),
  lastError: opt(str()),
  nextCheck: opt(time()),
  suggestedWindow: opt(Type.Object({ start: time(), end: time() })),
}, { description: 'ACME Renewal Information (RFC 9773) for the certificate in use.' });

export const CertificateStatusSchema = Type.Object({
  conditions: conditions(),
  lastFailureTime: opt(time()),
  notBefore: opt(time()),
  notAfter: opt(time()),
  renewalTime: opt(time()),
  revision: opt(Type.Integer()),
  nextPrivateKeySecretName: opt(str()),
  issuanceAttempts: opt(Type.Integer({ description: 'Consecutive failed issuance attempts (seed field).' })),
  failedIssuanceAttempts: opt(Type.Integer({ description: 'cert-manager spelling of issuanceAttempts; read when issuanceAttempts is absent.' })),
  renewal: opt(Type.Object({
    policy: opt(RenewalPolicySchema),
    windows: opt(Type.Object({ valid: Type.Boolean(), message: opt(str()) })),
  })),
  acme: opt(Type.Object({ ari: opt(CertificateAriStatusSchema) }, { description: 'ACME-specific status.' })),
});

// ---------------------------------------------------------------------------------------------
// CertificateRequest

export const CertificateRequestSpecSchema = Type.Object({
  duration: opt(str()),
  issuerRef: IssuerRefSchema,
  request: bytes('PEM-encoded PKCS#10 certificate signing request, base64 in JSON.'),
  isCA: opt(Type.Boolean()),
  usages: opt(list(KeyUsageSchema)),
  username: opt(str()),
  uid: opt(str()),
  groups: opt(strList()),
  extra: opt(Type.Record(Type.String(), Type.Array(Type.String()))),
});

export const CertificateRequestStatusSchema = Type.Object({
  conditions: conditions(),
  certificate: opt(bytes('PEM-encoded signed certificate.')),
  ca: opt(bytes('PEM-encoded CA certificate (deprecated upstream, still written).')),
  failureTime: opt(time()),
});

// ---------------------------------------------------------------------------------------------
// Issuer and ClusterIssuer

const ObjectMetaTemplate = ObjectMetaTemplateSchema;

export const ACMEHTTP01IngressSchema = Type.Object({
  serviceType: opt(str()),
  ingressClassName: opt(str()),
  class: opt(str()),
  name: opt(str()),
  podTemplate: opt(PodTemplateSchema),
  ingressTemplate: opt(Type.Object({ metadata: opt(ObjectMetaTemplate) })),
});

export const ACMEHTTP01GatewayHTTPRouteSchema = Type.Object({
  serviceType: opt(str()),
  labels: opt(StringMap),
  parentRefs: opt(list(GatewayParentReferenceSchema)),
  podTemplate: opt(PodTemplateSchema),
});

export const ACMEHTTP01Schema = Type.Object({
  ingress: opt(ACMEHTTP01IngressSchema),
  gatewayHTTPRoute: opt(ACMEHTTP01GatewayHTTPRouteSchema),
});


export const ACMEDNS01RFC2136Schema = Type.Object({
  nameserver: str('IP address or hostname of the authoritative server, optionally with :port. IPv6 in brackets.'),
  tsigSecretSecretRef: opt(SecretKeySelectorSchema),
  tsigKeyName: opt(str()),
  tsigAlgorithm: opt(str('HMACMD5, HMACSHA1, HMACSHA256 or HMACSHA512. Default HMACMD5.')),
  protocol: opt(StringEnum(['TCP', 'UDP'])),
});

/** cert-manager's ACMEIssuerDNS01ProviderCloudflare: an API token, or the global API key with its account email */
/** A Kubernetes ServiceAccount whose token is requested (with these audiences) to authenticate. */
export const ServiceAccountRefSchema = Type.Object({
  name: str('Name of the ServiceAccount.'),
  audiences: opt(strList('Extra audiences of the token.')),
});

export const ACMEDNS01CloudflareSchema = Type.Object({
  email: opt(str('Email of the account, only with apiKeySecretRef.')),
  apiKeySecretRef: opt(SecretKeySelectorSchema),
  apiTokenSecretRef: opt(SecretKeySelectorSchema),
});

/** cert-manager's ACMEIssuerDNS01ProviderDigitalOcean */
export const ACMEDNS01DigitalOceanSchema = Type.Object({
  tokenSecretRef: SecretKeySelectorSchema,
});

/** cert-manager's ACMEIssuerDNS01ProviderAcmeDNS: the acme-dns server and the accounts JSON that `acme-dns register` gives */
export const ACMEDNS01AcmeDNSSchema = Type.Object({
  host: str('Base URL of the acme-dns server.'),
  accountSecretRef: SecretKeySelectorSchema,
});

/**
 * cert-manager's ACMEIssuerDNS01ProviderRoute53: static keys from a Secret, else the AWS default
 * credential chain (ClusterIssuers only, as cert-manager's ambient-credentials default), then `role`
 */
export const ACMEDNS01Route53Schema = Type.Object({
  accessKeyID: opt(str('Access key ID, when not in accessKeyIDSecretRef.')),
  accessKeyIDSecretRef: opt(SecretKeySelectorSchema),
  secretAccessKeySecretRef: opt(SecretKeySelectorSchema),
  role: opt(str('ARN of a role to assume with the credentials above.')),
  hostedZoneID: opt(str('The hosted zone to change; looked up by name when empty.')),
  region: opt(str('AWS region for the API calls; Route 53 is global, default us-east-1.')),
  auth: opt(Type.Object({
    kubernetes: Type.Object({ serviceAccountRef: ServiceAccountRefSchema }, { description: 'A service account token, exchanged for AWS credentials (IRSA).' }),
  })),
});

/** cert-manager's ACMEIssuerDNS01ProviderAkamai (EdgeGrid credentials) */
export const ACMEDNS01AkamaiSchema = Type.Object({
  serviceConsumerDomain: str(),
  clientTokenSecretRef: SecretKeySelectorSchema,
  clientSecretSecretRef: SecretKeySelectorSchema,
  accessTokenSecretRef: SecretKeySelectorSchema,
});

/** cert-manager's ACMEIssuerDNS01ProviderAzureDNS: a service principal, or a managed identity */
export const ACMEDNS01AzureDNSSchema = Type.Object({
  clientID: opt(str('Service principal client ID; with clientSecretSecretRef and tenantID.')),
  clientSecretSecretRef: opt(SecretKeySelectorSchema),
  subscriptionID: str(),
  tenantID: opt(str()),
  resourceGroupName: str(),
  hostedZoneName: opt(str()),
  environment: opt(StringEnum(['AzurePublicCloud', 'AzureChinaCloud', 'AzureGermanCloud', 'AzureUSGovernmentCloud'])),
  managedIdentity: opt(Type.Object({
    clientID: opt(str()),
    resourceID: opt(str()),
    tenantID: opt(str()),
  }, { description: 'Managed identity used when clientID is empty.' })),
  zoneType: opt(StringEnum(['AzurePublicZone', 'AzurePrivateZone'])),
});

/** cert-manager's ACMEIssuerDNS01ProviderCloudDNS */
export const ACMEDNS01CloudDNSSchema = Type.Object({
  serviceAccountSecretRef: opt(SecretKeySelectorSchema),
  project: str(),
  hostedZoneName: opt(str('Managed zone to use; looked up by name when empty.')),
});

export const ACMEDNS01Schema = Type.Object({
  cnameStrategy: opt(StringEnum(['None', 'Follow'])),
  acmeDNS: opt(ACMEDNS01AcmeDNSSchema),
  akamai: opt(ACMEDNS01AkamaiSchema),
  azureDNS: opt(ACMEDNS01AzureDNSSchema),
  cloudDNS: opt(ACMEDNS01CloudDNSSchema),
  cloudflare: opt(ACMEDNS01CloudflareSchema),
  digitalocean: opt(ACMEDNS01DigitalOceanSchema),
  rfc2136: opt(ACMEDNS01RFC2136Schema),
  route53: opt(ACMEDNS01Route53Schema),
  webhook: opt(Type.Object({
    groupName: str(),
    solverName: str(),
    config: opt(AnyJSON({ description: 'Solver-specific configuration, passed to the webhook as is.' })),
  })),
});

export const ACMESolverSchema = Type.Object({
  selector: opt(Type.Object({
    matchLabels: opt(StringMap),
    dnsNames: opt(strList()),
    dnsZones: opt(strList()),
  })),
  http01: opt(ACMEHTTP01Schema),
  dns01: opt(ACMEDNS01Schema),
  waitInsteadOfSelfCheck: opt(str('Skip the self-check and wait this Go duration after presenting.')),
});

export const ACMEIssuerSchema = Type.Object({
  email: opt(str()),
  server: str('URL of the ACME server directory.'),
  preferredChain: opt(Type.String({ maxLength: 64 })),
  caBundle: opt(bytes('PEM CA bundle used to verify the ACME server, base64 in JSON.')),
  skipTLSVerify: opt(Type.Boolean()),
  externalAccountBinding: opt(Type.Object({
    keyID: str(),
    keySecretRef: SecretKeySelectorSchema,
    keyAlgorithm: opt(StringEnum(['HS256', 'HS384', 'HS512'], { description: 'Deprecated; HS256 is always used.' })),
  })),
  privateKeySecretRef: SecretKeySelectorSchema,
  solvers: opt(list(ACMESolverSchema)),
  disableAccountKeyGeneration: opt(Type.Boolean()),
  enableDurationFeature: opt(Type.Boolean()),
  profile: opt(str('ACME profile requested on new orders.')),
  renewalInformationSource: opt(StringEnum(['ARI', 'None'], { description: 'cert-manager\'s field: ARI (default, also when empty) fetches ACME Renewal Information (RFC 9773) when the directory offers renewalInfo; None renews at the ordinary time.' })),
});

export const CAIssuerSchema = Type.Object({
  secretName: str('Secret holding the CA key pair.'),
  crlDistributionPoints: opt(strList()),
  ocspServers: opt(strList()),
  issuingCertificateURLs: opt(strList()),
});

export const SelfSignedIssuerSchema = Type.Object({
  crlDistributionPoints: opt(strList()),
});

export const VaultIssuerSchema = Type.Object({
  server: str(),
  path: str(),
  namespace: opt(str()),
  caBundle: opt(bytes()),
  caBundleSecretRef: opt(SecretKeySelectorSchema),
  clientCertSecretRef: opt(SecretKeySelectorSchema),
  clientKeySecretRef: opt(SecretKeySelectorSchema),
  serverName: opt(str()),
  auth: Type.Object({
    tokenSecretRef: opt(SecretKeySelectorSchema),
    appRole: opt(Type.Object({ path: str(), roleId: str(), secretRef: SecretKeySelectorSchema })),
    clientCertificate: opt(Type.Object({ mountPath: opt(str()), name: opt(str()), secretName: opt(str()) })),
    kubernetes: opt(Type.Object({
      mountPath: opt(str()),
      secretRef: opt(SecretKeySelectorSchema),
      serviceAccountRef: opt(ServiceAccountRefSchema),
      role: str(),
    })),
    aws: opt(Type.Object({
      iamRoleArn: opt(str()),
      mountPath: opt(str()),
      region: opt(str()),
      role: Type.String({ minLength: 1 }),
      serviceAccountRef: opt(ServiceAccountRefSchema),
      vaultHeaderValue: opt(str()),
    }, { description: 'AWS IAM authentication to Vault.' })),
  }),
});

export const VenafiIssuerSchema = Type.Object({
  zone: str(),
  tpp: opt(Type.Object({
    url: str(),
    credentialsRef: LocalObjectReferenceSchema,
    caBundle: opt(bytes()),
    caBundleSecretRef: opt(SecretKeySelectorSchema),
  })),
  cloud: opt(Type.Object({
    url: opt(str()),
    apiTokenSecretRef: SecretKeySelectorSchema,
  })),
  ngts: opt(Type.Object({
    url: opt(str()),
    tokenEndpoint: opt(str()),
    tsgID: str(),
    credentialsRef: LocalObjectReferenceSchema,
  })),
}, {
  'x-kubernetes-validations': [{
    message: 'exactly one of tpp, cloud, or ngts must be configured',
    rule: '(has(self.tpp) ? 1 : 0) + (has(self.cloud) ? 1 : 0) + (has(self.ngts) ? 1 : 0) == 1',
  }],
});


export const IssuerSpecSchema = Type.Object({
  acme: opt(ACMEIssuerSchema),
  ca: opt(CAIssuerSchema),
  selfSigned: opt(SelfSignedIssuerSchema),
  vault: opt(VaultIssuerSchema),
  venafi: opt(VenafiIssuerSchema),
});

export const IssuerStatusSchema = Type.Object({
  conditions: conditions(),
  acme: opt(Type.Object({
    uri: opt(str()),
    lastRegisteredEmail: opt(str()),
    lastPrivateKeyHash: opt(str()),
  })),
});

// ---------------------------------------------------------------------------------------------
// Order and Challenge

export const acmeStates = ['valid', 'ready', 'pending', 'processing', 'invalid', 'expired', 'errored'] as const;
export const ACMEStateSchema = StringEnum([...acmeStates]);

export const OrderSpecSchema = Type.Object({
  request: bytes('DER or PEM certificate signing request, base64 in JSON.'),
  issuerRef: IssuerRefSchema,
  commonName: opt(str()),
  dnsNames: opt(strList()),
  ipAddresses: opt(strList()),
  duration: opt(str()),
  profile: opt(str()),
  replaces: opt(str('ARI CertID of the certificate this order replaces.')),
});

export const ACMEChallengeRefSchema = Type.Object({
  url: str(),
  type: str('ACME challenge type, e.g. http-01.'),
  token: str(),
});

export const ACMEAuthorizationSchema = Type.Object({
  url: str(),
  identifier: opt(str()),
  wildcard: opt(Type.Boolean()),
  initialState: opt(ACMEStateSchema),
  challenges: opt(list(ACMEChallengeRefSchema)),
});

export const OrderStatusSchema = Type.Object({
  url: opt(str()),
  finalizeURL: opt(str()),
  authorizations: opt(list(ACMEAuthorizationSchema)),
  certificate: opt(bytes('PEM certificate chain, base64 in JSON.')),
  state: opt(ACMEStateSchema),
  reason: opt(str()),
  failureTime: opt(time()),
});

export const ChallengeSpecSchema = Type.Object({
  url: str(),
  authorizationURL: str(),
  dnsName: str(),
  wildcard: opt(Type.Boolean()),
  type: StringEnum(['HTTP-01', 'DNS-01']),
  token: str(),
  key: str(),
  solver: ACMESolverSchema,
  issuerRef: IssuerRefSchema,
});

export const ChallengeStatusSchema = Type.Object({
  processing: opt(Type.Boolean()),
  presented: opt(Type.Boolean()),
  presentedAt: opt(time()),
  reason: opt(str()),
  state: opt(ACMEStateSchema),
});

// ---------------------------------------------------------------------------------------------
// whole objects (metadata is checked by validation.ts and typed by meta.ts)

function kubeObject<S extends TSchema, T extends TSchema>(description: string, spec: S, status: T) {
  return Type.Object({
    apiVersion: opt(Type.String()),
    kind: opt(Type.String()),
    metadata: opt(OpenObject()),
    spec,
    status: opt(status),
  }, { description });
}

export const CertificateSchema = kubeObject('A Certificate resource: a desired X.509 certificate and the Secret it is kept in, renewed automatically.', CertificateSpecSchema, CertificateStatusSchema);
export const CertificateRequestSchema = kubeObject('A request for a signed certificate from an issuer, carrying a PKCS#10 CSR.', CertificateRequestSpecSchema, CertificateRequestStatusSchema);
export const IssuerSchema = kubeObject('A namespaced certificate authority that Certificates in the same namespace can reference.', IssuerSpecSchema, IssuerStatusSchema);
export const ClusterIssuerSchema = kubeObject('A cluster-scoped certificate authority that Certificates in any namespace can reference.', IssuerSpecSchema, IssuerStatusSchema);
export const OrderSchema = kubeObject('An ACME order for one CertificateRequest.', OrderSpecSchema, OrderStatusSchema);
export const ChallengeSchema = kubeObject('An ACME challenge for one authorization of an Order.', ChallengeSpecSchema, ChallengeStatusSchema);

/** The object schema of each cert-manager kind, keyed by kind. */
export const schemasByKind: Record<string, TSchema> = {
  Certificate: CertificateSchema,
  CertificateRequest: CertificateRequestSchema,
  Issuer: IssuerSchema,
  ClusterIssuer: ClusterIssuerSchema,
  Order: OrderSchema,
  Challenge: ChallengeSchema,
};
