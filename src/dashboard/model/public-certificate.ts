// The only part of a Secret the dashboard ever reads into what it sends: the public fields of
// the leaf in tls.crt. The key, and every other data key, never leave this function.
import { parseCertificate, type CertificateInfo } from '../../pki/parse.ts';
import type { Secret } from '../../api/meta.ts';

export interface PublicCertificate {
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  signatureAlgorithm: string;
  publicKeyFingerprint: string;
  dnsNames: string[];
  ipAddresses: string[];
  uris: string[];
  emailAddresses: string[];
  isCA: boolean;
}

export interface ParsedLeaf {
  /** what the browser may see */
  public?: PublicCertificate;
  /** for the renewal arithmetic on the server side only */
  info?: CertificateInfo;
  /** why tls.crt could not be read, in words */
  error?: string;
}

export function leafOf(secret: Secret | undefined): ParsedLeaf {
  const crt = secret?.data?.['tls.crt'];
  if (!secret) return { error: 'the Secret does not exist' };
  if (!crt) return { error: 'the Secret has no tls.crt' };
  let info: CertificateInfo;
  try {
    info = parseCertificate(Buffer.from(crt, 'base64').toString('utf8'));
  } catch (e) {
    return { error: `tls.crt does not parse: ${(e as Error).message}` };
  }
  const t = info.template;
  return {
    info,
    public: {
      subject: info.subject, issuer: info.issuer, serialNumber: info.serialNumber,
      notBefore: info.notBefore.toISOString(), notAfter: info.notAfter.toISOString(),
      signatureAlgorithm: info.signatureAlgorithm, publicKeyFingerprint: info.publicKeyFingerprint,
      dnsNames: t.dnsNames ?? [], ipAddresses: t.ipAddresses ?? [], uris: t.uris ?? [], emailAddresses: t.emailAddresses ?? [],
      isCA: info.isCA,
    },
  };
}
