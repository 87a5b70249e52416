/** The neutral description of "what certificate we want", mapped from a Certificate spec by the caller. */
export interface X509Subject {
  organizations?: string[]; countries?: string[]; organizationalUnits?: string[]; localities?: string[];
  provinces?: string[]; streetAddresses?: string[]; postalCodes?: string[]; serialNumber?: string;
}
export interface OtherName { oid: string; utf8Value: string }
export interface NameConstraintItems { dnsDomains?: string[]; ipRanges?: string[]; emailAddresses?: string[]; uriDomains?: string[] }
export interface NameConstraints { critical?: boolean; permitted?: NameConstraintItems; excluded?: NameConstraintItems }
export interface CertificateTemplate {
  commonName?: string; dnsNames?: string[]; ipAddresses?: string[]; uris?: string[]; emailAddresses?: string[];
  otherNames?: OtherName[]; subject?: X509Subject; /** RFC 4514 string */ literalSubject?: string;
  /** cert-manager usage names, e.g. 'digital signature', 'server auth' */ usages?: string[];
  isCA?: boolean; maxPathLen?: number; nameConstraints?: NameConstraints;
  /**
   * false: a CSR made from this template carries no KeyUsage or ExtendedKeyUsage extension, as
   * cert-manager's GenerateCSR for spec.encodeUsagesInRequest: false (the request's spec.usages
   * then states them). Certificates signed from a template ignore it.
   */
  encodeUsagesInRequest?: boolean;
}
