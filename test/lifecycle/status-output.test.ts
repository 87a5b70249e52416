// `certsmith status certificate` prints what `cmctl status certificate` prints (cmctl's
// pkg/status/certificate): each object's Events as kubectl describe's table (Type, Reason, Age,
// From, Message; "Events:  <none>" when there are none) for the Certificate, its Issuer, its
// Secret and its CertificateRequest, and the Secret's certificate as cmctl details it (issuer
// country, organisation and common name, key usages, extended key usages, key and signature
// algorithms, key identifiers and serial number in hex). certsmith's own lines (issuer type,
// subject, renewal reasoning, backoff) come on top.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { startLifecycle, certificate, withCA } from './harness.ts';
import { certificateStatus } from '../../src/cli/status.ts';

/** The lines of the Events table under `header` ("Events:" at some indent), header row first. */
function eventsTable(text: string, header: string): string[] {
  const lines = text.split('\n');
  const at = lines.indexOf(header);
  assert.ok(at >= 0, `no "${header}" line in:\n${text}`);
  const rows: string[] = [];
  const indent = header.length - header.trimStart().length + 2;
  for (const l of lines.slice(at + 1)) {
    if (l.length - l.trimStart().length !== indent) break;
    rows.push(l);
  }
  return rows;
}

/** Columns aligned as Go's tabwriter aligns them: every row's cells start where the header's do. */
function assertAligned(rows: string[]) {
  const starts = [...rows[0].matchAll(/\S+/g)].map((m) => m.index!);
  assert.equal(starts.length, 5, rows[0]);
  for (const r of rows) {
    for (const s of starts.slice(1)) {
      assert.match(r.slice(s - 2, s + 1), /^ {2}\S$/, `a cell starting at ${s} in ${JSON.stringify(r)}`);
    }
  }
}

test('status certificate prints Events and the Secret\'s certificate as cmctl does', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'] }));
    await lc.settle();
    await lc.advance(90_000);
    const text = await certificateStatus(lc.store, 'default', 'web', undefined, lc.clock.now());

    const crt = eventsTable(text, 'Events:');
    assert.match(crt[0], /^ {2}Type +Reason +Age +From +Message$/);
    assert.match(crt[1], /^ {2}---- +------ +---- +---- +-------$/);
    assert.deepEqual(crt.slice(2).map((r) => r.trim().split(/ {2,}/)), [
      ['Normal', 'Issuing', '90s', 'cert-manager-certificates-trigger', 'Issuing certificate as Secret does not exist'],
      ['Normal', 'Generated', '90s', 'cert-manager-certificates-key-manager', crt[3].trim().split(/ {2,}/)[4]],
      ['Normal', 'Requested', '90s', 'cert-manager-certificates-request-manager', 'Created new CertificateRequest resource "web-1"'],
      ['Normal', 'Issuing', '90s', 'cert-manager-certificates-issuing', 'The certificate has been successfully issued'],
    ]);
    assert.match(crt[3], /Stored new private key in temporary Secret resource "web-\w+"$/);
    assertAligned(crt);

    // issued: the request cmctl shows is the next revision's, and there is none
    assert.match(text, /^No CertificateRequest found for this Certificate$/m);

    // the Issuer and the Secret have no Events: cmctl says so
    // the CA issuer's own Events, as cert-manager's CA issuer records them: it was made before its CA Secret
    assert.match(text, /^Issuer:\n {2}Name: ca\n {2}Kind: Issuer\n(?: {2}\w+: .*\n)* {2}Conditions:\n {4}Ready: True, .*\n {2}Events:\n {4}Type .*\n {4}-.*\n(?: {4}.*\n)* {4}Normal +KeyPairVerified +\S+ +cert-manager-issuers +Signing CA verified$/m);

    const leaf = new X509Certificate(Buffer.from((await lc.secret('web-tls'))!.data!['tls.crt'], 'base64'));
    const hex = (s: string) => s.replace(/:/g, '').toLowerCase();
    const serial = leaf.serialNumber.toLowerCase().replace(/^(00)+(?=.)/, '');
    const secret = text.slice(text.indexOf('Secret:\n'), text.indexOf('Not Before:'));
    assert.equal(secret.split('\n').filter((l) => !/^ {2}Subject: /.test(l)).join('\n'), [
      'Secret:',
      '  Name: web-tls',
      '  Issuer Country: ',
      '  Issuer Organisation: ',
      '  Issuer Common Name: test root',
      '  Key Usage: Digital Signature, Key Encipherment',
      '  Extended Key Usages: Server Authentication, Client Authentication',
      '  Public Key Algorithm: RSA',
      `  Signature Algorithm: ECDSA-SHA256`,
      `  Subject Key ID: ${hex(skiOf(leaf))}`,
      `  Authority Key ID: ${hex(akiOf(leaf))}`,
      `  Serial Number: ${serial}`,
      '  Events:  <none>',
      '',
    ].join('\n'));
  } finally {
    await lc.stop();
  }
});

test('status certificate prints the pending request\'s Events as cmctl does', async () => {
  const lc = await startLifecycle();
  try {
    // an Issuer that does not exist: the request is approved and waits for it
    await lc.apply(certificate('held', { dnsNames: ['held.example.test'], issuerRef: { name: 'missing', kind: 'Issuer' } }));
    await lc.settle();
    await lc.advance(5 * 60_000);
    const text = await certificateStatus(lc.store, 'default', 'held', undefined, lc.clock.now());
    const request = text.slice(text.indexOf('CertificateRequest:\n'));
    assert.match(request, /^CertificateRequest:\n {2}Name: held-1\n {2}Namespace: default\n {2}Conditions:\n/);
    const rows = eventsTable(request, '  Events:');
    assert.match(rows[0], /^ {4}Type +Reason +Age +From +Message$/);
    assert.deepEqual(rows.slice(2).map((r) => r.trim().split(/ {2,}/)), [
      ['Normal', 'cert-manager.io', '5m', 'cert-manager-certificaterequests-approver', 'Certificate request has been approved by cert-manager.io'],
      // no issuer, so no issuer type: cert-manager's controller of each type says it alike
      ['Normal', 'IssuerNotFound', '5m', 'cert-manager-certificaterequests-issuer', 'Referenced "Issuer" not found: issuer.cert-manager.io "missing" not found'],
    ]);
    assertAligned(rows);
    assert.match(text, /^Issuer:\n {2}Name: missing\n {2}Kind: Issuer\n {2}Issuer missing not found$/m);
    assert.match(text, /^Secret:\n {2}Name: held-tls\n {2}Secret does not exist$/m);
  } finally {
    await lc.stop();
  }
});

/** The key identifiers as OpenSSL prints them (node's X509Certificate has no accessor for them). */
function skiOf(c: X509Certificate): string {
  return /X509v3 Subject Key Identifier: *\n? *([0-9A-F:]+)/.exec(opensslText(c))?.[1] ?? '';
}
function akiOf(c: X509Certificate): string {
  return /X509v3 Authority Key Identifier: *\n? *(?:keyid:)?([0-9A-F:]+)/.exec(opensslText(c))?.[1] ?? '';
}
function opensslText(c: X509Certificate): string {
  return execFileSync('openssl', ['x509', '-noout', '-text'], { input: c.toString() }).toString();
}
