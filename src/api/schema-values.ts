// The enumerated values of cert-manager's API, kept free of typebox: the webhook rules and the
// ingress-shim annotations check values against these lists at every start, and loading the
// schema builder for them cost the server ~250 files (issue 17). src/api/schema.ts builds its
// enum schemas from these same lists.

export const keyUsages = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement',
  'data encipherment', 'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any',
  'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system',
  'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
] as const;

export const signatureAlgorithms = ['SHA256WithRSA', 'SHA384WithRSA', 'SHA512WithRSA', 'ECDSAWithSHA256', 'ECDSAWithSHA384', 'ECDSAWithSHA512', 'PureEd25519'] as const;

export const tsigAlgorithms = ['HMACMD5', 'HMACSHA1', 'HMACSHA256', 'HMACSHA512'] as const;

export const dns01Providers = ['acmeDNS', 'akamai', 'azureDNS', 'cloudDNS', 'cloudflare', 'digitalocean', 'rfc2136', 'route53', 'webhook'] as const;

export const issuerTypes = ['acme', 'ca', 'selfSigned', 'vault', 'venafi'] as const;
