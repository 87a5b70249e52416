// CSRs built without createCSR's checks, for tests:
// - legacyCSR: exactly as certsmith's createCSR built a request before issue 15, with a
//   BasicConstraints extension (critical, CA:FALSE unless isCA, maxPathLen when given) in every
//   request. Such requests are stored in clusters that upgrade: they must still match and sign.
// - uncheckedCSR: what another tool could send, e.g. a request that names nobody.
import { bitString, integer, oid, sequence, setOf, tlv } from '../der.ts';
import { requestExtensions } from '../csr.ts';
import { parsePrivateKey } from '../keys.ts';
import { encodePEM } from '../pem.ts';
import { signatureAlgorithmFor, signTBS } from '../signature.ts';
import { spkiDER } from '../spki.ts';
import type { CertificateTemplate } from '../template.ts';
import { basicConstraintsExtension, EXTENSION_OID, encodeExtensions, subjectNameFromTemplate, type Extension } from '../x509-fields.ts';

const EXTENSION_REQUEST_OID = '1.2.840.113549.1.9.14';
const EMPTY_NAME_LENGTH = 2;

async function build(template: CertificateTemplate, keyPem: string, basicConstraints?: Extension): Promise<string> {
  const key = parsePrivateKey(keyPem);
  const subject = subjectNameFromTemplate(template);
  const exts = requestExtensions(template, subject.length === EMPTY_NAME_LENGTH);
  if (basicConstraints) {
    // the old order: SAN, KU, EKU, BasicConstraints, NameConstraints
    const nc = exts.findIndex((e) => e.id === EXTENSION_OID.nameConstraints);
    exts.splice(nc < 0 ? exts.length : nc, 0, basicConstraints);
  }
  const extensionRequest = sequence(oid(EXTENSION_REQUEST_OID), setOf([encodeExtensions(exts)]));
  const info = sequence(integer(0), subject, spkiDER(key), tlv(0xa0, extensionRequest));
  const signature = await signTBS(key, info);
  return encodePEM('CERTIFICATE REQUEST', sequence(info, signatureAlgorithmFor(key), bitString(signature)));
}

/** `basicConstraints`: the CA flag and path length written, when they should differ from the template's. */
export function legacyCSR(template: CertificateTemplate, keyPem: string, basicConstraints?: { isCA: boolean; maxPathLen?: number }): Promise<string> {
  const bc = basicConstraints ?? { isCA: template.isCA ?? false, maxPathLen: template.maxPathLen };
  return build(template, keyPem, basicConstraintsExtension(bc.isCA, bc.maxPathLen));
}

/** A request as createCSR builds it, without its refusal of a template that names nobody. */
export function uncheckedCSR(template: CertificateTemplate, keyPem: string): Promise<string> {
  return build(template, keyPem);
}
