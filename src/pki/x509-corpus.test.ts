// The DER codec's output checked by OpenSSL and by a second encoder (@peculiar/asn1-x509), and its parser
// checked against what OpenSSL itself writes, over a corpus of templates and every supported key type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import 'reflect-metadata';
import { AsnConvert } from '@peculiar/asn1-schema';
import * as ax from '@peculiar/asn1-x509';
import { createCSR, parseCSR } from './csr.ts';
import { generatePrivateKey, publicKeyFingerprint, type KeySpec } from './keys.ts';
import { decodeCertificate, parseCertificate } from './parse.ts';
import { encodePEM, pemToDER } from './pem.ts';
import { signCertificate } from './sign.ts';
import type { CertificateTemplate } from './template.ts';
import { effectiveUsages } from './usages.ts';
import { canonicalIP, EXTENSION_OID, subjectNameFromTemplate } from './x509-fields.ts';

const DAY = 86400_000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'certsmith-corpus-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
let fileSeq = 0;
function write(data: string | Buffer): string {
  const p = path.join(tmp, `f${fileSeq++}`);
  fs.writeFileSync(p, data, { mode: 0o600 });
  return p;
}
const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

interface Case { name: string; t: CertificateTemplate; text: RegExp[]; subject?: string }

const corpus: Case[] = [
  {
    name: 'every SAN kind, full subject, KU + EKU',
    t: {
      commonName: 'app.example.com', dnsNames: ['app.example.com', 'www.example.com'], ipAddresses: ['10.1.2.3', '2001:DB8:0:0:0:0:0:1', '::ffff:192.0.2.1'],
      uris: ['spiffe://cluster.local/ns/default/sa/app'], emailAddresses: ['ops@example.com'],
      otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.com' }],
      subject: { organizations: ['Example'], countries: ['DE'], organizationalUnits: ['Ops'], localities: ['Berlin'], provinces: ['BE'],
        streetAddresses: ['Main St 1'], postalCodes: ['10115'], serialNumber: 'SN-42' },
      usages: ['key encipherment', 'digital signature', 'server auth', 'client auth'],
    },
    text: [/DNS:app\.example\.com, DNS:www\.example\.com/, /IP Address:10\.1\.2\.3, IP Address:2001:DB8:0:0:0:0:0:1, IP Address:192\.0\.2\.1(,|\n)/,
      /URI:spiffe:\/\/cluster\.local\/ns\/default\/sa\/app/, /email:ops@example\.com/, /othername: UPN::upn@example\.com/,
      /Key Usage: critical\s+Digital Signature, Key Encipherment\n/, /TLS Web Server Authentication, TLS Web Client Authentication/,
      /Basic Constraints: critical\s+CA:FALSE/],
    subject: 'serialNumber=SN-42,CN=app.example.com,OU=Ops,O=Example,postalCode=10115,street=Main St 1,L=Berlin,ST=BE,C=DE',
  },
  {
    name: 'literalSubject with multi-valued RDNs, DC, UID and escapes',
    t: { literalSubject: 'CN=a\\,b,OU=team+OU=ops,O=Example,UID=u1,DC=example+DC=com,C=US', dnsNames: ['lit.example.com'] },
    text: [/DNS:lit\.example\.com/],
    // DER sorts each multi-valued RDN by encoding (Go does the same): "ops" encodes shorter than "team", so it
    // comes first; OpenSSL's RFC 2253 output reverses the attributes, RDN members included.
    subject: 'CN=a\\,b,OU=team+OU=ops,O=Example,UID=u1,DC=example+DC=com,C=US',
  },
  {
    name: 'non-printable UTF-8 subject values and a multi-valued O',
    t: { commonName: 'Grüße 東京 *.x', subject: { organizations: ['Ünïcode GmbH', 'ascii'], localities: ['Zürich'] } },
    text: [/Key Usage: critical\s+Digital Signature, Key Encipherment\n/],
    subject: 'CN=Grüße 東京 *.x,O=Ünïcode GmbH+O=ascii,L=Zürich',
  },
  {
    name: 'CA with pathLen 0',
    t: { commonName: 'inter-0', isCA: true, maxPathLen: 0, usages: ['crl sign'] },
    text: [/Basic Constraints: critical\s+CA:TRUE, pathlen:0/, /Key Usage: critical\s+Certificate Sign, CRL Sign\n/],
  },
  {
    name: 'CA with pathLen 3 and name constraints, permitted and excluded',
    t: {
      commonName: 'inter-3', isCA: true, maxPathLen: 3,
      nameConstraints: {
        critical: true,
        permitted: { dnsDomains: ['example.com'], ipRanges: ['10.0.0.0/8', '2001:db8::/32'], emailAddresses: ['example.com'], uriDomains: ['.example.com'] },
        excluded: { dnsDomains: ['bad.example.com'], ipRanges: ['10.9.0.0/16'] },
      },
    },
    text: [/CA:TRUE, pathlen:3/, /Name Constraints: critical\s+Permitted:\s+DNS:example\.com\s+IP:10\.0\.0\.0\/255\.0\.0\.0\s+IP:2001:DB8:0:0:0:0:0:0\/FFFF:FFFF:0:0:0:0:0:0\s+email:example\.com\s+URI:\.example\.com\s+Excluded:\s+DNS:bad\.example\.com\s+IP:10\.9\.0\.0\/255\.255\.0\.0/],
  },
  {
    name: 'SAN only: empty subject makes SAN critical',
    t: { dnsNames: ['only.example.com'], ipAddresses: ['192.0.2.7'] },
    text: [/Subject Alternative Name: critical\s+DNS:only\.example\.com, IP Address:192\.0\.2\.7/],
    subject: '',
  },
  {
    name: 'every key usage bit and every EKU',
    t: {
      commonName: 'all-usages',
      usages: ['signing', 'content commitment', 'key encipherment', 'data encipherment', 'key agreement', 'cert sign', 'crl sign',
        'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 'ipsec end system',
        'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc'],
    },
    text: [/Key Usage: critical\s+Digital Signature, Non Repudiation, Key Encipherment, Data Encipherment, Key Agreement, Certificate Sign, CRL Sign, Encipher Only, Decipher Only\n/,
      /Any Extended Key Usage, TLS Web Server Authentication, TLS Web Client Authentication, Code Signing, E-mail Protection, IPSec End System, IPSec Tunnel, IPSec User, Time Stamping, OCSP Signing, Microsoft Server Gated Crypto, Netscape Server Gated Crypto/],
  },
];

const sorted = (a: readonly string[] | undefined) => [...(a ?? [])].sort();

/**
 * What a parsed CSR or certificate must give back for a template (order-insensitive where X.509 may
 * reorder). A CSR states no BasicConstraints (issue 15): isCA and the path length are the signer's.
 */
function assertRoundTrip(have: CertificateTemplate, want: CertificateTemplate, label: string, kind: 'CSR' | 'certificate'): void {
  assert.deepEqual(sorted(have.dnsNames), sorted(want.dnsNames), `${label}: dnsNames`);
  assert.deepEqual(sorted(have.ipAddresses), sorted((want.ipAddresses ?? []).map(canonicalIP)), `${label}: ipAddresses`);
  assert.deepEqual(sorted(have.uris), sorted(want.uris), `${label}: uris`);
  assert.deepEqual(sorted(have.emailAddresses), sorted(want.emailAddresses), `${label}: emailAddresses`);
  assert.deepEqual(have.otherNames ?? [], want.otherNames ?? [], `${label}: otherNames`);
  assert.deepEqual(sorted(have.usages), effectiveUsages(want.usages, want.isCA ?? false), `${label}: usages`);
  if (kind === 'CSR') {
    assert.equal(have.isCA, undefined, `${label}: no BasicConstraints in a CSR`);
    assert.equal(have.maxPathLen, undefined, `${label}: no path length in a CSR`);
  } else {
    assert.equal(have.isCA ?? false, want.isCA ?? false, `${label}: isCA`);
    assert.equal(have.maxPathLen, want.isCA ? want.maxPathLen : undefined, `${label}: maxPathLen`);
  }
  if (want.nameConstraints) {
    const nc = have.nameConstraints;
    assert.equal(nc?.critical, want.nameConstraints.critical ?? false, `${label}: name constraints critical`);
    assert.deepEqual(nc?.permitted, want.nameConstraints.permitted, `${label}: permitted`);
    assert.deepEqual(nc?.excluded, want.nameConstraints.excluded, `${label}: excluded`);
  } else {
    assert.equal(have.nameConstraints, undefined, `${label}: no name constraints`);
  }
  if (!want.literalSubject) {
    assert.equal(have.commonName, want.commonName, `${label}: commonName`);
    for (const [k, v] of Object.entries(want.subject ?? {})) {
      const got = (have.subject as Record<string, unknown>)[k];
      assert.deepEqual(Array.isArray(v) ? sorted(got as string[]) : got, Array.isArray(v) ? sorted(v) : v, `${label}: subject.${k}`);
    }
  }
}

/** A second, independent encoder must re-encode each part to the same bytes: our DER is canonical. */
function assertCanonical(certPem: string, label: string): void {
  const cert = decodeCertificate(pemToDER(certPem));
  for (const nameDER of [cert.subject, cert.issuer]) {
    assert.deepEqual(Buffer.from(AsnConvert.serialize(AsnConvert.parse(nameDER, ax.Name))), nameDER, `${label}: Name`);
  }
  const schemas: Record<string, new () => object> = {
    [EXTENSION_OID.subjectAltName]: ax.SubjectAlternativeName, [EXTENSION_OID.keyUsage]: ax.KeyUsage,
    [EXTENSION_OID.extKeyUsage]: ax.ExtendedKeyUsage, [EXTENSION_OID.basicConstraints]: ax.BasicConstraints,
    [EXTENSION_OID.nameConstraints]: ax.NameConstraints, [EXTENSION_OID.subjectKeyIdentifier]: ax.SubjectKeyIdentifier,
    [EXTENSION_OID.authorityKeyIdentifier]: ax.AuthorityKeyIdentifier,
  };
  for (const e of cert.extensions) {
    const schema = schemas[e.id];
    assert.ok(schema, `${label}: unexpected extension ${e.id}`);
    assert.deepEqual(Buffer.from(AsnConvert.serialize(AsnConvert.parse(e.value, schema))), e.value, `${label}: extension ${e.id}`);
  }
  const validity = AsnConvert.serialize(AsnConvert.parse(cert.tbs, ax.TBSCertificate).validity);
  assert.ok(cert.tbs.includes(Buffer.from(validity)), `${label}: Validity`);
}

const keySpecs: KeySpec[] = [
  { algorithm: 'RSA', size: 2048 }, { algorithm: 'ECDSA', size: 256 }, { algorithm: 'ECDSA', size: 384 },
  { algorithm: 'ECDSA', size: 521 }, { algorithm: 'Ed25519' },
];
const keyLabel = (s: KeySpec) => `${s.algorithm}${s.size ?? ''}`;

async function caFor(spec: KeySpec) {
  const keyPem = await generatePrivateKey(spec);
  const csrPem = await createCSR({ commonName: `corpus-ca-${keyLabel(spec)}`, isCA: true }, keyPem);
  const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: 365 * DAY, selfSignKeyPem: keyPem, isCA: true, maxPathLen: 5 });
  return { keyPem, certPem };
}

async function checkCase(c: Case, spec: KeySpec, ca: { keyPem: string; certPem: string }): Promise<void> {
  const label = `${c.name} / ${keyLabel(spec)}`;
  const keyPem = await generatePrivateKey(spec);
  const csrPem = await createCSR(c.t, keyPem);
  const csrFile = write(csrPem);
  openssl('req', '-in', csrFile, '-noout', '-verify');
  openssl('asn1parse', '-in', csrFile);
  const csr = parseCSR(csrPem);
  assertRoundTrip(csr.template, c.t, `${label} CSR`, 'CSR');
  assert.equal(csr.publicKeyFingerprint, publicKeyFingerprint(keyPem));
  assert.deepEqual(csr.subjectDER, subjectNameFromTemplate(c.t));

  const notBefore = new Date();
  // isCA and the path length as a CertificateRequest's spec gives them to the signer
  const basicConstraints = { isCA: c.t.isCA ?? false, ...(c.t.maxPathLen !== undefined ? { maxPathLen: c.t.maxPathLen } : {}) };
  const certPem = await signCertificate({ csrPem, notBefore, durationMs: 30 * DAY, issuer: ca, ...basicConstraints });
  const certFile = write(certPem);
  assert.match(openssl('verify', '-CAfile', write(ca.certPem), certFile), /: OK\n/, label);
  openssl('asn1parse', '-in', certFile);
  const text = openssl('x509', '-in', certFile, '-noout', '-text', '-nameopt', 'RFC2253,-esc_msb');
  for (const re of c.text) assert.match(text, re, label);
  assert.match(text, /Subject Key Identifier/);
  assert.match(text, /Authority Key Identifier/);
  if (c.subject !== undefined) {
    assert.equal(openssl('x509', '-in', certFile, '-noout', '-subject', '-nameopt', 'RFC2253,-esc_msb').trim(), `subject=${c.subject}`, label);
  }
  assertCanonical(certPem, label);

  const cert = parseCertificate(certPem);
  assertRoundTrip(cert.template, c.t, `${label} certificate`, 'certificate');
  assert.deepEqual(cert.subjectDER, csr.subjectDER);
  assert.equal(cert.notBefore.getTime(), Math.floor(notBefore.getTime() / 1000) * 1000);
  assert.equal(cert.notAfter.getTime() - cert.notBefore.getTime(), 30 * DAY);
  assert.equal(cert.serialNumber, openssl('x509', '-in', certFile, '-noout', '-serial').trim().split('=')[1].toLowerCase());
  assert.equal(cert.selfSigned, false);
  assert.equal(cert.authorityKeyId, parseCertificate(ca.certPem).subjectKeyId);

  if (c.t.isCA) {
    const selfPem = await signCertificate({ csrPem, notBefore, durationMs: DAY, selfSignKeyPem: keyPem, ...basicConstraints });
    const selfFile = write(selfPem);
    assert.match(openssl('verify', '-CAfile', selfFile, selfFile), /: OK\n/, `${label} self-signed`);
    assert.ok(parseCertificate(selfPem).selfSigned);
  }
}

test('template corpus on ECDSA P-256: CSR and CA-issued certificate pass OpenSSL and round-trip', async () => {
  const spec: KeySpec = { algorithm: 'ECDSA', size: 256 };
  const ca = await caFor(spec);
  for (const c of corpus) await checkCase(c, spec, ca);
});

for (const spec of keySpecs) {
  test(`${keyLabel(spec)}: full template CSR and certificate pass OpenSSL and round-trip`, async () => {
    const ca = await caFor(spec);
    assert.match(openssl('x509', '-in', write(ca.certPem), '-noout', '-text'), /CA:TRUE, pathlen:5/);
    await checkCase(corpus[0], spec, ca);
    await checkCase(corpus[4], spec, ca);
  });
}

test('validity past 2049 is a GeneralizedTime OpenSSL reads back', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR({ commonName: 'long' }, keyPem);
  const notBefore = new Date('2049-12-31T12:00:00Z');
  const certPem = await signCertificate({ csrPem, notBefore, durationMs: 365 * DAY, selfSignKeyPem: keyPem });
  const f = write(certPem);
  assert.match(openssl('asn1parse', '-in', f), /UTCTIME\s+:491231120000Z[\s\S]*GENERALIZEDTIME\s+:20501231120000Z/);
  assert.equal(openssl('x509', '-in', f, '-noout', '-enddate').trim(), 'notAfter=Dec 31 12:00:00 2050 GMT');
  assert.equal(parseCertificate(certPem).notAfter.toISOString(), '2050-12-31T12:00:00.000Z');
});

test('certificates and CSRs written by OpenSSL parse to the fields OpenSSL reports', async () => {
  const keyFile = path.join(tmp, 'ossl.key');
  const certFile = path.join(tmp, 'ossl.pem');
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-days', '20000', '-subj', '/C=US/ST=CA/O=Org One/OU=Unit/CN=ossl.example.com',
    '-addext', 'subjectAltName=DNS:a.example.com,IP:10.0.0.1,IP:2001:db8::5,URI:https://x.example.com/p,email:me@example.com,otherName:1.3.6.1.4.1.311.20.2.3;UTF8:upn@example.com',
    '-addext', 'keyUsage=critical,digitalSignature,keyCertSign,cRLSign',
    '-addext', 'extendedKeyUsage=serverAuth,clientAuth,codeSigning',
    '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:2',
    '-addext', 'nameConstraints=critical,permitted;DNS:example.com,excluded;IP:192.168.0.0/255.255.0.0');
  fs.chmodSync(keyFile, 0o600);
  const pem = fs.readFileSync(certFile, 'utf8');
  const info = parseCertificate(pem);
  assert.equal(info.subject, 'CN=ossl.example.com,OU=Unit,O=Org One,ST=CA,C=US');
  assert.equal(info.issuer, info.subject);
  assert.ok(info.selfSigned);
  assert.equal(info.isCA, true);
  assert.equal(info.signatureAlgorithm, 'ECDSA-SHA256'); // OpenSSL's default digest
  assert.deepEqual(info.template, {
    dnsNames: ['a.example.com'], ipAddresses: ['10.0.0.1', '2001:db8::5'], uris: ['https://x.example.com/p'], emailAddresses: ['me@example.com'],
    otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.com' }],
    usages: ['digital signature', 'cert sign', 'crl sign', 'server auth', 'client auth', 'code signing'],
    isCA: true, maxPathLen: 2,
    nameConstraints: { critical: true, permitted: { dnsDomains: ['example.com'] }, excluded: { ipRanges: ['192.168.0.0/16'] } },
    subject: { countries: ['US'], provinces: ['CA'], organizations: ['Org One'], organizationalUnits: ['Unit'] },
    commonName: 'ossl.example.com',
  });
  assert.equal(info.serialNumber, openssl('x509', '-in', certFile, '-noout', '-serial').trim().split('=')[1].toLowerCase().replace(/^(00)+(?=.)/, ''));
  const [, start] = openssl('x509', '-in', certFile, '-noout', '-startdate').trim().split('=');
  const [, end] = openssl('x509', '-in', certFile, '-noout', '-enddate').trim().split('=');
  assert.equal(info.notBefore.getTime(), new Date(start).getTime());
  assert.equal(info.notAfter.getTime(), new Date(end).getTime());
  assert.ok(info.notAfter.getUTCFullYear() > 2050, 'GeneralizedTime notAfter');
  const text = openssl('x509', '-in', certFile, '-noout', '-text');
  const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(text)![1].replace(/:/g, '').toLowerCase();
  assert.equal(info.subjectKeyId, ski);
  assert.equal(info.publicKeyFingerprint, publicKeyFingerprint(fs.readFileSync(keyFile, 'utf8')));
  assert.deepEqual(info.der, pemToDER(pem));

  // The OpenSSL-made CA issues through our signer; OpenSSL accepts the chain.
  const leafKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await signCertificate({
    csrPem: await createCSR({ dnsNames: ['leaf.example.com'] }, leafKey), notBefore: new Date(), durationMs: DAY,
    issuer: { certPem: pem, keyPem: fs.readFileSync(keyFile, 'utf8') },
  });
  assert.match(openssl('verify', '-CAfile', certFile, write(leaf)), /: OK\n/);
  assert.equal(parseCertificate(leaf).authorityKeyId, ski);

  const csrFile = path.join(tmp, 'ossl.csr');
  openssl('req', '-new', '-key', keyFile, '-out', csrFile, '-subj', '/CN=req.example.com/O=A+O=B',
    '-addext', 'subjectAltName=DNS:req.example.com,IP:::1', '-addext', 'keyUsage=digitalSignature', '-addext', 'extendedKeyUsage=clientAuth');
  const csr = parseCSR(fs.readFileSync(csrFile, 'utf8'));
  assert.equal(csr.template.commonName, 'req.example.com');
  assert.deepEqual(sorted(csr.template.subject?.organizations), ['A', 'B']);
  assert.deepEqual(csr.template.dnsNames, ['req.example.com']);
  assert.deepEqual(csr.template.ipAddresses, ['::1']);
  assert.deepEqual(csr.template.usages, ['digital signature', 'client auth']);
  assert.ok(csr.hasUsages);
  assert.equal(csr.publicKeyFingerprint, info.publicKeyFingerprint);
});

/** Deterministic byte mutations, so a failure reproduces. */
function* mutations(der: Buffer, count: number): Generator<Buffer> {
  let seed = 0x2545f491;
  const next = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0); };
  for (let i = 0; i < count; i++) {
    const m = Buffer.from(der);
    const flips = 1 + (next() % 3);
    for (let f = 0; f < flips; f++) m[next() % m.length] = next() & 0xff;
    yield m;
  }
}

test('malformed certificates and CSRs fail with a clear error, never a hang or a stray exception type', async () => {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await createCSR(corpus[0].t, keyPem);
  const certPem = await signCertificate({ csrPem, notBefore: new Date(), durationMs: DAY, selfSignKeyPem: keyPem });
  const kinds = [
    { der: pemToDER(certPem), type: 'CERTIFICATE', parse: parseCertificate, prefix: /invalid certificate: / },
    { der: pemToDER(csrPem), type: 'CERTIFICATE REQUEST', parse: parseCSR, prefix: /invalid certificate request: / },
  ];
  for (const { der, type, parse, prefix } of kinds) {
    const pem = (b: Buffer) => encodePEM(type, b);
    // Every truncation.
    for (let n = 0; n < der.length; n++) assert.throws(() => parse(pem(der.subarray(0, n))), prefix, `${type} cut at ${n}`);
    assert.throws(() => parse(pem(Buffer.concat([der, Buffer.from([0])]))), /trailing data/);
    const wrongTag = Buffer.from(der);
    wrongTag[0] = 0x31;
    assert.throws(() => parse(pem(wrongTag)), /expected tag 0x30, found 0x31/);
    // The outer length claims 4 GiB.
    const huge = Buffer.concat([Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), der.subarray(4)]);
    assert.throws(() => parse(pem(huge)), /truncated/);
    const indefinite = Buffer.concat([Buffer.from([0x30, 0x80]), der.subarray(4), Buffer.from([0, 0])]);
    assert.throws(() => parse(pem(indefinite)), /indefinite length/);
    for (const m of mutations(der, 1500)) {
      try {
        parse(pem(m));
      } catch (err) {
        assert.ok(err instanceof Error && err.message.search(prefix) === 0, `${type}: unexpected ${String(err)}`);
      }
    }
  }
  const certDER = pemToDER(certPem);
  const badVersion = Buffer.from(certDER);
  badVersion[certDER.indexOf(Buffer.from('a003020102', 'hex')) + 4] = 7;
  assert.throws(() => parseCertificate(encodePEM('CERTIFICATE', badVersion)), /invalid certificate: unsupported version 8/);
});
