// A CertificateRequest's CSR held to its spec.isCA and spec.usages, as cert-manager's webhook does
// (v1.21, internal/apis/certmanager/validation/certificaterequest.go: pki.CertificateTemplateFromCSRPEM
// with CertificateTemplateValidateAndOverrideBasicConstraints and ...KeyUsages, pkg/util/pki/
// certificatetemplate.go). The signer takes isCA and usages from the spec (pki/sign.ts), so without
// this a CSR asking for client auth came out as a server certificate (issue 15).
//
// The CSR's BasicConstraints, KeyUsage and ExtendedKeyUsage are read here from the extensions
// pki/csr.ts has already decoded and checked: pki's parse names EKUs it does not know by OID and
// does not say which usages came from which extension, and upstream's rule needs both.
import { contents, decodeBoolean, decodeNamedBits, decodeOID, readSingle, TAG } from '../../pki/der.ts';
import { decodeUsages, encodeUsages, isKnownUsage } from '../../pki/usages.ts';
import type { Extension } from '../../pki/x509-fields.ts';

const OID = { keyUsage: '2.5.29.15', extKeyUsage: '2.5.29.37', basicConstraints: '2.5.29.19' } as const;

/**
 * EKUs Go's crypto/x509 knows (so cert-manager compares them) that have no cert-manager usage
 * name (cert-manager prints them as 'unknown'): Microsoft commercial and kernel code signing.
 * Any other OID cert-manager does not know goes to UnknownExtKeyUsage and is not compared.
 */
const NAMELESS_KNOWN_EKUS = new Set(['1.3.6.1.4.1.311.2.1.22', '1.3.6.1.4.1.311.61.1.1']);

/** The last extension with this id, as Go's template building keeps the last one it reads. */
function lastExtension(exts: readonly Extension[], id: string): Extension | undefined {
  for (let i = exts.length - 1; i >= 0; i--) if (exts[i].id === id) return exts[i];
  return undefined;
}

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
export function csrUsagesError(extensions: readonly Extension[], isCA: boolean, usages: unknown): string | undefined {
  const bc = lastExtension(extensions, OID.basicConstraints);
  if (bc) {
    const cA = contents(readSingle(bc.value, TAG.SEQUENCE, 'basicConstraints'), 'basicConstraints').optional(TAG.BOOLEAN);
    const csrIsCA = cA ? decodeBoolean(cA) : false;
    if (csrIsCA !== isCA) return `encoded CSR error: IsCA ${csrIsCA} does not match expected value ${isCA}`;
  }

  const ku = lastExtension(extensions, OID.keyUsage);
  const eku = lastExtension(extensions, OID.extKeyUsage);
  // a CSR without KU and EKU leaves the usages to spec.usages
  if (!ku && !eku) return undefined;
  if (usages !== undefined && !(Array.isArray(usages) && usages.every((u) => typeof u === 'string' && isKnownUsage(u)))) return undefined;
  const expected = encodeUsages(usages as string[] | undefined, isCA);

  // No exception for a CSR with the default key usages and other spec.usages: certsmith's request
  // manager made one for encodeUsagesInRequest: false before it wrote no usages there (pki/csr.ts,
  // as GenerateCSR); cert-manager refuses it, and so does this. Such requests already stored are
  // not admitted again (the CSR is checked on create only) and still match their Certificate.
  const csrBits = ku ? decodeNamedBits(readSingle(ku.value, TAG.BIT_STRING, 'keyUsage')).filter((b) => b < 9) : [];
  if (csrBits.join() !== expected.keyUsageBits.join()) {
    return `encoded CSR error: the KeyUsages ${printed(decodeUsages(csrBits, []))} do not match the expected KeyUsages ${printed(decodeUsages(expected.keyUsageBits, []))}`;
  }

  const csrEKUs: string[] = [];
  if (eku) {
    const r = contents(readSingle(eku.value, TAG.SEQUENCE, 'extKeyUsage'), 'extKeyUsage');
    while (!r.done) {
      const o = decodeOID(r.expect(TAG.OID, 'KeyPurposeId'));
      if (ekuName(o) !== undefined) csrEKUs.push(o);
    }
  }
  // In order, as upstream (slices.Equal); a repeated EKU counts once on both sides, because
  // certsmith encodes each once in its own CSRs (pki/usages.ts) where spec.usages may repeat one
  // (or name it twice, as "email protection" and "s/mime").
  const got = firstOfEach(csrEKUs);
  if (got.join() !== expected.extKeyUsageOids.join()) {
    return `encoded CSR error: the ExtKeyUsages ${printed(got.map((o) => ekuName(o)!))} do not match the expected ExtKeyUsages ${printed(expected.extKeyUsageOids.map((o) => ekuName(o)!))}`;
  }
  return undefined;
}
