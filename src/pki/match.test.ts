import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCSR, parseCSR } from './csr.ts';
import { generatePrivateKey } from './keys.ts';
import { certificateMismatches, csrMismatches } from './match.ts';
import { parseCertificate } from './parse.ts';
import { signCertificate } from './sign.ts';
import type { CertificateTemplate } from './template.ts';

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
  }, false), ['spec.ipAddresses', 'spec.commonName', 'spec.subject.organizations', 'spec.subject.countries', 'spec.isCA', 'spec.usages']);
  // the CSR states no BasicConstraints (issue 15): isCA is the request's, when one is given
  assert.deepEqual(csrMismatches(csr, { ...spec, isCA: true }), ['spec.usages']);
  assert.deepEqual(csrMismatches(csr, { ...spec, isCA: true }, true), ['spec.usages']);
  assert.deepEqual(csrMismatches(csr, spec, true), ['spec.isCA']);
  assert.deepEqual(csrMismatches(csr, { ...spec, otherNames: [{ oid: '1.2.3.4', utf8Value: 'x' }] }), ['spec.otherNames']);

  const lit = await issued({ literalSubject: 'CN=lit,O=Example', dnsNames: ['a.example.com'] });
  assert.deepEqual(csrMismatches(lit.csr, { literalSubject: 'CN=lit,O=Example', dnsNames: ['a.example.com'] }), []);
  assert.deepEqual(csrMismatches(lit.csr, { literalSubject: 'CN=lit,O=Other', dnsNames: ['a.example.com'] }), ['spec.literalSubject']);
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
