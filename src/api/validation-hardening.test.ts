// Issue 12, findings 2, 6, 7 and 11 at admission: well-formed Unicode everywhere in the
// cert-manager kinds, dnsNames/emails/URIs/IPs a certificate can carry (and a CSR's names held
// to the same rules), secretName as a Secret name, and durations bounded like Go's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as R from './resources.ts';
import type { KubeObject } from './meta.ts';
import { validate, fieldErrorText, invalidObjectMessage, dnsNameError } from './validation.ts';
import { createCSR } from '../pki/csr.ts';
import { generatePrivateKey, parsePrivateKey } from '../pki/keys.ts';
import { bitString, implicit, integer, oid, sequence, setOf, tlv } from '../pki/der.ts';
import { encodeExtensions } from '../pki/x509-fields.ts';
import { spkiDER } from '../pki/spki.ts';
import { signatureAlgorithmFor, signTBS } from '../pki/signature.ts';
import { encodePEM } from '../pki/pem.ts';

const GN = { email: 1, dns: 2, uri: 6 } as const;

/**
 * A CSR as another tool could make it: createCSR refuses these names itself, so the SAN
 * extension is encoded by hand here (GeneralNames with the raw bytes) and signed properly.
 */
async function foreignCSR(keyPem: string, names: [keyof typeof GN, string][]): Promise<string> {
  const key = parsePrivateKey(keyPem);
  const san = { id: '2.5.29.17', critical: true, value: sequence(...names.map(([k, v]) => implicit(GN[k], Buffer.from(v, 'latin1')))) };
  const extensionRequest = sequence(oid('1.2.840.113549.1.9.14'), setOf([encodeExtensions([san])]));
  const info = sequence(integer(0), sequence(), spkiDER(key), tlv(0xa0, extensionRequest));
  return encodePEM('CERTIFICATE REQUEST', sequence(info, signatureAlgorithmFor(key), bitString(await signTBS(key, info))));
}

function certWith(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'ns', ...metadata },
    spec: { secretName: 'c-tls', issuerRef: { name: 'ca' }, ...spec },
  };
}

const dnsNameMessage = dnsNameError('a b')!;

interface Row { name: string; obj: KubeObject; field?: string; message?: RegExp | string }

/** Each row: no error when field is undefined, else exactly one error at field matching message. */
function check(rows: Row[]): void {
  for (const r of rows) {
    const errs = validate(R.resourceTypeFor(r.obj.apiVersion, r.obj.kind)!, r.obj);
    if (r.field === undefined) {
      assert.deepEqual(errs, [], r.name);
      continue;
    }
    assert.equal(errs.length, 1, `${r.name}: expected one error, got ${JSON.stringify(errs)}`);
    assert.equal(errs[0].field, r.field, r.name);
    if (typeof r.message === 'string') assert.equal(errs[0].message, r.message, r.name);
    else if (r.message) assert.match(errs[0].message, r.message, r.name);
    // whatever the input, the error text is well-formed and prints on one line
    assert.ok(!/\p{Cs}|\n/u.test(fieldErrorText(errs[0])), `${r.name}: ${fieldErrorText(errs[0])}`);
  }
}

test('dnsNames: host names (letters, digits, - and _), a wildcard only as the whole leftmost label', () => {
  const dns = (...dnsNames: string[]) => certWith({ dnsNames });
  check([
    { name: 'plain', obj: dns('a.example.com', 'localhost', '1.example', 'a-b.c', 'xn--bcher-kva.example') },
    { name: 'wildcard', obj: dns('*.example.com') },
    { name: '63-character label', obj: dns(`${'a'.repeat(63)}.com`) },
    { name: '253 characters', obj: dns(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`) },
    { name: 'newline', obj: dns('ok.example.com', 'a\nb'), field: 'spec.dnsNames[1]', message: dnsNameMessage },
    { name: 'NUL', obj: dns('a\u0000b.example.com'), field: 'spec.dnsNames[0]', message: dnsNameMessage },
    { name: 'command substitution', obj: dns('$(reboot).example.com'), field: 'spec.dnsNames[0]', message: dnsNameMessage },
    { name: 'double quote', obj: dns('a"b.example.com'), field: 'spec.dnsNames[0]' },
    { name: 'single quote', obj: dns("a'b.example.com"), field: 'spec.dnsNames[0]' },
    { name: 'space', obj: dns('a b.example.com'), field: 'spec.dnsNames[0]' },
    { name: 'backtick and semicolon', obj: dns('`id`;x.example.com'), field: 'spec.dnsNames[0]' },
    { name: 'upper case and underscore, as cert-manager accepts them', obj: dns('WWW.Example.com', '_sip._tcp.example.com') },
    { name: 'hyphen at a label edge', obj: dns('-a.example.com'), field: 'spec.dnsNames[0]', message: dnsNameMessage },
    { name: 'non-ASCII (use the xn-- form)', obj: dns('bücher.example'), field: 'spec.dnsNames[0]' },
    { name: 'empty', obj: dns(''), field: 'spec.dnsNames[0]', message: 'must not be empty' },
    { name: 'leading dot', obj: dns('.example.com'), field: 'spec.dnsNames[0]' },
    { name: 'trailing dot', obj: dns('example.com.'), field: 'spec.dnsNames[0]' },
    { name: 'empty label', obj: dns('a..example.com'), field: 'spec.dnsNames[0]' },
    { name: 'wildcard inside', obj: dns('a.*.example.com'), field: 'spec.dnsNames[0]', message: /only allowed as the whole leftmost label/ },
    { name: 'partial wildcard', obj: dns('*a.example.com'), field: 'spec.dnsNames[0]', message: /only allowed as the whole leftmost label/ },
    { name: 'double wildcard', obj: dns('*.*.example.com'), field: 'spec.dnsNames[0]', message: /only allowed/ },
    { name: 'bare wildcard', obj: dns('*'), field: 'spec.dnsNames[0]', message: /only allowed/ },
    { name: '64-character label', obj: dns(`${'a'.repeat(64)}.com`), field: 'spec.dnsNames[0]', message: /63 characters/ },
    { name: '254 characters', obj: dns(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`), field: 'spec.dnsNames[0]', message: /253 characters/ },
  ]);
});

test('the error names the field path, the value and the rule', () => {
  const errs = validate(R.Certificate, certWith({ dnsNames: ['ok.example.com', 'a\nb'] }));
  assert.equal(invalidObjectMessage(R.Certificate, 'c', errs),
    `Certificate.cert-manager.io "c" is invalid: spec.dnsNames[1]: Invalid value: "a\\nb": ${dnsNameMessage}`);
});

test('emailAddresses: a bare ASCII address of dot-atoms', () => {
  const email = (...emailAddresses: string[]) => certWith({ emailAddresses });
  check([
    { name: 'plain', obj: email('a@example.com', 'a.b+c_d@sub.example.com', "o'hara@example.com") },
    { name: 'NUL', obj: email('a\u0000@example.com'), field: 'spec.emailAddresses[0]', message: /control characters/ },
    { name: 'newline', obj: email('a@example.com\nBcc: x@example.com'), field: 'spec.emailAddresses[0]', message: /only contains the email address itself/ },
    { name: 'display name', obj: email('Bob <bob@example.com>'), field: 'spec.emailAddresses[0]', message: /only contains the email address itself/ },
    { name: 'non-ASCII', obj: email('ü@example.com'), field: 'spec.emailAddresses[0]', message: /must be ASCII/ },
    { name: 'no @', obj: email('bob'), field: 'spec.emailAddresses[0]', message: /missing @/ },
    { name: 'two @', obj: email('a@b@example.com'), field: 'spec.emailAddresses[0]', message: /dot-atoms/ },
    { name: 'double dot', obj: email('a..b@example.com'), field: 'spec.emailAddresses[0]', message: /dot-atoms/ },
    { name: 'empty domain', obj: email('a@'), field: 'spec.emailAddresses[0]' },
  ]);
});

test('uris: parse, ASCII, no whitespace or control characters', () => {
  const uri = (...uris: string[]) => certWith({ uris });
  check([
    { name: 'plain', obj: uri('spiffe://cluster.local/ns/a/sa/b', 'https://example.com/p?q=1#f', 'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66') },
    { name: 'newline (a URL parser would drop it)', obj: uri('https://a\nb.example.com'), field: 'spec.uris[0]', message: /whitespace or control/ },
    { name: 'tab', obj: uri('https://a.example.com/\tx'), field: 'spec.uris[0]', message: /whitespace or control/ },
    { name: 'NUL', obj: uri('https://a.example.com/\u0000'), field: 'spec.uris[0]', message: /control/ },
    { name: 'space', obj: uri('https://a.example.com/a b'), field: 'spec.uris[0]' },
    { name: 'non-ASCII', obj: uri('https://bücher.example/'), field: 'spec.uris[0]', message: /must be ASCII/ },
    { name: 'not a URI', obj: uri('https://[::1/'), field: 'spec.uris[0]', message: /^invalid URI$/ },
    // upstream (Go's url.Parse) takes a reference without a scheme (issue 15)
    { name: 'no scheme', obj: uri('relative/path') },
  ]);
});

test('ipAddresses: what Go net.ParseIP accepts', () => {
  const ip = (...ipAddresses: string[]) => certWith({ ipAddresses });
  check([
    { name: 'v4 and v6', obj: ip('10.0.0.1', '::1', '2001:db8::1', '::ffff:10.0.0.1') },
    { name: 'octet out of range', obj: ip('10.0.0.300'), field: 'spec.ipAddresses[0]', message: /^invalid IP address$/ },
    { name: 'zone', obj: ip('fe80::1%eth0'), field: 'spec.ipAddresses[0]' },
    { name: 'space', obj: ip(' 10.0.0.1'), field: 'spec.ipAddresses[0]' },
    { name: 'newline', obj: ip('10.0.0.1\n'), field: 'spec.ipAddresses[0]' },
    { name: 'CIDR', obj: ip('10.0.0.0/8'), field: 'spec.ipAddresses[0]' },
  ]);
});

test('every string of the cert-manager kinds is well-formed Unicode, keys included', () => {
  const unicode = /^must be well-formed Unicode: contains a lone UTF-16 surrogate \(U\+D800\)/;
  const issuer = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'ns' }, spec });
  check([
    { name: 'surrogate pairs are fine', obj: certWith({ commonName: 'café 😀', subject: { organizations: ['Ünïcode 🚀'] } }) },
    { name: 'commonName', obj: certWith({ commonName: 'bad\ud800name' }), field: 'spec.commonName', message: unicode },
    { name: 'dnsNames (one error, not two)', obj: certWith({ dnsNames: ['ok.example.com', 'x\ud800.example.com'] }), field: 'spec.dnsNames[1]', message: unicode },
    { name: 'organizations', obj: certWith({ dnsNames: ['a.example.com'], subject: { organizations: ['Acme\ud800'] } }), field: 'spec.subject.organizations[0]', message: unicode },
    { name: 'serialNumber (low surrogate)', obj: certWith({ dnsNames: ['a.example.com'], subject: { serialNumber: '\udc00' } }), field: 'spec.subject.serialNumber', message: /U\+DC00/ },
    { name: 'emailAddresses', obj: certWith({ emailAddresses: ['a\ud800@example.com'] }), field: 'spec.emailAddresses[0]', message: unicode },
    { name: 'uris', obj: certWith({ uris: ['https://example.com/\ud800'] }), field: 'spec.uris[0]', message: unicode },
    { name: 'otherNames', obj: certWith({ dnsNames: ['a.example.com'], otherNames: [{ oid: '1.2.3', utf8Value: '\ud800' }] }), field: 'spec.otherNames[0].utf8Value', message: unicode },
    { name: 'annotation value', obj: certWith({ dnsNames: ['a.example.com'] }, { annotations: { note: '\ud800' } }), field: 'metadata.annotations.note', message: unicode },
    { name: 'issuer field', obj: issuer({ ca: { secretName: 'ca\ud800' } }), field: 'spec.ca.secretName', message: unicode },
  ]);
  // A key: the path spells the surrogate as \ud800 so the message itself stays well-formed.
  const errs = validate(R.Certificate, certWith({ dnsNames: ['a.example.com'], secretTemplate: { annotations: { 'k\ud800': 'v' } } }));
  assert.ok(errs.some((e) => e.field === 'spec.secretTemplate.annotations[k\\ud800]' && /^key must be well-formed Unicode/.test(e.message)), JSON.stringify(errs));
  assert.ok(errs.every((e) => !/\p{Cs}/u.test(fieldErrorText(e))));
});

test('secretName is a Secret name: a DNS-1123 subdomain of at most 253 characters', () => {
  check([
    { name: '253', obj: certWith({ dnsNames: ['a.example.com'], secretName: 'a'.repeat(253) }) },
    { name: '254', obj: certWith({ dnsNames: ['a.example.com'], secretName: 'a'.repeat(254) }), field: 'spec.secretName', message: 'must be no more than 253 characters' },
    { name: 'NUL', obj: certWith({ dnsNames: ['a.example.com'], secretName: 'a\u0000b' }), field: 'spec.secretName', message: /RFC 1123 subdomain/ },
    { name: 'path', obj: certWith({ dnsNames: ['a.example.com'], secretName: '../etc' }), field: 'spec.secretName' },
  ]);
});

test('duration and renewBefore are bounded like Go durations (about 292 years), naming the field', () => {
  const d = (spec: Record<string, unknown>) => certWith({ dnsNames: ['a.example.com'], ...spec });
  check([
    { name: 'longest Go duration', obj: d({ duration: '2562047h' }) },
    { name: '99999999999999h', obj: d({ duration: '99999999999999h' }), field: 'spec.duration', message: /^invalid duration "99999999999999h": out of range \(the longest duration is 2562047h47m16.854775807s/ },
    { name: 'renewBefore too', obj: d({ renewBefore: '99999999999999h' }), field: 'spec.renewBefore', message: /out of range/ },
    { name: 'CertificateRequest duration', obj: { apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'cr', namespace: 'ns' }, spec: { request: '', issuerRef: { name: 'ca' }, duration: '99999999999999h' } }, field: 'spec.duration', message: /out of range/ },
  ]);
});

test('CertificateRequest: the names in the CSR are held to the Certificate rules', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const cr = (pem: string): KubeObject => ({
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'cr', namespace: 'ns' },
    spec: { request: Buffer.from(pem).toString('base64'), issuerRef: { name: 'ca' } },
  });
  check([
    { name: 'good names', obj: cr(await createCSR({ dnsNames: ['a.example.com', '*.example.com'], emailAddresses: ['a@example.com'], uris: ['spiffe://x/y'], ipAddresses: ['10.0.0.1'] }, key)) },
    { name: 'good names, hand-encoded', obj: cr(await foreignCSR(key, [['dns', 'a.example.com']])) },
    { name: 'newline in a dnsName', obj: cr(await foreignCSR(key, [['dns', 'ok.example.com'], ['dns', 'a\nb']])), field: 'spec.request', message: `encoded CSR error: dnsNames[1]: Invalid value: "a\\nb": ${dnsNameMessage}` },
    { name: '$() in a dnsName', obj: cr(await foreignCSR(key, [['dns', '$(reboot).example.com']])), field: 'spec.request', message: /^encoded CSR error: dnsNames\[0\]/ },
    { name: 'NUL in an email', obj: cr(await foreignCSR(key, [['email', 'a\u0000@example.com']])), field: 'spec.request', message: /^encoded CSR error: emailAddresses\[0\].*control characters/ },
    { name: 'space in a URI', obj: cr(await foreignCSR(key, [['uri', 'https://a.example.com/a b']])), field: 'spec.request', message: /^encoded CSR error: uris\[0\]/ },
  ]);
});
