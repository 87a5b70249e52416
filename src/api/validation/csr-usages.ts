// A CertificateRequest's CSR held to its spec.isCA and spec.usages, as cert-manager's webhook does
// (v1.21, internal/apis/certmanager/validation/certificaterequest.go: pki.CertificateTemplateFromCSRPEM
// with CertificateTemplateValidateAndOverrideBasicConstraints and ...KeyUsages, pkg/util/pki/
// certificatetemplate.go). The signer takes isCA and usages from the spec (pki/sign.ts), so without
// this a CSR asking for client auth came out as a server certificate (issue 15).
//
// The CSR's BasicConstraints, KeyUsage bits and ExtendedKeyUsage OIDs come as pki/csr.ts's parse
// states them (the last of each extension, EKUs it does not know by OID), kept apart because
// upstream's rule compares key usages and extended key usages each on its own.
import type { CSRInfo } from '../../pki/csr.ts';
import { decodeUsages, encodeUsages, isKnownUsage } from '../../pki/usages.ts';

/**
 * EKUs Go's crypto/x509 knows (so cert-manager compares them) that have no cert-manager usage
 * name (cert-manager prints them as 'unknown'): Microsoft commercial and kernel code signing.
 * Any other OID cert-manager does not know goes to UnknownExtKeyUsage and is not compared.
 */
const NAMELESS_KNOWN_EKUS = new Set(['1.3.6.1.4.1.311.2.1.22', '1.3.6.1.4.1.311.61.1.1']);

/** An EKU's name as cert-manager prints it, or undefined for one it does not compare. */
function ekuName(o: string): string | undefined {
  const name = decodeUsages([], [o])[0];
  if (name !== o) return name;
  return NAMELESS_KNOWN_EKUS.has(o) ? 'unknown' : undefined;
}

/** Names in upstream's printKeyUsage form: `[ 'digital signature', 'key encipherment' ]`, `[]`. */
function printed(names: readonly string[]): string {
  return names.length === 0 ? '[]' : `[ ${names.map((n) => `'${n}'`).join(', ')} ]`;
}

const firstOfEach = (oids: readonly string[]) => [...new Set(oids)];

/**
 * The first way the CSR's extensions contradict spec.isCA or spec.usages, in upstream's words,
 * or undefined. A spec with a usage that is not a cert-manager usage is left alone: the schema
 * refuses it (as kube-apiserver does before any webhook sees the object).
 */
export function csrUsagesError(csr: Pick<CSRInfo, 'template' | 'hasBasicConstraints' | 'keyUsageBits' | 'extKeyUsageOids'>, isCA: boolean, usages: unknown): string | undefined {
  if (csr.hasBasicConstraints) {
    const csrIsCA = csr.template.isCA ?? false;
    if (csrIsCA !== isCA) return `encoded CSR error: IsCA ${csrIsCA} does not match expected value ${isCA}`;
  }

  // a CSR without KU and EKU leaves the usages to spec.usages
  if (!csr.keyUsageBits && !csr.extKeyUsageOids) return undefined;
  if (usages !== undefined && !(Array.isArray(usages) && usages.every((u) => typeof u === 'string' && isKnownUsage(u)))) return undefined;
  const expected = encodeUsages(usages as string[] | undefined, isCA);

  // No exception for a CSR with the default key usages and other spec.usages: certsmith's request
  // manager made one for encodeUsagesInRequest: false before it wrote no usages there (pki/csr.ts,
  // as GenerateCSR); cert-manager refuses it, and so does this. Such requests already stored are
  // not admitted again (the CSR is checked on create only) and still match their Certificate.
  const csrBits = csr.keyUsageBits ?? [];
  if (csrBits.join() !== expected.keyUsageBits.join()) {
    return `encoded CSR error: the KeyUsages ${printed(decodeUsages(csrBits, []))} do not match the expected KeyUsages ${printed(decodeUsages(expected.keyUsageBits, []))}`;
  }

  const csrEKUs = (csr.extKeyUsageOids ?? []).filter((o) => ekuName(o) !== undefined);
  // In order, as upstream (slices.Equal); a repeated EKU counts once on both sides, because
  // certsmith encodes each once in its own CSRs (pki/usages.ts) where spec.usages may repeat one
  // (or name it twice, as "email protection" and "s/mime").
  const got = firstOfEach(csrEKUs);
  if (got.join() !== expected.extKeyUsageOids.join()) {
    return `encoded CSR error: the ExtKeyUsages ${printed(got.map((o) => ekuName(o)!))} do not match the expected ExtKeyUsages ${printed(expected.extKeyUsageOids.map((o) => ekuName(o)!))}`;
  }
  return undefined;
}
