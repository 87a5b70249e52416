// Issue 15: createCSR builds requests as cert-manager's pki.GenerateCSR does. It refuses a
// template with no identity (no commonName, from the field or a literalSubject, and no SAN of any
// kind), and it puts no BasicConstraints in the request: upstream does that only behind the
// off-by-default UseCertificateRequestBasicConstraints gate, and its signers take isCA from the
// CertificateRequest's spec. Requests built by the old code (with BasicConstraints) still sign.
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { createCSR, parseCSR } from './csr.ts';
import { generatePrivateKey } from './keys.ts';
import { parseCertificate } from './parse.ts';
import { signCertificate } from './sign.ts';
import type { CertificateTemplate } from './template.ts';
import { EXTENSION_OID } from './x509-fields.ts';
import { legacyCSR } from './testing/csr-by-hand.ts';

const DAY = 86_400_000;
const NO_IDENTITY = /no identity to request: at least one of commonName \(from the commonName field or from a literalSubject\), dnsNames, uris, emailAddresses, ipAddresses or otherNames must be set/;

test('createCSR refuses a template with no identity, naming the fields that would give it one', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const cases: [string, CertificateTemplate][] = [
    ['nothing at all', {}],
    ['empty commonName and empty lists', { commonName: '', dnsNames: [], uris: [], emailAddresses: [], ipAddresses: [], otherNames: [] }],
    ['a subject without a commonName', { subject: { organizations: ['Example'], countries: ['DE'], serialNumber: '42' } }],
    ['usages, isCA and nameConstraints are no identity', { isCA: true, usages: ['cert sign'], nameConstraints: { permitted: { dnsDomains: ['example.test'] } } }],
    ['a literalSubject without CN', { literalSubject: 'O=Example,C=DE' }],
    // upstream reads the common name from the literalSubject alone when one is set
    ['commonName beside a literalSubject without CN', { commonName: 'ignored', literalSubject: 'O=Example' }],
  ];
  for (const [what, template] of cases) {
    await assert.rejects(createCSR(template, key), NO_IDENTITY, what);
  }
});

test('createCSR accepts any one identity: commonName, a literalSubject CN, or one SAN of each kind', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const cases: [string, CertificateTemplate][] = [
    ['commonName', { commonName: 'a.example.test' }],
    ['literalSubject CN', { literalSubject: 'CN=lit,O=Example' }],
    ['literalSubject hex CN', { literalSubject: 'O=Example,CN=#0c036c6974' }],
    ['dnsNames', { dnsNames: ['a.example.test'] }],
    ['uris', { uris: ['spiffe://example.test/a'] }],
    ['emailAddresses', { emailAddresses: ['a@example.test'] }],
    ['ipAddresses', { ipAddresses: ['192.0.2.1'] }],
    ['otherNames', { otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.test' }] }],
  ];
  for (const [what, template] of cases) {
    const csr = parseCSR(await createCSR(template, key));
    assert.ok(csr.subjectDER.length > 0, what);
  }
});

test('createCSR puts no BasicConstraints in a request, for a leaf or a CA (UseCertificateRequestBasicConstraints is off upstream by default)', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  for (const template of [
    { dnsNames: ['a.example.test'] },
    { commonName: 'ca', isCA: true },
    { commonName: 'ca', isCA: true, maxPathLen: 2, usages: ['crl sign'], nameConstraints: { permitted: { dnsDomains: ['example.test'] } } },
  ] as CertificateTemplate[]) {
    const csr = parseCSR(await createCSR(template, key));
    const ids = csr.extensions.map((e) => e.id);
    assert.ok(!ids.includes(EXTENSION_OID.basicConstraints), `${JSON.stringify(template)}: ${ids.join(' ')}`);
    assert.equal(csr.template.isCA, undefined);
    // a CA's request still asks for cert sign, as upstream's KeyUsagesForCertificateOrCertificateRequest does
    if (template.isCA) assert.ok(csr.template.usages?.includes('cert sign'));
  }
});

test('signing takes isCA from the options (the request\'s spec), never from the CSR, as upstream\'s signers do', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const sign = (csrPem: string, isCA?: boolean) => signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: key, ...(isCA === undefined ? {} : { isCA }) });

  // a CA from a request without BasicConstraints
  const ca = parseCertificate(await sign(await createCSR({ commonName: 'root', isCA: true }, key), true));
  assert.equal(ca.isCA, true);
  assert.ok(ca.template.usages?.includes('cert sign'));
  assert.equal(parseCertificate(await sign(await createCSR({ commonName: 'leaf' }, key))).isCA, false);

  // requests made by the old code: CA:FALSE for a leaf, CA:TRUE for a CA, both still sign
  assert.equal(parseCertificate(await sign(await legacyCSR({ dnsNames: ['a.example.test'] }, key), false)).isCA, false);
  assert.equal(parseCertificate(await sign(await legacyCSR({ dnsNames: ['a.example.test'] }, key))).isCA, false);
  assert.equal(parseCertificate(await sign(await legacyCSR({ commonName: 'root', isCA: true }, key), true)).isCA, true);

  // a CSR whose BasicConstraints contradict the spec is refused (upstream's
  // CertificateTemplateValidateAndOverrideBasicConstraints): a CSR alone never makes a CA
  const askingCA = await legacyCSR({ commonName: 'sneaky', isCA: true }, key);
  await assert.rejects(sign(askingCA), /encoded CSR error: IsCA true does not match expected value false/);
  await assert.rejects(sign(askingCA, false), /encoded CSR error: IsCA true does not match expected value false/);
  await assert.rejects(sign(await legacyCSR({ commonName: 'leaf' }, key), true), /encoded CSR error: IsCA false does not match expected value true/);

  // the path length comes from the options only: a CSR's is not copied (upstream passes nil)
  const withPathLen = await legacyCSR({ commonName: 'root', isCA: true, maxPathLen: 3 }, key);
  assert.equal(parseCertificate(await sign(withPathLen, true)).template.maxPathLen, undefined);
  const given = await signCertificate({ csrPem: withPathLen, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: key, isCA: true, maxPathLen: 1 });
  assert.equal(parseCertificate(given).template.maxPathLen, 1);
});

test('createCSR puts no KeyUsage or ExtendedKeyUsage in a request for encodeUsagesInRequest: false, as GenerateCSR; the signer takes the request\'s usages', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const usageIds = (csrPem: string) => parseCSR(csrPem).extensions.map((e) => e.id).filter((id) => id === EXTENSION_OID.keyUsage || id === EXTENSION_OID.extKeyUsage);
  const clientAuth = ['digital signature', 'key encipherment', 'client auth'];
  for (const template of [
    { dnsNames: ['a.example.test'] },
    { dnsNames: ['a.example.test'], usages: clientAuth },
    { commonName: 'ca', isCA: true, usages: ['crl sign'] },
  ] as CertificateTemplate[]) {
    const without = await createCSR({ ...template, encodeUsagesInRequest: false }, key);
    assert.deepEqual(usageIds(without), [], JSON.stringify(template));
    assert.equal(parseCSR(without).hasUsages, false);
    // encodeUsagesInRequest unset or true: the usages (the defaults when none, cert sign for a CA)
    for (const encode of [undefined, true]) {
      assert.deepEqual(usageIds(await createCSR({ ...template, encodeUsagesInRequest: encode }, key)).sort(), [EXTENSION_OID.keyUsage, ...(template.usages?.includes('client auth') ? [EXTENSION_OID.extKeyUsage] : [])].sort());
    }
  }
  const csrPem = await createCSR({ dnsNames: ['a.example.test'], usages: clientAuth, encodeUsagesInRequest: false }, key);
  const signed = parseCertificate(await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: key, usages: clientAuth }));
  assert.deepEqual([...(signed.template.usages ?? [])].sort(), [...clientAuth].sort());
  // no usages on the request either: the defaults
  const plain = parseCertificate(await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: key }));
  assert.deepEqual([...(plain.template.usages ?? [])].sort(), ['digital signature', 'key encipherment']);
});

test('createCSR signs the request with spec.signatureAlgorithm when one is given, else as the key implies (cert-manager\'s pki.SignatureAlgorithm)', async () => {
  const rsa = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
  const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const rows: [string, string, string | undefined, string][] = [
    ['RSA 2048, no choice', rsa, undefined, 'sha256WithRSAEncryption'],
    ['RSA 2048, SHA512WithRSA', rsa, 'SHA512WithRSA', 'sha512WithRSAEncryption'],
    ['RSA 2048, SHA384WithRSA', rsa, 'SHA384WithRSA', 'sha384WithRSAEncryption'],
    ['P-256, ECDSAWithSHA384', ec, 'ECDSAWithSHA384', 'ecdsa-with-SHA384'],
  ];
  for (const [what, key, algorithm, want] of rows) {
    const pem = await createCSR({ dnsNames: ['a.example.test'] }, key, algorithm);
    const text = execFileSync('openssl', ['req', '-noout', '-text', '-verify'], { input: pem, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    assert.match(text, new RegExp(`Signature Algorithm: ${want}`), what);
    parseCSR(pem);
  }
});

test('an IPv4-mapped IPv6 address is requested and issued as the IPv4 address, as Go\'s To4() in MarshalSANs does', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ ipAddresses: ['::ffff:1.2.3.4', '2001:db8::1'] }, key);
  assert.deepEqual(parseCSR(csrPem).template.ipAddresses, ['1.2.3.4', '2001:db8::1']);
  const pem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: key });
  assert.match(execFileSync('openssl', ['x509', '-noout', '-checkip', '1.2.3.4'], { input: pem, encoding: 'utf8' }), /does match certificate/);
  assert.deepEqual(parseCertificate(pem).template.ipAddresses, ['1.2.3.4', '2001:db8::1']);
});

test('a "#hex" literalSubject value is the text its BER element holds, encoded like any other value, as go-ldap reads it for cert-manager', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ literalSubject: 'CN=lit.example.com,O=Acme,1.2.3.4=#0403616263' }, key);
  const pem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: key });
  // an OCTET STRING copied into the Name made a certificate OpenSSL cannot load
  const subject = execFileSync('openssl', ['x509', '-noout', '-subject', '-nameopt', 'RFC2253'], { input: pem, encoding: 'utf8' });
  assert.equal(subject.trim(), 'subject=CN=lit.example.com,O=Acme,1.2.3.4=#1303616263', 'a PrintableString "abc"');
  await assert.rejects(createCSR({ literalSubject: 'CN=x,1.2.3.4=#0402ff00' }, key), /the hex-encoded value of 1\.2\.3\.4 is not UTF-8 text/);
  await assert.rejects(createCSR({ literalSubject: 'CN=x,1.2.3.4=#04036162' }, key), /the hex-encoded value of 1\.2\.3\.4 is not a BER element \(truncated or malformed\)/);
});
