import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCSR, parseCSR } from './csr.ts';
import { generatePrivateKey } from './keys.ts';
import { certificateMismatches, csrMismatches } from './match.ts';
import { parseCertificate } from './parse.ts';
import { signCertificate } from './sign.ts';
import type { CertificateTemplate } from './template.ts';
import { canonicalIP } from './x509-fields.ts';

const DAY = 86400_000;
const spec: CertificateTemplate = {
  commonName: 'app.example.com', dnsNames: ['app.example.com', 'api.example.com'], ipAddresses: ['10.0.0.1'],
  subject: { organizations: ['Example'] }, usages: ['digital signature', 'key encipherment', 'server auth'],
};

async function issued(template: CertificateTemplate, keySize = 256) {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: keySize });
  const csrPem = await createCSR(template, keyPem);
  const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: 30 * DAY, selfSignKeyPem: keyPem });
  return { csr: parseCSR(csrPem), cert: parseCertificate(certPem) };
}

test('no mismatches for an unchanged spec, whatever the list order', async () => {
  const { csr, cert } = await issued(spec);
  const reordered = { ...spec, dnsNames: ['api.example.com', 'app.example.com'], usages: ['server auth', 'key encipherment', 'digital signature'] };
  assert.deepEqual(csrMismatches(csr, { ...reordered, keySpec: { algorithm: 'ECDSA' } }), []);
  assert.deepEqual(certificateMismatches(cert, { ...reordered, keySpec: { algorithm: 'ECDSA', size: 256 }, durationMs: 30 * DAY }), []);
});

test('an added DNS name is reported on the CSR and the certificate', async () => {
  const { csr, cert } = await issued(spec);
  const want = { ...spec, dnsNames: [...spec.dnsNames!, 'new.example.com'] };
  assert.deepEqual(csrMismatches(csr, want), ['spec.dnsNames']);
  assert.deepEqual(certificateMismatches(cert, want), ['spec.dnsNames']);
});

test('a changed key size or algorithm is reported', async () => {
  const { csr, cert } = await issued(spec);
  assert.deepEqual(csrMismatches(csr, { ...spec, keySpec: { algorithm: 'ECDSA', size: 384 } }), ['spec.privateKey.size']);
  assert.deepEqual(certificateMismatches(cert, { ...spec, keySpec: { algorithm: 'RSA' } }), ['spec.privateKey.algorithm']);
});

test('a different key is visible through the public key fingerprint', async () => {
  const a = await issued(spec);
  const b = await issued(spec);
  assert.notEqual(a.csr.publicKeyFingerprint, b.csr.publicKeyFingerprint);
  assert.equal(a.csr.publicKeyFingerprint, a.cert.publicKeyFingerprint);
});

test('CSR: subject, IPs, usages, isCA, otherNames and literalSubject changes are named by field path', async () => {
  const { csr } = await issued(spec);
  assert.deepEqual(csrMismatches(csr, {
    ...spec, commonName: 'other', ipAddresses: ['10.0.0.2'], subject: { organizations: ['Other'], countries: ['US'] },
    usages: ['client auth'], isCA: true,
  }, { isCA: false, usages: spec.usages }), ['spec.ipAddresses', 'spec.commonName', 'spec.subject.organizations', 'spec.subject.countries', 'spec.isCA', 'spec.usages']);
  // the CSR states no BasicConstraints (issue 15): isCA is the request's, when one is given
  assert.deepEqual(csrMismatches(csr, { ...spec, isCA: true }), ['spec.usages']);
  // given the request, usages are its spec.usages' too: the CSR's KU (no cert sign) is not read
  assert.deepEqual(csrMismatches(csr, { ...spec, isCA: true }, { isCA: true, usages: spec.usages }), []);
  assert.deepEqual(csrMismatches(csr, spec, { isCA: true, usages: spec.usages }), ['spec.isCA']);
  assert.deepEqual(csrMismatches(csr, { ...spec, otherNames: [{ oid: '1.2.3.4', utf8Value: 'x' }] }), ['spec.otherNames']);

  const lit = await issued({ literalSubject: 'CN=lit,O=Example', dnsNames: ['a.example.com'] });
  assert.deepEqual(csrMismatches(lit.csr, { literalSubject: 'CN=lit,O=Example', dnsNames: ['a.example.com'] }), []);
  assert.deepEqual(csrMismatches(lit.csr, { literalSubject: 'CN=lit,O=Other', dnsNames: ['a.example.com'] }), ['spec.literalSubject']);
});

test('CSR with its request: usages are the request\'s spec.usages against the Certificate\'s, as upstream\'s EqualKeyUsagesUnsorted', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const names = { dnsNames: ['c.example.com'] };
  const clientAuth = ['digital signature', 'key encipherment', 'client auth'];
  const noUsages = parseCSR(await createCSR({ ...names, usages: clientAuth, encodeUsagesInRequest: false }, keyPem));
  // what certsmith stored for encodeUsagesInRequest: false before: the default key usages
  const defaults = parseCSR(await createCSR(names, keyPem));
  const encoded = parseCSR(await createCSR({ ...names, usages: clientAuth }, keyPem));
  for (const csr of [noUsages, defaults, encoded]) {
    assert.deepEqual(csrMismatches(csr, { ...names, usages: clientAuth }, { usages: clientAuth }), []);
    // any order, repeats counted
    assert.deepEqual(csrMismatches(csr, { ...names, usages: [...clientAuth].reverse() }, { usages: clientAuth }), []);
    assert.deepEqual(csrMismatches(csr, { ...names, usages: [...clientAuth, 'client auth'] }, { usages: clientAuth }), ['spec.usages']);
    // a changed spec.usages is a changed request
    assert.deepEqual(csrMismatches(csr, { ...names, usages: ['digital signature', 'server auth'] }, { usages: clientAuth }), ['spec.usages']);
    // as written, without defaulting or synonyms (upstream compares the strings)
    assert.deepEqual(csrMismatches(csr, { ...names, usages: ['signing', 'key encipherment', 'client auth'] }, { usages: clientAuth }), ['spec.usages']);
    assert.deepEqual(csrMismatches(csr, { ...names, usages: ['digital signature', 'key encipherment'] }, {}), ['spec.usages']);
    assert.deepEqual(csrMismatches(csr, names, {}), []);
    assert.deepEqual(csrMismatches(csr, { ...names, usages: [] }, {}), []);
  }
  // without the request, a CSR's own usages are compared (after defaulting) when it carries any
  assert.deepEqual(csrMismatches(noUsages, { ...names, usages: clientAuth }), []);
  assert.deepEqual(csrMismatches(defaults, { ...names, usages: clientAuth }), ['spec.usages']);
  assert.deepEqual(csrMismatches(encoded, { ...names, usages: clientAuth }), []);
});

test('certificate: fuzzy CN/DNS set as upstream, isCA, duration', async () => {
  const { cert } = await issued(spec);
  // A CN that is also a DNS name may move between the two without a reissue.
  assert.deepEqual(certificateMismatches(cert, { ...spec, commonName: undefined }), []);
  assert.deepEqual(certificateMismatches(cert, { ...spec, commonName: 'elsewhere.example.com' }), ['spec.commonName']);
  assert.deepEqual(certificateMismatches(cert, { ...spec, isCA: true }), ['spec.isCA']);
  assert.deepEqual(certificateMismatches(cert, { ...spec, durationMs: 90 * DAY }), ['spec.duration']);
  assert.deepEqual(certificateMismatches(cert, { ...spec, uris: ['spiffe://x'], emailAddresses: ['a@b.c'] }), ['spec.uris', 'spec.emailAddresses']);
});

test('an IPv4-mapped IPv6 address in the spec matches the IPv4 address issued for it (Go\'s net.IP equality)', () => {
  assert.equal(canonicalIP('::ffff:1.2.3.4'), '1.2.3.4');
  assert.equal(canonicalIP('::FFFF:0102:0304'), '1.2.3.4');
  assert.equal(canonicalIP('::1.2.3.4'), '::102:304', 'only the mapped form is IPv4');
  assert.equal(canonicalIP('::ffff:1.2.3.0/120'), '::ffff:102:300/120', 'a range keeps its 16 bytes');
});
