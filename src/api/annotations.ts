// Every annotation and label key certsmith reads or writes, in one place: cert-manager's own
// (cert-manager.io/…, acme.cert-manager.io/…, so objects move between the two unchanged) and
// certsmith's additions (certsmith.io/…, acme.certsmith.io/…). Controllers, the CLI and
// validation import these; no other file spells a key.

/** The prefixes of the keys cert-manager owns; users may not set them where cert-manager writes. */
export const CERT_MANAGER_PREFIX = 'cert-manager.io/';
export const ACME_CERT_MANAGER_PREFIX = 'acme.cert-manager.io/';

/** The subject attributes of an issued certificate, as cert-manager records them on the Secret (and ingress-shim reads them). */
export const SubjectAnnotation = {
  organizations: 'cert-manager.io/subject-organizations',
  organizationalUnits: 'cert-manager.io/subject-organizationalunits',
  countries: 'cert-manager.io/subject-countries',
  provinces: 'cert-manager.io/subject-provinces',
  localities: 'cert-manager.io/subject-localities',
  streetAddresses: 'cert-manager.io/subject-streetaddresses',
  postalCodes: 'cert-manager.io/subject-postalcodes',
  serialNumber: 'cert-manager.io/subject-serialnumber',
} as const;

/** On Secrets and CertificateRequests: which Certificate, revision, key and issuer they belong to, and what was issued. */
export const CertificateAnnotation = {
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

/** On a Certificate: issue a self-signed placeholder while the real certificate is pending. */
export const ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION = 'cert-manager.io/issue-temporary-certificate';
/** On a Certificate: the notification kinds announced as firing (comma-separated), so each is sent once and resolved once. */
export const NOTIFICATIONS_FIRING_ANNOTATION = 'notifications.certsmith.io/firing';
/** On a Secret: the template label/annotation keys applied last time, so removed ones can be dropped. */
export const SECRET_TEMPLATE_KEYS_ANNOTATION = 'certsmith.io/secret-template-keys';

/** Labels cert-manager puts on the objects it manages. */
export const ManagedLabel = {
  fao: 'controller.cert-manager.io/fao',
  nextPrivateKey: 'cert-manager.io/next-private-key',
} as const;

/** The Ingress (and Gateway) annotations ingress-shim reads. */
export const IngressShimAnnotation = {
  issuer: 'cert-manager.io/issuer',
  clusterIssuer: 'cert-manager.io/cluster-issuer',
  issuerKind: CertificateAnnotation.issuerKind,
  issuerGroup: CertificateAnnotation.issuerGroup,
  commonName: CertificateAnnotation.commonName,
  altNames: CertificateAnnotation.altNames,
  ipSANs: CertificateAnnotation.ipSANs,
  uriSANs: CertificateAnnotation.uriSANs,
  emailSANs: CertificateAnnotation.emailSANs,
  duration: 'cert-manager.io/duration',
  renewBefore: 'cert-manager.io/renew-before',
  renewBeforePercentage: 'cert-manager.io/renew-before-percentage',
  usages: 'cert-manager.io/usages',
  revisionHistoryLimit: 'cert-manager.io/revision-history-limit',
  privateKeyAlgorithm: 'cert-manager.io/private-key-algorithm',
  privateKeyEncoding: 'cert-manager.io/private-key-encoding',
  privateKeySize: 'cert-manager.io/private-key-size',
  privateKeyRotationPolicy: 'cert-manager.io/private-key-rotation-policy',
  subjectOrganizations: SubjectAnnotation.organizations,
  subjectOrganizationalUnits: SubjectAnnotation.organizationalUnits,
  subjectCountries: SubjectAnnotation.countries,
  subjectProvinces: SubjectAnnotation.provinces,
  subjectLocalities: SubjectAnnotation.localities,
  subjectStreetAddresses: SubjectAnnotation.streetAddresses,
  subjectPostalCodes: SubjectAnnotation.postalCodes,
  subjectSerialNumber: SubjectAnnotation.serialNumber,
  secretTemplate: 'cert-manager.io/secret-template',
  tlsACME: 'kubernetes.io/tls-acme',
  editInPlace: 'acme.cert-manager.io/http01-edit-in-place',
  http01IngressClass: 'acme.cert-manager.io/http01-ingress-class',
  http01IngressClassName: 'acme.cert-manager.io/http01-ingress-ingressclassname',
} as const;

/** On a Gateway: comma-separated listener names the shim leaves alone. */
export const IGNORE_TLS_LISTENERS_ANNOTATION = 'cert-manager.io/ignore-tls-listeners';

/** Written by ingress-shim on a Certificate, carried to its Order, applied to the HTTP-01 solver's ingress. */
export const HTTP01OverrideAnnotation = {
  ingressName: 'acme.cert-manager.io/http01-override-ingress-name',
  ingressClass: 'acme.cert-manager.io/http01-override-ingress-class',
  ingressClassName: 'acme.cert-manager.io/http01-override-ingress-ingressclassname',
} as const;

/** Labels and annotations of the HTTP-01 solver's Pods, Services and Ingresses. */
export const HTTP01SolverLabel = {
  solver: 'acme.cert-manager.io/http01-solver',
  domain: 'acme.cert-manager.io/http-domain',
  token: 'acme.cert-manager.io/http-token',
} as const;
export const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** The CA injector's annotations. */
export const CAInjectorAnnotation = {
  fromCertificate: 'cert-manager.io/inject-ca-from',
  fromSecret: 'cert-manager.io/inject-ca-from-secret',
  apiServerCA: 'cert-manager.io/inject-apiserver-ca',
  /** on a Secret: its ca.crt may be injected through inject-ca-from-secret */
  allowDirectInjection: 'cert-manager.io/allow-direct-injection',
} as const;

/** certsmith's bookkeeping on ACME Orders. */
export const ACMEOrderAnnotation = {
  /**
   * Why an Order or Challenge failed when the failure is not the user's, written by the controller
   * that saw it (Challenge, then Order). The ACME request controller retries such an Order with a
   * new one without failing the CertificateRequest, so no issuance attempt is counted (seed 000).
   */
  failureCause: 'acme.certsmith.io/failure-cause',
  /** the account URL an Order's ACME order was created under; another account cannot continue it */
  account: 'acme.certsmith.io/account',
  /**
   * Write-ahead mark: set on the Order before newOrder is sent. An Order that carries it without
   * status.url was interrupted between sending newOrder and recording the answer.
   */
  creatingSince: 'acme.certsmith.io/creating-since',
  /** RFC 8555 §6.6: the ACME server answered 429 rateLimited; nothing is sent for this Order before this time */
  rateLimitedUntil: 'acme.certsmith.io/rate-limited-until',
  /** which retry of its CertificateRequest an Order is (absent: the first Order) */
  retry: 'acme.certsmith.io/retry',
} as const;

/**
 * The pace of looks at an Order or Challenge waiting on the ACME server, kept on the object so a
 * restart resumes it (controllers/acme/look-schedule.ts).
 */
export const ACMELookAnnotation = {
  /** no self-check, authorization poll or order look before this instant (RFC 3339 with milliseconds) */
  nextLookAt: 'acme.certsmith.io/next-look-at',
  /** on a Challenge: when the POST that accepted it was sent */
  acceptedAt: 'acme.certsmith.io/accepted-at',
  /**
   * on a Challenge: written before the accepting POST leaves; a process that finds it with the
   * accept not recorded (killed in between) reads the CA's view instead of accepting again
   */
  acceptingSince: 'acme.certsmith.io/accepting-since',
  /** on a Challenge: the controller instance that sent it (another one's HTTP-01 responder may have been down) */
  acceptedBy: 'acme.certsmith.io/accepted-by',
  /** on an Order: when finalize answered that the order is processing */
  finalizedAt: 'acme.certsmith.io/finalized-at',
} as const;

/** On an ACME Issuer: set by `certsmith acme-account` after a key rollover, so the issuer controller looks again. */
export const ACCOUNT_KEY_ROLLED_OVER_ANNOTATION = 'acme.certsmith.io/account-key-rolled-over';
/** On a Certificate with an ACME issuer, "true": revoke its certificate at the CA before the Certificate is deleted. */
export const REVOKE_ON_DELETE_ANNOTATION = 'acme.certsmith.io/revoke-on-delete';
/** On a Certificate with an ACME issuer, "true": when its private key is replaced, revoke the certificate of the old key (reason superseded). */
export const REVOKE_ON_KEY_ROTATION_ANNOTATION = 'acme.certsmith.io/revoke-on-key-rotation';
/** Set by certsmith on such a Certificate: the replaced certificates (base64 DER, comma separated) still to revoke. */
export const SUPERSEDED_CERTIFICATES_ANNOTATION = 'acme.certsmith.io/superseded-certificates';

/** Whether key is one cert-manager owns (cert-manager.io/… or acme.cert-manager.io/…). */
export function isCertManagerKey(key: string): boolean {
  return key.startsWith(CERT_MANAGER_PREFIX) || key.startsWith(ACME_CERT_MANAGER_PREFIX);
}
