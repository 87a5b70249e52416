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
