// The CA issuer's crlDistributionPoints, ocspServers and issuingCertificateURLs reach the
// certificates it signs (issue 15: they were accepted and silently dropped). Checked with
// openssl's own reading of the certificate and with certsmith's DER parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { signSelfSigned, signWithCA } from './signers.ts';
import { DERReader, TAG, contents, decodeOID, readSingle } from '../../pki/der.ts';
import { decodeCertificate } from '../../pki/parse.ts';
import { certificateBlocks } from '../../pki/pem.ts';
import { NOW, caKeyPair, certificateRequest, csr, key, secretFor } from '../testing/fixtures.ts';

const URLS = {
  crlDistributionPoints: ['http://crl.example.test/ca.crl', 'http://crl2.example.test/ca.crl'],
  ocspServers: ['http://ocsp.example.test'],
  issuingCertificateURLs: ['http://ca.example.test/ca.der'],
};

async function issue(urls?: typeof URLS): Promise<string> {
  const ca = await caKeyPair('ca');
  const cr = certificateRequest({ csrPem: await csr({ dnsNames: ['a.example.test'] }, await key('main')) });
  const out = await signWithCA(cr, secretFor({ name: 'ca-keypair', keyPem: ca.keyPem, certPem: ca.certPem }), 'ca-keypair', NOW, urls);
  assert.equal(out.kind, 'issued', JSON.stringify(out));
  return (out as { certificatePem: string }).certificatePem;
}

/** Every URI GeneralName under an extension, in order, read with certsmith's DER reader. */
function urisIn(der: Buffer): string[] {
  const found: string[] = [];
  const walk = (buf: Buffer) => {
    const r = new DERReader(buf);
    while (!r.done) {
      const el = r.read();
      if (el.tag === 0x86) found.push(el.value.toString('latin1'));
      else if (el.tag & 0x20) walk(el.value);
    }
  };
  walk(der);
  return found;
}

test('CA issuer URLs: openssl reads CRL DP, OCSP and CA Issuers from the issued certificate', async () => {
  const pem = await issue(URLS);
  const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: pem, encoding: 'utf8' });
  assert.match(text, /X509v3 CRL Distribution Points:\s*\n\s*Full Name:\s*\n\s*URI:http:\/\/crl\.example\.test\/ca\.crl\s*\n\s*Full Name:\s*\n\s*URI:http:\/\/crl2\.example\.test\/ca\.crl/);
  assert.match(text, /Authority Information Access:\s*\n\s*OCSP - URI:http:\/\/ocsp\.example\.test\s*\n\s*CA Issuers - URI:http:\/\/ca\.example\.test\/ca\.der/);
});

test('CA issuer URLs: certsmith\'s parser finds the same extensions and URLs', async () => {
  const cert = decodeCertificate(certificateBlocks(await issue(URLS))[0].der);
  const crl = cert.extensions.find((e) => e.id === '2.5.29.31');
  const aia = cert.extensions.find((e) => e.id === '1.3.6.1.5.5.7.1.1');
  assert.ok(crl && !crl.critical, 'CRL Distribution Points present, not critical');
  assert.ok(aia && !aia.critical, 'Authority Information Access present, not critical');
  assert.deepEqual(urisIn(crl.value), URLS.crlDistributionPoints);
  const methods: [string, string][] = [];
  const r = contents(readSingle(aia.value, TAG.SEQUENCE, 'AIA'), 'AIA');
  while (!r.done) {
    const ad = contents(r.expect(TAG.SEQUENCE, 'AccessDescription'), 'AccessDescription');
    methods.push([decodeOID(ad.expect(TAG.OID, 'accessMethod')), ad.read().value.toString('latin1')]);
  }
  assert.deepEqual(methods, [['1.3.6.1.5.5.7.48.1', 'http://ocsp.example.test'], ['1.3.6.1.5.5.7.48.2', 'http://ca.example.test/ca.der']]);
});

test('CA issuer without URLs: no CRL DP or AIA extension is written', async () => {
  const cert = decodeCertificate(certificateBlocks(await issue())[0].der);
  assert.deepEqual(cert.extensions.filter((e) => e.id === '2.5.29.31' || e.id === '1.3.6.1.5.5.7.1.1'), []);
});

test('SelfSigned issuer crlDistributionPoints reach the certificate it signs, as cert-manager\'s selfsigned.go sets them', async () => {
  const keyPem = await key('self');
  const cr = certificateRequest({ csrPem: await csr({ dnsNames: ['s.example.test'] }, keyPem), annotations: { 'cert-manager.io/private-key-secret-name': 's-key' } });
  const out = await signSelfSigned(cr, secretFor({ name: 's-key', keyPem }), NOW, { crlDistributionPoints: ['http://crl.ss.example.test/y.crl'] });
  assert.equal(out.kind, 'issued', JSON.stringify(out));
  const pem = (out as { certificatePem: string }).certificatePem;
  const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: pem, encoding: 'utf8' });
  assert.match(text, /X509v3 CRL Distribution Points:\s*\n\s*Full Name:\s*\n\s*URI:http:\/\/crl\.ss\.example\.test\/y\.crl/);
  assert.doesNotMatch(text, /Authority Information Access/);
});

test('a CA Secret with a private key among its certificates signs nothing: the chain goes into every issued Secret', async () => {
  const ca = await caKeyPair('ca');
  const cr = certificateRequest({ csrPem: await csr({ dnsNames: ['a.example.test'] }, await key('main')) });
  for (const [secret, where] of [
    [secretFor({ name: 'ca-keypair', keyPem: ca.keyPem, certPem: ca.certPem + ca.keyPem }), 'tls.crt'],
    [secretFor({ name: 'ca-keypair', keyPem: ca.keyPem, certPem: ca.certPem, caPem: ca.certPem + ca.keyPem }), 'ca.crt'],
  ] as const) {
    const out = await signWithCA(cr, secret, 'ca-keypair', NOW);
    assert.equal(out.kind, 'pending', JSON.stringify(out));
    assert.match((out as { message: string }).message, new RegExp(`^Failed to parse signing CA keypair from secret ca-keypair: error parsing X\\.509 certificate: ${where.replace('.', '\\.')} holds a "[A-Z ]*PRIVATE KEY" PEM block, not a certificate$`));
    assert.doesNotMatch(JSON.stringify(out), /MII/, 'no key material in the outcome');
  }
});
