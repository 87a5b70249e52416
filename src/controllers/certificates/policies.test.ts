// The trigger and readiness policy chain as a table: one row per reason, and one row for each
// pair of neighbouring policies where both are violated, so the first in cert-manager's order
// must win. The last test runs the table against every chain with one policy removed or moved,
// and requires each to fail a row: the order is behaviour (the reason on Issuing and Ready, the
// event users read), not an implementation detail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstViolation, secretPolicies, temporaryCertificatePolicies, type CertificateInput, type Policy } from './policies.ts';
import { createTemporaryCertificate } from '../../pki/temporary.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';
import { NOW, DAY, HOUR, cert, certificate, certificateRequest, csr, issuedAnnotations, key, secretFor } from '../testing/fixtures.ts';

interface Row {
  name: string;
  /** the behaviour relied on */
  why: string;
  input: CertificateInput;
  /** undefined: no policy is violated */
  want?: { reason: string; message: RegExp };
}

async function rows(): Promise<Row[]> {
  const mainKey = await key('main');
  const otherKey = await key('other');
  const edKey = await key('ed25519', { algorithm: 'Ed25519', encoding: 'PKCS8' });
  const good = await cert({ keyPem: mainKey });
  const otherCert = await cert({ keyPem: otherKey });
  const edCert = await cert({ keyPem: edKey });
  const wrongNames = await cert({ keyPem: mainKey, template: { dnsNames: ['b.example.test'] } });
  const edWrongNames = await cert({ keyPem: edKey, template: { dnsNames: ['b.example.test'] } });
  const temporary = await createTemporaryCertificate({ template: { dnsNames: ['a.example.test'] }, keyPem: mainKey, notBefore: NOW, durationMs: 90 * DAY });
  const crt = certificate();
  const ann = issuedAnnotations();
  const byOtherIssuer = { ...ann, [CertificateAnnotation.issuerName]: 'other-ca' };
  const forOtherCertificate = { ...ann, [CertificateAnnotation.certificateName]: 'b' };
  const request = async (keyPem: string, dnsNames = ['a.example.test']) => certificateRequest({ csrPem: await csr({ dnsNames }, keyPem) });
  const undecodable = certificateRequest({ csrPem: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n' });
  const garbage = 'not a PEM block';

  return [
    // one row per reason, each policy in turn
    { name: 'no Secret', why: 'issuance starts when the Secret does not exist', input: { certificate: crt }, want: { reason: 'DoesNotExist', message: /Secret does not exist/ } },
    { name: 'Secret without data', why: 'a Secret with no data map is re-issued', input: { certificate: crt, secret: secretFor({ data: null }) }, want: { reason: 'MissingData', message: /does not contain any data/ } },
    { name: 'no tls.key', why: 'tls.key is checked before tls.crt', input: { certificate: crt, secret: secretFor({ certPem: good }) }, want: { reason: 'MissingData', message: /does not contain a private key/ } },
    { name: 'no tls.crt', why: 'a key alone is not a certificate', input: { certificate: crt, secret: secretFor({ keyPem: mainKey }) }, want: { reason: 'MissingData', message: /does not contain a certificate/ } },
    { name: 'tls.key does not decode', why: 'garbage key data is InvalidKeyPair, with the parse error', input: { certificate: crt, secret: secretFor({ keyPem: garbage, certPem: good }) }, want: { reason: 'InvalidKeyPair', message: /invalid private key data: / } },
    { name: 'tls.crt does not decode', why: 'garbage certificate data is InvalidCertificate', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: garbage }) }, want: { reason: 'InvalidCertificate', message: /contains an invalid certificate: / } },
    { name: 'tls.crt holds the key as well', why: 'cert-manager parses every block of tls.crt as a certificate; a combined PEM is re-issued, not kept (or mirrored to public files)', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good + mainKey }) }, want: { reason: 'InvalidCertificate', message: /contains an invalid certificate: error parsing X\.509 certificate: tls\.crt holds a "[A-Z ]*PRIVATE KEY" PEM block, not a certificate/ } },
    { name: 'key and certificate differ', why: 'a key that does not match its certificate is InvalidKeyPair', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: otherCert }) }, want: { reason: 'InvalidKeyPair', message: /private key that does not match the certificate/ } },
    { name: 'issued by another issuer', why: 'an issuerRef change re-issues', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: byOtherIssuer }) }, want: { reason: 'IncorrectIssuer', message: /previously issued by "Issuer\.cert-manager\.io\/other-ca"/ } },
    {
      name: 'issuer kind changed to ClusterIssuer', why: 'kind is compared with defaulting: Issuer/ca is not ClusterIssuer/ca',
      input: { certificate: certificate({ spec: { issuerRef: { name: 'ca', kind: 'ClusterIssuer' } } }), secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }) },
      want: { reason: 'IncorrectIssuer', message: /previously issued by "Issuer\.cert-manager\.io\/ca"/ },
    },
    { name: 'no issuer annotations', why: 'reference 9.1: unlike upstream, an unannotated Secret (e.g. imported) is not a mismatch', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good }) } },
    { name: 'temporary certificate', why: 'a temporary certificate never counts as issued, although it has no issuer annotations', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: temporary }) }, want: { reason: 'IncorrectIssuer', message: /temporary certificate/ } },
    { name: 'issued for another Certificate', why: 'two Certificates sharing a secretName are reported', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: forOtherCertificate }) }, want: { reason: 'IncorrectCertificate', message: /Secret was issued for "b"/ } },
    { name: 'key algorithm differs from spec', why: 'spec.privateKey.algorithm change re-issues with a new key', input: { certificate: crt, secret: secretFor({ keyPem: edKey, certPem: edCert, annotations: ann }) }, want: { reason: 'SecretMismatch', message: /^Existing private key is not up to date for spec: \[spec\.privateKey\.algorithm\]$/ } },
    { name: 'key size differs from spec', why: 'spec.privateKey.size 384 against a P-256 key re-issues', input: { certificate: certificate({ spec: { privateKey: { algorithm: 'ECDSA', size: 384 } } }), secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }) }, want: { reason: 'SecretMismatch', message: /^Existing private key is not up to date for spec: \[spec\.privateKey\.size\]$/ } },
    { name: 'no spec.privateKey', why: 'RSA 2048 is the default algorithm: a P-256 key does not match it', input: { certificate: certificate({ spec: { privateKey: undefined } }), secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }) }, want: { reason: 'SecretMismatch', message: /Existing private key is not up to date for spec/ } },
    { name: 'current request made for another key', why: 'the Secret key must be the one the current request was made for', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }), currentCR: await request(otherKey) }, want: { reason: 'SecretMismatch', message: /does not match the current CertificateRequest/ } },
    { name: 'current request does not decode', why: 'an unreadable current request is re-issued', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }), currentCR: undecodable }, want: { reason: 'InvalidCertificateRequest', message: /Failed to decode current CertificateRequest/ } },
    { name: 'current request for other names', why: 'a spec change is seen against the current request', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }), currentCR: await request(mainKey, ['b.example.test']) }, want: { reason: 'RequestChanged', message: /not up to date: \[spec\.dnsNames\]/ } },
    { name: 'no current request, certificate for other names', why: 'without a request the Secret\'s certificate is compared with the spec', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: wrongNames, annotations: ann }) }, want: { reason: 'SecretMismatch', message: /Existing issued Secret is not up to date for spec: \[spec\.dnsNames\]/ } },
    { name: 'up to date, with its current request', why: 'nothing to do: no re-issuance', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }), currentCR: await request(mainKey) } },
    { name: 'up to date, no current request', why: 'nothing to do: no re-issuance', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }) } },

    // several reasons apply: the first policy in order wins
    { name: 'first wins: key garbage and no tls.crt', why: 'MissingData before InvalidKeyPair', input: { certificate: crt, secret: secretFor({ keyPem: garbage }) }, want: { reason: 'MissingData', message: /does not contain a certificate/ } },
    { name: 'first wins: key pair broken and another issuer', why: 'InvalidKeyPair before IncorrectIssuer', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: otherCert, annotations: byOtherIssuer }) }, want: { reason: 'InvalidKeyPair', message: /does not match the certificate/ } },
    { name: 'first wins: another issuer and another Certificate', why: 'IncorrectIssuer before IncorrectCertificate', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: { ...byOtherIssuer, [CertificateAnnotation.certificateName]: 'b' } }) }, want: { reason: 'IncorrectIssuer', message: /previously issued by/ } },
    { name: 'first wins: another Certificate and a key of another algorithm', why: 'IncorrectCertificate before the key-spec SecretMismatch', input: { certificate: crt, secret: secretFor({ keyPem: edKey, certPem: edCert, annotations: forOtherCertificate }) }, want: { reason: 'IncorrectCertificate', message: /Secret was issued for "b"/ } },
    { name: 'first wins: key of another algorithm and a request for another key', why: 'the key-spec check before the request-key check (same reason, other message)', input: { certificate: crt, secret: secretFor({ keyPem: edKey, certPem: edCert, annotations: ann }), currentCR: await request(otherKey) }, want: { reason: 'SecretMismatch', message: /Existing private key is not up to date for spec/ } },
    { name: 'first wins: request for another key and other names', why: 'the request-key SecretMismatch before RequestChanged', input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: ann }), currentCR: await request(otherKey, ['b.example.test']) }, want: { reason: 'SecretMismatch', message: /does not match the current CertificateRequest/ } },
    { name: 'first wins: key of another algorithm and a certificate for other names', why: 'the key-spec check before the certificate-spec check', input: { certificate: crt, secret: secretFor({ keyPem: edKey, certPem: edWrongNames, annotations: ann }) }, want: { reason: 'SecretMismatch', message: /Existing private key is not up to date for spec/ } },
  ];
}

/** The rows a chain gets wrong; a policy that throws (it relies on an earlier one) counts as wrong. */
function wrongRows(chain: Policy[], table: Row[]): string[] {
  const wrong: string[] = [];
  for (const r of table) {
    let got;
    try {
      got = firstViolation(chain, r.input);
    } catch {
      wrong.push(r.name);
      continue;
    }
    const ok = r.want ? got?.reason === r.want.reason && r.want.message.test(got.message) : got === undefined;
    if (!ok) wrong.push(r.name);
  }
  return wrong;
}

test('policy chain: one row per reason, first violation wins', async () => {
  // every row is checked before failing, so a broken chain lists all the rows it gets wrong
  const failures: string[] = [];
  for (const r of await rows()) {
    const got = firstViolation(secretPolicies, r.input);
    const ok = r.want ? got?.reason === r.want.reason && r.want.message.test(got.message) : got === undefined;
    if (!ok) failures.push(`${r.name} (${r.why}): want ${r.want ? `${r.want.reason} ${r.want.message}` : 'no violation'}, got ${got ? `${got.reason}: ${got.message}` : 'no violation'}`);
  }
  assert.deepEqual(failures, []);
});

test('policy chain: removing or moving any policy fails a row', async () => {
  const table = await rows();
  assert.deepEqual(wrongRows(secretPolicies, table), []);
  const n = secretPolicies.length;
  assert.equal(n, 8, 'the eight checks of cert-manager\'s trigger chain before the renewal check');
  for (let i = 0; i < n; i++) {
    const removed = secretPolicies.filter((_, j) => j !== i);
    assert.notDeepEqual(wrongRows(removed, table), [], `removing policy ${i + 1} goes unnoticed`);
    for (let to = 0; to < n; to++) {
      if (to === i) continue;
      const moved = [...removed];
      moved.splice(to, 0, secretPolicies[i]);
      assert.notDeepEqual(wrongRows(moved, table), [], `moving policy ${i + 1} to position ${to + 1} goes unnoticed`);
    }
  }
});

test('temporary-certificate chain: only whether the Secret lacks a usable key pair', async () => {
  const mainKey = await key('main');
  const good = await cert({ keyPem: mainKey });
  const crt = certificate();
  const cases: [string, CertificateInput, string | undefined][] = [
    ['no Secret', { certificate: crt }, 'DoesNotExist'],
    ['no tls.crt', { certificate: crt, secret: secretFor({ keyPem: mainKey }) }, 'MissingData'],
    ['key and certificate differ', { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: await cert({ keyPem: await key('other') }) }) }, 'InvalidKeyPair'],
    // a usable pair from another issuer is kept until the real one arrives: no temporary certificate over it
    ['usable pair from another issuer', { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: { ...issuedAnnotations(), [CertificateAnnotation.issuerName]: 'x' } }) }, undefined],
    ['expired but usable pair', { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: await cert({ keyPem: mainKey, notBefore: new Date(NOW.getTime() - 2 * DAY), durationMs: HOUR }) }) }, undefined],
  ];
  for (const [name, input, reason] of cases) assert.equal(firstViolation(temporaryCertificatePolicies, input)?.reason, reason, name);
});
