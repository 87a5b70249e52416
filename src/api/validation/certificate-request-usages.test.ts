// A CertificateRequest's CSR against its spec.usages and spec.isCA at admission (issue 15), as
// cert-manager v1.21's webhook checks them (internal/apis/certmanager/validation/
// certificaterequest.go: KeyUsagesForCertificateOrCertificateRequest, then
// CertificateTemplateFromCSRPEM with the BasicConstraints and KeyUsages validators):
//  - expected key usages are spec.usages (the defaults when empty), plus cert sign for isCA;
//  - the CSR is held to them only when it carries a KeyUsage or ExtendedKeyUsage extension;
//    then its KU bits must equal the expected ones, and its known EKUs the expected EKUs in order;
//  - a CSR with BasicConstraints must agree with spec.isCA;
//  - only on create: the spec cannot change afterwards.
// And every request certsmith's own request manager makes passes, with no exception to upstream:
// for encodeUsagesInRequest: false its CSR carries no usages at all (as GenerateCSR's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as R from '../resources.ts';
import type { KubeObject } from '../meta.ts';
import type { CertificateSpec } from '../types.ts';
import { validate, fieldErrorText } from '../validation.ts';
import { createCSR, parseCSR } from '../../pki/csr.ts';
import { generatePrivateKey, parsePrivateKey } from '../../pki/keys.ts';
import { bitString, boolean, implicit, integer, namedBits, oid, sequence, setOf, tlv } from '../../pki/der.ts';
import { encodeExtensions, type Extension } from '../../pki/x509-fields.ts';
import { spkiDER } from '../../pki/spki.ts';
import { signatureAlgorithmFor, signTBS } from '../../pki/signature.ts';
import { encodePEM } from '../../pki/pem.ts';
import { requestSpecOf, templateOf } from '../../shared/certificate-template.ts';
import { reviewAdmission } from '../../webhook/admission-review.ts';

const KU = { digitalSignature: 0, contentCommitment: 1, keyEncipherment: 2, dataEncipherment: 3, keyAgreement: 4, certSign: 5, crlSign: 6 } as const;
const EKU = {
  any: '2.5.29.37.0', serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2', codeSigning: '1.3.6.1.5.5.7.3.3',
  emailProtection: '1.3.6.1.5.5.7.3.4', msCommercialCodeSigning: '1.3.6.1.4.1.311.2.1.22', private: '1.2.3.4.5',
} as const;

interface CSRParts { ku?: number[]; eku?: string[]; basicConstraints?: { isCA: boolean } }

let keyPem: Promise<string> | undefined;
const key = () => (keyPem ??= generatePrivateKey({ algorithm: 'ECDSA', size: 256 }));

/** A CSR as any tool could make it: exactly the KU/EKU/BasicConstraints extensions asked for. */
async function csrWith(parts: CSRParts): Promise<string> {
  const k = parsePrivateKey(await key());
  const exts: Extension[] = [{ id: '2.5.29.17', critical: true, value: sequence(implicit(2, Buffer.from('a.example'))) }];
  if (parts.ku) exts.push({ id: '2.5.29.15', critical: true, value: namedBits(parts.ku) });
  if (parts.eku) exts.push({ id: '2.5.29.37', critical: false, value: sequence(...parts.eku.map(oid)) });
  if (parts.basicConstraints) exts.push({ id: '2.5.29.19', critical: true, value: parts.basicConstraints.isCA ? sequence(boolean(true)) : sequence() });
  const extensionRequest = sequence(oid('1.2.840.113549.1.9.14'), setOf([encodeExtensions(exts)]));
  const info = sequence(integer(0), sequence(), spkiDER(k), tlv(0xa0, extensionRequest));
  return encodePEM('CERTIFICATE REQUEST', sequence(info, signatureAlgorithmFor(k), bitString(await signTBS(k, info))));
}

function request(csrPem: string, spec: { usages?: string[]; isCA?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'cr', namespace: 'ns' },
    spec: { request: Buffer.from(csrPem).toString('base64'), issuerRef: { name: 'ca' }, ...spec },
  };
}

const errorsOf = (cr: KubeObject, old?: KubeObject) => validate(R.CertificateRequest, cr, old).map(fieldErrorText);

const DEFAULT_KU = [KU.digitalSignature, KU.keyEncipherment];

interface Row { name: string; csr: CSRParts; spec: { usages?: string[]; isCA?: boolean }; error?: string }

const rows: Row[] = [
  // refused
  { name: 'the issue\'s example: EKU client auth in the CSR, server auth in spec.usages',
    csr: { ku: [KU.digitalSignature], eku: [EKU.clientAuth] }, spec: { usages: ['digital signature', 'server auth'] },
    error: "encoded CSR error: the ExtKeyUsages [ 'client auth' ] do not match the expected ExtKeyUsages [ 'server auth' ]" },
  { name: 'an EKU-only CSR is held to the key usage bits too',
    csr: { eku: [EKU.clientAuth] }, spec: { usages: ['digital signature', 'server auth'] },
    error: "encoded CSR error: the KeyUsages [] do not match the expected KeyUsages [ 'digital signature' ]" },
  { name: 'the CSR asks for an EKU spec.usages leaves out',
    csr: { ku: DEFAULT_KU, eku: [EKU.serverAuth, EKU.clientAuth] }, spec: { usages: ['digital signature', 'key encipherment', 'server auth'] },
    error: "encoded CSR error: the ExtKeyUsages [ 'server auth', 'client auth' ] do not match the expected ExtKeyUsages [ 'server auth' ]" },
  { name: 'spec.usages asks for a key usage the CSR leaves out',
    csr: { ku: [KU.digitalSignature] }, spec: { usages: ['digital signature', 'key encipherment'] },
    error: "encoded CSR error: the KeyUsages [ 'digital signature' ] do not match the expected KeyUsages [ 'digital signature', 'key encipherment' ]" },
  { name: 'no spec.usages means the defaults, and they are compared too',
    csr: { ku: [KU.digitalSignature, KU.keyEncipherment, KU.crlSign] }, spec: {},
    error: "encoded CSR error: the KeyUsages [ 'digital signature', 'key encipherment', 'crl sign' ] do not match the expected KeyUsages [ 'digital signature', 'key encipherment' ]" },
  { name: 'isCA expects cert sign',
    csr: { ku: DEFAULT_KU }, spec: { isCA: true },
    error: "encoded CSR error: the KeyUsages [ 'digital signature', 'key encipherment' ] do not match the expected KeyUsages [ 'digital signature', 'key encipherment', 'cert sign' ]" },
  { name: 'cert sign without isCA',
    csr: { ku: [...DEFAULT_KU, KU.certSign] }, spec: {},
    error: "encoded CSR error: the KeyUsages [ 'digital signature', 'key encipherment', 'cert sign' ] do not match the expected KeyUsages [ 'digital signature', 'key encipherment' ]" },
  { name: 'extended key usages in another order (upstream compares the lists in order)',
    csr: { ku: DEFAULT_KU, eku: [EKU.clientAuth, EKU.serverAuth] }, spec: { usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'] },
    error: "encoded CSR error: the ExtKeyUsages [ 'client auth', 'server auth' ] do not match the expected ExtKeyUsages [ 'server auth', 'client auth' ]" },
  { name: 'a known EKU with no cert-manager name (Microsoft commercial code signing)',
    csr: { ku: DEFAULT_KU, eku: [EKU.codeSigning, EKU.msCommercialCodeSigning] }, spec: { usages: ['digital signature', 'key encipherment', 'code signing'] },
    error: "encoded CSR error: the ExtKeyUsages [ 'code signing', 'unknown' ] do not match the expected ExtKeyUsages [ 'code signing' ]" },
  { name: 'BasicConstraints CA:TRUE without spec.isCA',
    csr: { basicConstraints: { isCA: true } }, spec: {},
    error: 'encoded CSR error: IsCA true does not match expected value false' },
  { name: 'BasicConstraints CA:FALSE with spec.isCA',
    csr: { ku: [...DEFAULT_KU, KU.certSign], basicConstraints: { isCA: false } }, spec: { isCA: true },
    error: 'encoded CSR error: IsCA false does not match expected value true' },
  { name: 'BasicConstraints is checked before the usages',
    csr: { ku: [KU.crlSign], basicConstraints: { isCA: true } }, spec: {},
    error: 'encoded CSR error: IsCA true does not match expected value false' },

  // accepted
  { name: 'the same usages, key usages in any order', csr: { ku: DEFAULT_KU, eku: [EKU.serverAuth] }, spec: { usages: ['key encipherment', 'server auth', 'digital signature'] } },
  { name: '"signing" is digital signature', csr: { ku: DEFAULT_KU }, spec: { usages: ['signing', 'key encipherment'] } },
  { name: '"signing" and "digital signature" together', csr: { ku: [KU.digitalSignature] }, spec: { usages: ['signing', 'digital signature'] } },
  { name: '"s/mime" is email protection', csr: { ku: [KU.digitalSignature], eku: [EKU.emailProtection] }, spec: { usages: ['digital signature', 's/mime'] } },
  { name: 'a CSR without KU or EKU leaves usages to spec.usages', csr: {}, spec: { usages: ['client auth', 'code signing'] } },
  { name: 'a CSR without KU or EKU, isCA', csr: { basicConstraints: { isCA: true } }, spec: { isCA: true } },
  { name: 'no spec.usages and a CSR with the defaults', csr: { ku: DEFAULT_KU }, spec: {} },
  { name: 'isCA and cert sign', csr: { ku: [...DEFAULT_KU, KU.certSign] }, spec: { isCA: true } },
  { name: 'isCA and cert sign named in spec.usages as well', csr: { ku: [KU.certSign, KU.crlSign] }, spec: { isCA: true, usages: ['cert sign', 'crl sign'] } },
  { name: 'EKU OIDs cert-manager does not know are not compared', csr: { ku: DEFAULT_KU, eku: [EKU.private, EKU.serverAuth] }, spec: { usages: ['digital signature', 'key encipherment', 'server auth'] } },
  { name: 'the same EKU twice (certsmith folds repeats; its CSRs carry each once)', csr: { ku: DEFAULT_KU, eku: [EKU.emailProtection] }, spec: { usages: ['digital signature', 'key encipherment', 'email protection', 's/mime'] } },
  { name: 'an empty EKU extension and no EKU in spec.usages', csr: { ku: DEFAULT_KU, eku: [] }, spec: {} },
  { name: 'any', csr: { ku: [KU.digitalSignature], eku: [EKU.any] }, spec: { usages: ['digital signature', 'any'] } },
  // certsmith's request manager made this CSR for encodeUsagesInRequest: false before it wrote no
  // usages there; upstream refuses it, and certsmith no longer excepts it
  { name: 'exactly the default key usages and no EKU, spec.usages other than the defaults (before: certsmith\'s encodeUsagesInRequest: false CSR)',
    csr: { ku: DEFAULT_KU }, spec: { usages: ['client auth'] },
    error: "encoded CSR error: the KeyUsages [ 'digital signature', 'key encipherment' ] do not match the expected KeyUsages []" },
  { name: 'the same with the default key usages among spec.usages: the EKU is missing',
    csr: { ku: DEFAULT_KU }, spec: { usages: ['digital signature', 'key encipherment', 'client auth'] },
    error: "encoded CSR error: the ExtKeyUsages [] do not match the expected ExtKeyUsages [ 'client auth' ]" },
  { name: 'the same for a CA (defaults and cert sign)',
    csr: { ku: [...DEFAULT_KU, KU.certSign] }, spec: { isCA: true, usages: ['crl sign'] },
    error: "encoded CSR error: the KeyUsages [ 'digital signature', 'key encipherment', 'cert sign' ] do not match the expected KeyUsages [ 'cert sign', 'crl sign' ]" },
  { name: 'a CSR with the default key usages and an EKU spec.usages leaves out',
    csr: { ku: DEFAULT_KU, eku: [EKU.clientAuth] }, spec: { usages: ['digital signature', 'key encipherment'] },
    error: "encoded CSR error: the ExtKeyUsages [ 'client auth' ] do not match the expected ExtKeyUsages []" },
];

for (const r of rows) {
  test(`CSR usages at admission: ${r.error ? 'refused' : 'accepted'}: ${r.name}`, async () => {
    const errors = errorsOf(request(await csrWith(r.csr), r.spec));
    assert.deepEqual(errors, r.error ? [`spec.request: Invalid value: "<csr>": ${r.error}`] : []);
  });
}

test('CSR usages at admission: an unknown usage is the schema\'s error alone, the CSR is not compared with it', async () => {
  const errors = errorsOf(request(await csrWith({ ku: DEFAULT_KU }), { usages: ['digital signature', 'nope'] }));
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.match(errors[0], /^spec\.usages\[1\]: Unsupported value: "nope"/);
});

test('CSR usages at admission: `certsmith webhook` refuses the issue\'s example with 422, naming spec.request', async () => {
  const cr = request(await csrWith({ ku: [KU.digitalSignature], eku: [EKU.clientAuth] }), { usages: ['digital signature', 'server auth'] });
  const a = reviewAdmission('validate', {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: { uid: 'u1', kind: { group: 'cert-manager.io', version: 'v1', kind: 'CertificateRequest' }, operation: 'CREATE', object: cr },
  });
  assert.equal(a.httpStatus, 200);
  if (a.httpStatus !== 200) return;
  assert.equal(a.review.response.allowed, false);
  assert.equal(a.review.response.status?.code, 422);
  assert.equal(a.review.response.status?.message,
    `CertificateRequest.cert-manager.io "cr" is invalid: spec.request: Invalid value: "<csr>": encoded CSR error: the ExtKeyUsages [ 'client auth' ] do not match the expected ExtKeyUsages [ 'server auth' ]`);
});

test('CSR usages at admission: only on create, as upstream (the spec cannot change after it)', async () => {
  const created = request(await csrWith({ ku: DEFAULT_KU, eku: [EKU.clientAuth] }), { usages: ['server auth'] });
  assert.equal(errorsOf(created).length, 1);
  // a request stored before this check existed can still have its status written
  const approved = { ...created, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'r', message: 'm' }] } };
  assert.deepEqual(errorsOf(approved, created), []);
});

test('CSR usages at admission: a request stored by earlier certsmith for encodeUsagesInRequest: false (default key usages in the CSR) is refused on create as upstream, its status writes pass', async () => {
  const stored = request(await csrWith({ ku: DEFAULT_KU }), { usages: ['digital signature', 'key encipherment', 'client auth'] });
  assert.deepEqual(errorsOf(stored), [
    `spec.request: Invalid value: "<csr>": encoded CSR error: the ExtKeyUsages [] do not match the expected ExtKeyUsages [ 'client auth' ]`,
  ]);
  const approved = { ...stored, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'r', message: 'm' }] } };
  assert.deepEqual(errorsOf(approved, stored), []);
  const issued = { ...approved, status: { ...approved.status, certificate: Buffer.from('x').toString('base64') } };
  assert.deepEqual(errorsOf(issued, approved), []);
});

test('CSR usages at admission: certsmith\'s CSR for encodeUsagesInRequest: false carries no KeyUsage or ExtendedKeyUsage, as GenerateCSR\'s', async () => {
  for (const extra of [{}, { usages: ['digital signature', 'key encipherment', 'client auth'] }, { isCA: true, usages: ['crl sign'] }]) {
    const spec = { secretName: 's', issuerRef: { name: 'ca' }, dnsNames: ['a.example'], encodeUsagesInRequest: false, ...extra } as CertificateSpec;
    const csr = parseCSR(await createCSR(templateOf(spec), await key()));
    assert.deepEqual(csr.extensions.map((e) => e.id), ['2.5.29.17'], JSON.stringify(extra));
    assert.equal(csr.hasUsages, false);
  }
});

/** Certificate specs as users write them; each is turned into a request the way the request manager does. */
const certificates: Array<[string, Partial<CertificateSpec>]> = [
  ['default usages', {}],
  ['the defaults spelled out', { usages: ['digital signature', 'key encipherment'] }],
  ['server and client auth', { usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'] }],
  ['client auth only', { usages: ['client auth'] }],
  ['EKUs before KUs', { usages: ['client auth', 'server auth', 'key agreement', 'signing'] }],
  ['"signing" and "digital signature"', { usages: ['signing', 'digital signature', 'server auth'] }],
  ['"s/mime" and "email protection"', { usages: ['s/mime', 'email protection', 'digital signature'] }],
  ['a repeated usage', { usages: ['server auth', 'server auth', 'digital signature', 'digital signature'] }],
  ['every usage', { usages: ['signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc'] }],
  ['isCA', { isCA: true }],
  ['isCA with usages', { isCA: true, usages: ['cert sign', 'crl sign', 'digital signature'] }],
  ['isCA with usages that leave out cert sign', { isCA: true, usages: ['digital signature', 'server auth'] }],
  ['encodeUsagesInRequest: false', { encodeUsagesInRequest: false }],
  ['encodeUsagesInRequest: false with other usages', { encodeUsagesInRequest: false, usages: ['digital signature', 'server auth'] }],
  ['encodeUsagesInRequest: false, isCA, usages', { encodeUsagesInRequest: false, isCA: true, usages: ['crl sign', 'client auth'] }],
];

for (const [name, extra] of certificates) {
  test(`CSR usages at admission: the request manager's own request passes: ${name}`, async () => {
    const spec = { secretName: 's', issuerRef: { name: 'ca' }, commonName: 'a.example', dnsNames: ['a.example'], ...extra } as CertificateSpec;
    const csr = await createCSR(templateOf(spec), await key());
    const cr: KubeObject = { apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'c-1', namespace: 'ns' }, spec: requestSpecOf(spec, csr) };
    assert.deepEqual(errorsOf(cr), []);
  });
}
