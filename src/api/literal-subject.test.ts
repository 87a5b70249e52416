// spec.literalSubject is read by one parser (pki/x509-fields.ts) at admission and when the CSR is
// built: a subject admission accepts can be encoded, and one the CSR builder cannot encode is
// refused at admission with a field error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Certificate } from './resources.ts';
import { validate } from './validation.ts';
import { encodeLiteralSubject, parseLiteralSubject } from '../pki/x509-fields.ts';
import type { KubeObject } from './meta.ts';

const cert = (literalSubject: string): KubeObject => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'default' },
  spec: { secretName: 'c-tls', issuerRef: { name: 'ca' }, dnsNames: ['a.example.com'], literalSubject },
});
const subjectErrors = (s: string) => validate(Certificate, cert(s)).filter((e) => e.field === 'spec.literalSubject');

test('a lower-case key, once admitted and then refused by the CSR builder, is refused at admission (as cert-manager does)', () => {
  assert.throws(() => encodeLiteralSubject('cn=x,O=Acme'), /unrecognized key with value \[x\]/);
  assert.deepEqual(subjectErrors('cn=x,O=Acme').map((e) => e.message), ['Literal subject contains unrecognized key with value [x]']);
});

test('padding around keys and values is trimmed by both, not encoded as an empty subject', () => {
  assert.deepEqual(subjectErrors(' CN = a , O = Acme '), []);
  assert.deepEqual(encodeLiteralSubject(' CN = a , O = Acme '), encodeLiteralSubject('CN=a,O=Acme'));
});

test('admission and the CSR builder agree on every literalSubject, good or bad', () => {
  for (const s of ['CN=lit,OU=team+OU=ops,O=Example,C=US', 'CN=a\\,b,O=Acme+OU=x', 'CN=a,UID=u1,DC=example+DC=com', '2.5.4.3=x,O=y',
    'CN=a,', 'CN=a,FOO=b', 'E=x@y', '=x', 'CN=a\\', 'CN=a,,O=b', 'serialNumber=1,CN=a']) {
    const admitted = subjectErrors(s).length === 0;
    let encoded = true;
    try { encodeLiteralSubject(s); } catch { encoded = false; }
    assert.equal(admitted, encoded, `${JSON.stringify(s)}: admission ${admitted ? 'accepts' : 'refuses'}, the CSR builder ${encoded ? 'encodes' : 'refuses'}`);
  }
  assert.deepEqual(parseLiteralSubject('CN=a,OU=x+OU=y').map((rdn) => rdn.map((a) => a.key)), [['CN'], ['OU', 'OU']]);
});

test('unknown keys are refused one error each, and the CN beside them still counts (upstream reads the whole DN first)', () => {
  // only dnsNames-less Certificates show it: the CN is their one identity
  const noSans = (literalSubject: string): KubeObject => {
    const o = cert(literalSubject);
    delete (o.spec as Record<string, unknown>).dnsNames;
    return o;
  };
  const errors = validate(Certificate, noSans('CN=x, FOO=bar, BAZ=qux')).map((e) => `${e.field}: ${e.message}`);
  assert.deepEqual(errors, [
    'spec.literalSubject: Literal subject contains unrecognized key with value [bar]',
    'spec.literalSubject: Literal subject contains unrecognized key with value [qux]',
  ]);
  // a DN that cannot be read at all has no CN to count
  assert.ok(validate(Certificate, noSans('CN=x,')).some((e) => /at least one of commonName/.test(e.message)));
});

// Upstream reads literalSubject with go-ldap v3.4.14's ParseDN (pkg/util/pki/subject.go) and
// looks keys up in its attributeTypeNames, else parses them as OIDs (ParseObjectIdentifier,
// strconv.Atoi per arc). Rows: what each DN is read as, or the error it is refused with.
test('literalSubject is read as go-ldap ParseDN reads it for cert-manager', () => {
  const read = (s: string) => parseLiteralSubject(s).map((rdn) => rdn.map((a) => `${a.type}=${a.value}`).join('+'));
  const rows: [string, string[] | RegExp][] = [
    // "\XX" is a byte: UTF-8 sequences make their character
    ['CN=K\\C3\\B6ln', ['2.5.4.3=Köln']],
    ['CN=bad\\FF', /not valid UTF-8/],
    // ';' separates RDNs as ',' does
    ['CN=semi;O=Example Org', ['2.5.4.3=semi', '2.5.4.10=Example Org']],
    // escaped leading and trailing spaces are kept; unescaped ones trimmed (an even run of
    // backslashes before a trailing space leaves it unescaped)
    ['CN=\\ lead\\ ,O=\\20pad\\20', ['2.5.4.3= lead ', '2.5.4.10= pad ']],
    ['CN=a\\\\ ', ['2.5.4.3=a\\']],
    // escaped specials stand for themselves
    ['CN=a\\;b\\=c\\<d\\>\\#', ['2.5.4.3=a;b=c<d>#']],
    // OID arcs are read by Atoi: "03" is 3, so this key is commonName
    ['2.5.4.03=viaoid,O=x', ['2.5.4.3=viaoid', '2.5.4.10=x']],
    // RFC 4514 §2.4: these must be escaped
    ['CN=a"b', /unescaped character: '"'/],
    ['CN=x,O=a<b>', /unescaped character: '<'/],
    ['CN=a\u0000b', /unescaped NULL/],
    ['CN=a\\zz', /escaped character/],
    // a "#hex" value is one BER element and nothing after it
    ['CN=#0C036162630000', /trailing bytes/],
    ['CN=#0C03616263', ['2.5.4.3=abc']],
  ];
  for (const [dn, want] of rows) {
    if (want instanceof RegExp) assert.throws(() => read(dn), want, JSON.stringify(dn));
    else assert.deepEqual(read(dn), want, JSON.stringify(dn));
  }
  // POSTALCODE is not one of upstream's attributeTypeNames
  assert.deepEqual(subjectErrors('CN=pc,POSTALCODE=12345').map((e) => e.message), ['Literal subject contains unrecognized key with value [12345]']);
  // the CN counts for admission whatever spelling named it
  const noSans = cert('2.5.4.03=viaoid,O=x');
  delete (noSans.spec as Record<string, unknown>).dnsNames;
  assert.deepEqual(validate(Certificate, noSans), []);
  // the 64-byte limit counts the decoded value
  assert.deepEqual(subjectErrors(`CN=${'\\C3\\B6'.repeat(32)}`), []);
});

test('an otherName OID is read as upstream reads it (Atoi per arc) ', () => {
  const withOther = (oid: string): KubeObject => {
    const o = cert('CN=x');
    (o.spec as Record<string, unknown>).otherNames = [{ oid, utf8Value: 'u@example.com' }];
    return o;
  };
  assert.deepEqual(validate(Certificate, withOther('1.3.6.1.4.1.311.20.2.03')), []);
  for (const bad of ['1', '3.1', '1.40', '1.3.x', '1.-3', '1..3']) {
    assert.ok(validate(Certificate, withOther(bad)).some((e) => e.field === 'spec.otherNames[0].oid' && e.message === 'invalid oid syntax'), bad);
  }
});
