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
    ['dnsNames surrogate', { dnsNames: ['x\ud800.example.test'] }, /dnsName "x\\ud800.example.test" is not well-formed Unicode/],
    ['dnsNames non-ASCII', { dnsNames: ['é.example.test'] }, /may only contain letters, digits.*xn-- form/],
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

test('names no certificate may carry are refused when the CSR is built and when one made elsewhere is signed', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  for (const [template, message] of [
    [{ dnsNames: ['ok.example.test', 'a\nb.example.test'] }, /dnsName "a\\nb.example.test" may only contain letters, digits/],
    [{ dnsNames: ['a\u0000b'] }, /may only contain/],
    [{ dnsNames: ['$(reboot).example.test'] }, /may only contain/],
    [{ dnsNames: ['"quoted".example.test'] }, /may only contain/],
    [{ commonName: 'x', emailAddresses: ['a@example.test\nX-Header: y'] }, /email address .* must not contain whitespace or control characters/],
    [{ commonName: 'x', uris: ['https://example.test/a b'] }, /URI .* must not contain whitespace/],
  ] as [CertificateTemplate, RegExp][]) {
    await assert.rejects(createCSR(template, key), message, JSON.stringify(template));
  }
  // Names accepted before this rule keep working: upper case, underscores, wildcards.
  await createCSR({ dnsNames: ['WWW.Example.test', '_acme.example.test', '*.example.test'] }, key);

  // A CSR built by another tool (openssl here) with a newline in a dNSName is not signed.
  const { execFileSync } = await import('node:child_process');
  const { writeFileSync, mkdtempSync, rmSync } = await import('node:fs');
  const dir = mkdtempSync('/tmp/csr-');
  writeFileSync(`${dir}/k.pem`, key);
  writeFileSync(`${dir}/ext.cnf`, '[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=DNS:ok.example.test,DNS:\\$(reboot).example.test\n');
  const foreign = execFileSync('openssl', ['req', '-new', '-key', `${dir}/k.pem`, '-subj', '/CN=x', '-config', `${dir}/ext.cnf`, '-reqexts', 'ext'], { encoding: 'utf8' });
  rmSync(dir, { recursive: true });
  await assert.rejects(signCertificate({ csrPem: foreign, notBefore: new Date(), durationMs: 3_600_000, selfSignKeyPem: key }), /the request asks for a name no certificate may carry: dnsName "\$\(reboot\)\.example\.test"/);
});

test('a CSR createCSR signed parses as the same CSR read cold; a changed one is still verified', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await createCSR({ commonName: 'fresh', dnsNames: ['fresh.example.test'] }, key);
  const fresh = parseCSR(pem);
  // the same DER in another string is parsed (and its signature checked) as any other CSR is
  const cold = parseCSR(pem.replace(/\n/g, '\r\n'));
  assert.deepEqual(fresh.template, cold.template);
  assert.equal(fresh.publicKeyFingerprint, cold.publicKeyFingerprint);
  assert.deepEqual(fresh.subjectDER, cold.subjectDER);
  assert.deepEqual(fresh.extensions, cold.extensions);
  // one bit of the signature flipped: the last byte of the DER is the signature's
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  der[der.length - 1] ^= 1;
  assert.throws(() => parseCSR(`-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`), /signature does not verify/);
});
