// The temporary certificate as openssl sees it: the next key, the spec's names, a throwaway CA.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generatePrivateKey } from './keys.ts';
import { certificateMatchesKey, parseCertificate } from './parse.ts';
import { createTemporaryCertificate } from './temporary.ts';

test('a temporary certificate certifies the given key for the spec, signed by a P-521 cert-manager.local CA', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'RSA', size: 2048, encoding: 'PKCS1' });
  const notBefore = new Date('2026-03-01T10:00:00Z');
  const pem = await createTemporaryCertificate({
    template: { commonName: 'web', dnsNames: ['web.example.test', 'www.example.test'], subject: { organizations: ['Acme'] } },
    keyPem, notBefore, durationMs: 90 * 24 * 3_600_000,
  });
  assert.ok(certificateMatchesKey(pem, keyPem));
  const info = parseCertificate(pem);
  assert.equal(info.issuer, 'CN=cert-manager.local');
  assert.equal(info.notBefore.toISOString(), '2026-03-01T10:00:00.000Z');
  assert.equal(info.notAfter.toISOString(), '2026-05-30T10:00:00.000Z');
  assert.deepEqual(info.template.dnsNames, ['web.example.test', 'www.example.test']);
  assert.equal(info.template.subject?.serialNumber, '1234567890');
  assert.equal(info.isCA, false);
  assert.equal(info.selfSigned, false);

  const text = execFileSync('openssl', ['x509', '-noout', '-text', '-nameopt', 'RFC2253'], { input: pem }).toString();
  assert.match(text, /Issuer: CN=cert-manager\.local/);
  assert.match(text, /Subject: .*serialNumber=1234567890/);
  assert.match(text, /DNS:web\.example\.test, DNS:www\.example\.test/);
  // a P-521 key signs with SHA-512
  assert.match(text, /Signature Algorithm: ecdsa-with-SHA512/);
});

test('each temporary certificate has its own CA', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const o = { template: { dnsNames: ['a.example.test'] }, keyPem, notBefore: new Date(), durationMs: 3_600_000 };
  const [a, b] = [parseCertificate(await createTemporaryCertificate(o)), parseCertificate(await createTemporaryCertificate(o))];
  assert.notEqual(a.authorityKeyId, b.authorityKeyId);
});
