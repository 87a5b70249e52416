import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCSR, parseCSR } from './csr.ts';
import { generatePrivateKey, publicKeyFingerprint, type KeySpec } from './keys.ts';
import { certificateMatchesKey, parseCertificate, splitPEM } from './parse.ts';
import { signCertificate } from './sign.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'certsmith-pki-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

function write(name: string, data: string | Buffer): string {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, data, { mode: 0o600 });
  return p;
}
const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8' });

async function selfSignedCA(spec: KeySpec, name: string, durationMs = 365 * DAY) {
  const keyPem = await generatePrivateKey(spec);
  const csrPem = await createCSR({ commonName: name, subject: { organizations: ['certsmith tests'] }, isCA: true }, keyPem);
  const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs, selfSignKeyPem: keyPem, isCA: true });
  return { keyPem, certPem };
}

const keySpecs: KeySpec[] = [
  { algorithm: 'RSA', size: 2048 }, { algorithm: 'RSA', size: 4096 },
  { algorithm: 'ECDSA', size: 256 }, { algorithm: 'ECDSA', size: 384 }, { algorithm: 'ECDSA', size: 521 },
  { algorithm: 'Ed25519' },
];

for (const spec of keySpecs) {
  test(`CA-issued ${spec.algorithm} ${spec.size ?? ''} leaf verifies with openssl and carries the requested fields`, async () => {
    const ca = await selfSignedCA(spec, `ca-${spec.algorithm}-${spec.size ?? 0}`);
    const keyPem = await generatePrivateKey(spec);
    const csrPem = await createCSR({
      commonName: 'app.example.com', dnsNames: ['app.example.com', 'www.example.com'], ipAddresses: ['10.1.2.3', '2001:db8::1'],
      uris: ['spiffe://cluster.local/ns/default/sa/app'], emailAddresses: ['ops@example.com'],
      subject: { organizations: ['Example'], countries: ['DE'] }, usages: ['key encipherment', 'digital signature', 'server auth', 'client auth'],
    }, keyPem);
    openssl('req', '-in', write('leaf.csr', csrPem), '-noout', '-verify');
    const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: 90 * DAY, issuer: ca });
    const caFile = write('ca.pem', ca.certPem);
    const leafFile = write('leaf.pem', certPem);
    assert.match(openssl('verify', '-CAfile', caFile, leafFile), /leaf\.pem: OK/);
    const text = openssl('x509', '-in', leafFile, '-noout', '-text');
    assert.match(text, /DNS:app\.example\.com, DNS:www\.example\.com/);
    assert.match(text, /IP Address:10\.1\.2\.3, IP Address:2001:DB8:0:0:0:0:0:1/i);
    assert.match(text, /URI:spiffe:\/\/cluster\.local\/ns\/default\/sa\/app/);
    assert.match(text, /email:ops@example\.com/);
    assert.match(text, /Key Usage: critical\s+Digital Signature, Key Encipherment\n/);
    assert.match(text, /TLS Web Server Authentication, TLS Web Client Authentication/);
    assert.match(text, /Basic Constraints: critical\s+CA:FALSE/);
    assert.match(text, /Subject Key Identifier/);
    assert.match(text, /Authority Key Identifier/);
    assert.match(openssl('x509', '-in', leafFile, '-noout', '-subject', '-nameopt', 'RFC2253'), /subject=CN=app\.example\.com,O=Example,C=DE/);
    assert.match(openssl('x509', '-in', caFile, '-noout', '-text'), /Certificate Sign[\s\S]*Basic Constraints: critical\s+CA:TRUE/);

    const info = parseCertificate(certPem + ca.certPem);
    assert.equal(info.subject, 'CN=app.example.com,O=Example,C=DE');
    assert.equal(info.issuer, `CN=ca-${spec.algorithm}-${spec.size ?? 0},O=certsmith tests`);
    assert.deepEqual(info.template.dnsNames, ['app.example.com', 'www.example.com']);
    assert.deepEqual(info.template.ipAddresses, ['10.1.2.3', '2001:db8::1']);
    assert.deepEqual([...info.template.usages!].sort(), ['client auth', 'digital signature', 'key encipherment', 'server auth']);
    assert.equal(info.isCA, false);
    assert.equal(info.selfSigned, false);
    assert.equal(info.notAfter.getTime() - info.notBefore.getTime(), 90 * DAY);
    assert.equal(info.publicKeyFingerprint, publicKeyFingerprint(keyPem));
    assert.equal(info.serialNumber, openssl('x509', '-in', leafFile, '-noout', '-serial').trim().split('=')[1].toLowerCase());
    assert.ok(certificateMatchesKey(certPem, keyPem));
    assert.ok(!certificateMatchesKey(certPem, ca.keyPem));
    assert.ok(parseCertificate(ca.certPem).selfSigned);
  });
}

test('self-signed: needs the CSR key, keeps subject, marks CA with cert sign and pathlen', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA' });
  const other = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ commonName: 'root', isCA: true, usages: ['crl sign'] }, keyPem);
  await assert.rejects(signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: other, isCA: true }), /CSR not signed by referenced private key/);
  const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: keyPem, isCA: true, maxPathLen: 1 });
  const f = write('root.pem', certPem);
  assert.match(openssl('verify', '-CAfile', f, f), /OK/);
  const text = openssl('x509', '-in', f, '-noout', '-text');
  assert.match(text, /CA:TRUE, pathlen:1/);
  assert.match(text, /Key Usage: critical\s+Certificate Sign, CRL Sign\n/);
  const info = parseCertificate(certPem);
  assert.ok(info.selfSigned && info.isCA);
  assert.equal(info.template.maxPathLen, 1);
});

test('a CA-issued certificate never outlives its issuer', async () => {
  const ca = await selfSignedCA({ algorithm: 'ECDSA' }, 'short-ca', 10 * DAY);
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ dnsNames: ['x.example.com'] }, keyPem);
  const leaf = parseCertificate(await signCertificate({ csrPem, notBefore: new Date(), durationMs: 90 * DAY, issuer: ca }));
  assert.equal(leaf.notAfter.getTime(), parseCertificate(ca.certPem).notAfter.getTime());
  const unclipped = parseCertificate(await signCertificate({ csrPem, notBefore: new Date(), durationMs: 90 * DAY, issuer: ca, clipToIssuer: false }));
  assert.equal(unclipped.notAfter.getTime() - unclipped.notBefore.getTime(), 90 * DAY);
});

test('issuer key must match the issuer certificate', async () => {
  const ca = await selfSignedCA({ algorithm: 'ECDSA' }, 'ca');
  const wrong = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ commonName: 'x' }, await generatePrivateKey({ algorithm: 'ECDSA' }));
  await assert.rejects(signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, issuer: { certPem: ca.certPem, keyPem: wrong } }), /does not match/);
});

test('CSR carries SAN (critical without subject), usages, name constraints, otherNames, literal subject, and no basic constraints', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA' });
  const noSubject = await createCSR({ dnsNames: ['only.example.com'] }, keyPem);
  assert.match(openssl('req', '-in', write('ns.csr', noSubject), '-noout', '-text'), /Subject Alternative Name: critical/);

  const csrPem = await createCSR({
    literalSubject: 'CN=lit,OU=team+OU=ops,O=Example,C=US', isCA: true,
    otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'user@example.com' }],
    nameConstraints: { critical: true, permitted: { dnsDomains: ['example.com'], ipRanges: ['10.0.0.0/8'] }, excluded: { emailAddresses: ['bad.example.com'] } },
  }, keyPem);
  const text = openssl('req', '-in', write('lit.csr', csrPem), '-noout', '-text', '-nameopt', 'RFC2253');
  assert.match(text, /Subject: CN=lit,OU=ops\+OU=team,O=Example,C=US|Subject: CN=lit,OU=team\+OU=ops,O=Example,C=US/);
  assert.match(text, /othername: UPN::user@example\.com/);
  assert.match(text, /Name Constraints: critical\s+Permitted:\s+DNS:example\.com\s+IP:10\.0\.0\.0\/255\.0\.0\.0\s+Excluded:\s+email:bad\.example\.com/);
  // upstream writes them only behind UseCertificateRequestBasicConstraints (off by default)
  assert.doesNotMatch(text, /Basic Constraints/);
  const parsed = parseCSR(csrPem);
  assert.equal(parsed.template.commonName, 'lit');
  assert.deepEqual(parsed.template.otherNames, [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'user@example.com' }]);
  assert.deepEqual(parsed.template.nameConstraints?.permitted, { dnsDomains: ['example.com'], ipRanges: ['10.0.0.0/8'] });
  assert.equal(parsed.template.isCA, undefined);
  assert.deepEqual([...parsed.template.usages!].sort(), ['cert sign', 'digital signature', 'key encipherment']);

  // The signed CA keeps name constraints from the request; isCA is the request spec's.
  const ca = await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: keyPem, isCA: true });
  const caText = openssl('x509', '-in', write('nc.pem', ca), '-noout', '-text');
  assert.match(caText, /Name Constraints: critical/);
  assert.match(caText, /Basic Constraints: critical\s+CA:TRUE/);
});

test('parseCSR rejects garbage and a tampered signature', async () => {
  assert.throws(() => parseCSR('hello'), /invalid certificate request: no CERTIFICATE REQUEST/);
  assert.throws(() => parseCSR('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n'), /invalid certificate request/);
  const csrPem = await createCSR({ commonName: 'abcdefgh' }, await generatePrivateKey({ algorithm: 'ECDSA' }));
  const der = Buffer.from(csrPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  const at = der.indexOf(Buffer.from('abcdefgh'));
  der[at] = 'x'.charCodeAt(0);
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  assert.throws(() => parseCSR(tampered), /signature does not verify/);
  assert.throws(() => parseCertificate('nope'), /invalid certificate/);
});

test('splitPEM returns each block in order', async () => {
  const a = await selfSignedCA({ algorithm: 'ECDSA' }, 'a');
  const b = await selfSignedCA({ algorithm: 'ECDSA' }, 'b');
  const blocks = splitPEM(`junk\n${a.certPem}\n\n${b.keyPem}${b.certPem}`);
  assert.deepEqual(blocks, [a.certPem, b.keyPem, b.certPem]);
});

test('usages: empty means digital signature + key encipherment; only EKUs means no KU, as cert-manager', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA' });
  const plain = await signCertificate({ csrPem: await createCSR({ commonName: 'd' }, keyPem), notBefore: new Date(), durationMs: DAY, selfSignKeyPem: keyPem });
  assert.deepEqual([...parseCertificate(plain).template.usages!].sort(), ['digital signature', 'key encipherment']);
  const ekuOnly = await createCSR({ commonName: 'e', usages: ['server auth'] }, keyPem);
  const text = openssl('req', '-in', write('eku.csr', ekuOnly), '-noout', '-text');
  assert.doesNotMatch(text, /X509v3 Key Usage/);
  assert.match(text, /TLS Web Server Authentication/);
  // Options override what the CSR asked for.
  const overridden = await signCertificate({ csrPem: ekuOnly, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: keyPem, usages: ['signing', 's/mime'] });
  assert.deepEqual([...parseCertificate(overridden).template.usages!].sort(), ['digital signature', 'email protection']);
  await assert.rejects(createCSR({ commonName: 'x', usages: ['flying'] }, keyPem), /unknown key usages: flying/);
});

// RFC 5280 §4.2.1.6: the SAN is critical exactly when the subject is empty. Upstream's
// CertificateTemplateFromCSR sets the flag from the subject whatever the CSR said (a CSR made
// by hand or by another tool may say either).
test('a signed certificate marks its SAN critical exactly when its subject is empty, whatever the CSR said', async () => {
  const ca = await selfSignedCA({ algorithm: 'ECDSA', size: 256 }, 'ca-san-critical');
  const keyFile = write('san.key', await generatePrivateKey({ algorithm: 'ECDSA', size: 256 }));
  const cases = [
    { subj: '/', ext: 'subjectAltName=DNS:empty.example', critical: true },
    { subj: '/CN=withsubj', ext: 'subjectAltName=critical,DNS:withsubj.example', critical: false },
  ];
  for (const c of cases) {
    const csrPem = openssl('req', '-new', '-key', keyFile, '-subj', c.subj, '-addext', c.ext);
    const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, issuer: ca });
    const text = openssl('x509', '-in', write('san.pem', certPem), '-noout', '-text');
    assert.equal(/Subject Alternative Name: critical/.test(text), c.critical, `${c.subj} ${c.ext}:\n${text}`);
    assert.match(text, /DNS:(empty|withsubj)\.example/);
  }
});
