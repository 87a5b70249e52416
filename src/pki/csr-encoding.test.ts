// Issue 12, finding 2: strings the CSR cannot carry are refused, never replaced by U+FFFD, so a
// request always says exactly what its Certificate asked for (or is not made at all).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCSR, parseCSR } from './csr.ts';
import { generatePrivateKey } from './keys.ts';
import type { CertificateTemplate } from './template.ts';
import { signCertificate } from './sign.ts';
import { parseCertificate } from './parse.ts';

test('createCSR refuses strings that UTF8String or IA5String cannot encode, naming the value', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const cases: [string, CertificateTemplate, RegExp][] = [
    ['commonName', { commonName: 'bad\ud800name' }, /"bad\\ud800name" cannot be encoded as a UTF8String: not well-formed Unicode/],
    ['organizations', { commonName: 'x', subject: { organizations: ['Acme\ud800'] } }, /not well-formed Unicode/],
    ['serialNumber', { commonName: 'x', subject: { serialNumber: '\udc00' } }, /"\\udc00" cannot be encoded/],
    ['dnsNames surrogate', { dnsNames: ['x\ud800.example.test'] }, /cannot be encoded as an IA5String: not well-formed Unicode/],
    ['dnsNames non-ASCII', { dnsNames: ['é.example.test'] }, /cannot be encoded as an IA5String: only ASCII/],
    ['emailAddresses', { emailAddresses: ['ü@example.test'] }, /IA5String/],
    ['uris', { uris: ['https://example.test/\ud800'] }, /IA5String/],
    ['otherNames', { otherNames: [{ oid: '1.2.3', utf8Value: '\ud800' }] }, /UTF8String/],
    ['literalSubject', { literalSubject: 'CN=a\ud800' }, /literalSubject: not well-formed Unicode/],
  ];
  for (const [what, template, message] of cases) {
    await assert.rejects(createCSR(template, key), message, what);
  }
});

test('well-formed non-ASCII subjects (surrogate pairs included) still round-trip exactly', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csr = parseCSR(await createCSR({ commonName: 'café 😀', subject: { organizations: ['Ünïcode'] }, dnsNames: ['a.example.test'] }, key));
  assert.equal(csr.template.commonName, 'café 😀');
  assert.deepEqual(csr.template.subject?.organizations, ['Ünïcode']);
  assert.deepEqual(csr.template.dnsNames, ['a.example.test']);
});

test('a notAfter past 9999-12-31T23:59:59Z is refused with the reason, not encoded malformed', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ commonName: 'far' }, key);
  const notBefore = new Date('2026-01-01T00:00:00Z');
  const toEnd = Date.UTC(9999, 11, 31, 23, 59, 59) - notBefore.getTime();
  const cert = await signCertificate({ csrPem, notBefore, durationMs: toEnd, selfSignKeyPem: key });
  assert.equal(parseCertificate(cert).notAfter.toISOString(), '9999-12-31T23:59:59.000Z');
  for (const durationMs of [toEnd + 1000, 99999999999999 * 3_600_000]) {
    await assert.rejects(signCertificate({ csrPem, notBefore, durationMs, selfSignKeyPem: key }), /notAfter would be after 9999-12-31T23:59:59Z/);
  }
});
