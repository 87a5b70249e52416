// Table tests of the issuing and request manager decisions with real keys, CSRs and certificates,
// and of how a temporary certificate is written and judged.
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { generatePrivateKey } from '../../../pki/keys.ts';
import { createCSR } from '../../../pki/csr.ts';
import { signCertificate } from '../../../pki/sign.ts';
import { CertificateAnnotation, ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION, SubjectAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { decideIssuing } from './issuing.ts';
import { buildSecretData, certificateAnnotations, composeSecret } from './secret.ts';
import { createTemporaryCertificate } from '../../../pki/temporary.ts';
import { firstViolation, secretPolicies } from '../policies.ts';
import { decideReadiness } from '../readiness/readiness.ts';
import type { Condition } from '../../../api/meta.ts';
import { decideRequestManager } from '../requestmanager/requestmanager.ts';
import { requestName } from '../../../shared/revisions.ts';
import { keyFactsMemo } from '../../../shared/parse-memo.ts';
import { privateKeyFacts } from '../../../pki/key-facts.ts';

const now = new Date('2026-06-01T00:00:00Z');
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function fixture() {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' });
  const otherKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' });
  const template = { dnsNames: ['a.example.test'] };
  const csr = await createCSR(template, keyPem);
  const crt: CertificateObj = {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
    metadata: { name: 'a', namespace: 'default', uid: 'crt-uid', generation: 1 },
    spec: { secretName: 'a-tls', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' }, privateKey: { algorithm: 'ECDSA' } },
    status: {
      nextPrivateKeySecretName: 'a-next',
      conditions: [{ type: 'Issuing', status: 'True', reason: 'DoesNotExist', message: '', lastTransitionTime: '2026-06-01T00:00:00Z' }],
    },
  };
  const keySecret: Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-next', namespace: 'default' }, data: { 'tls.key': b64(keyPem) } };
  const request = (attempt: number, status?: CertificateRequestObj['status'], csrPem = csr): CertificateRequestObj => ({
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: { name: 'a-1', namespace: 'default', annotations: { [CertificateAnnotation.revision]: '1', [CertificateAnnotation.issuanceAttempt]: String(attempt) } },
    spec: { request: b64(csrPem), issuerRef: { name: 'ca' } },
    status,
  });
  const signed = async (key: string, notBefore: Date, durationMs: number) =>
    signCertificate({ csrPem: await createCSR(template, key), notBefore, durationMs, selfSignKeyPem: key });
  return { crt, keySecret, request, signed, keyPem, otherKey, csr };
}

const cond = (type: string, status: Condition['status'], reason: string, message = 'm'): Condition => ({ type, status, reason, message });

test('issuing: outcomes of the request for the next revision', async () => {
  const f = await fixture();
  const issuedCert = await f.signed(f.keyPem, now, 3_600_000);
  const cases: { name: string; cr: CertificateRequestObj; want: string; reason?: string }[] = [
    { name: 'no outcome yet', cr: f.request(0), want: 'wait' },
    { name: 'pending', cr: f.request(0, { conditions: [cond('Ready', 'False', 'Pending')] }), want: 'wait' },
    { name: 'denied', cr: f.request(0, { conditions: [cond('Denied', 'True', 'NotAllowed')] }), want: 'fail', reason: 'NotAllowed' },
    { name: 'invalid request', cr: f.request(0, { conditions: [cond('InvalidRequest', 'True', 'BadCSR')] }), want: 'fail', reason: 'BadCSR' },
    { name: 'failed', cr: f.request(0, { conditions: [cond('Ready', 'False', 'Failed')] }), want: 'fail', reason: 'Failed' },
    { name: 'issued', cr: f.request(0, { certificate: b64(issuedCert), conditions: [cond('Ready', 'True', 'Issued')] }), want: 'issue' },
    {
      name: 'issued with another key', want: 'fail', reason: 'InvalidCertificate',
      cr: f.request(0, { certificate: b64(await f.signed(f.otherKey, now, 3_600_000)), conditions: [cond('Ready', 'True', 'Issued')] }),
    },
    {
      name: 'issued already expired', want: 'fail', reason: 'InvalidCertificate',
      cr: f.request(0, { certificate: b64(await f.signed(f.keyPem, new Date(now.getTime() - 7_200_000), 3_600_000)), conditions: [cond('Ready', 'True', 'Issued')] }),
    },
    { name: 'a failure from an earlier attempt is not counted again', cr: f.request(0, { conditions: [cond('Denied', 'True', 'No')] }), want: 'wait' },
  ];
  for (const c of cases) {
    const crt = c.name.startsWith('a failure from an earlier') ? { ...f.crt, status: { ...f.crt.status, issuanceAttempts: 1 } } : f.crt;
    const d = decideIssuing({ certificate: crt, nextKeySecret: f.keySecret, requests: [c.cr] }, now);
    assert.equal(d.kind, c.want, c.name);
    if (d.kind === 'fail') {
      assert.equal(d.event.reason, c.reason, c.name);
      assert.equal(d.status.issuanceAttempts, 1, c.name);
      assert.equal(d.status.lastFailureTime, '2026-06-01T00:00:00Z', c.name);
      assert.equal(d.status.conditions?.find((x) => x.type === 'Issuing')?.status, 'False', c.name);
    }
  }
});

test('issuing waits for a request that does not match the next key', async () => {
  const f = await fixture();
  const foreign = await createCSR({ dnsNames: ['a.example.test'] }, f.otherKey);
  const d = decideIssuing({ certificate: f.crt, nextKeySecret: f.keySecret, requests: [f.request(0, { conditions: [cond('Ready', 'False', 'Failed')] }, foreign)] }, now);
  assert.equal(d.kind, 'wait');
});

test('request manager: creates one request, replaces failed or mismatched ones, keeps the current attempt', async () => {
  const f = await fixture();
  const create = decideRequestManager({ certificate: f.crt, nextKeySecret: f.keySecret, requests: [] });
  assert.deepEqual(create, [{ kind: 'create', name: 'a-1', revision: 1, attempt: 0, keySecretName: 'a-next' }]);

  const keep = decideRequestManager({ certificate: f.crt, nextKeySecret: f.keySecret, requests: [f.request(0)] });
  assert.deepEqual(keep, []);

  // attempt 0 was denied and counted (issuanceAttempts 1): it is deleted; the new one comes after the delete is seen
  const retry = { ...f.crt, status: { ...f.crt.status, issuanceAttempts: 1 } };
  const replaced = decideRequestManager({ certificate: retry, nextKeySecret: f.keySecret, requests: [f.request(0, { conditions: [cond('Denied', 'True', 'No')] })] });
  assert.deepEqual(replaced.map((a) => a.kind), ['delete']);
  assert.deepEqual(decideRequestManager({ certificate: retry, nextKeySecret: f.keySecret, requests: [] }), [{ kind: 'create', name: 'a-1', revision: 1, attempt: 1, keySecretName: 'a-next' }]);

  // the spec changed: the request no longer matches
  const changed = { ...f.crt, spec: { ...f.crt.spec, dnsNames: ['a.example.test', 'b.example.test'] } };
  assert.deepEqual(decideRequestManager({ certificate: changed, nextKeySecret: f.keySecret, requests: [f.request(0)] }).map((a) => a.kind), ['delete']);

  // not issuing: nothing to do
  const idle = { ...f.crt, status: { ...f.crt.status, conditions: [] } };
  assert.deepEqual(decideRequestManager({ certificate: idle, nextKeySecret: f.keySecret, requests: [] }), []);
});

test('request names are stable and bounded like cert-manager\'s', () => {
  assert.equal(requestName('web', 3), 'web-3');
  const long = 'x'.repeat(240);
  const n = requestName(long, 1);
  assert.ok(n.length <= 253);
  assert.match(n, /^x{168}-[0-9a-f]{64}-1$/);
});

test('issuing: temporary certificates while the request is pending', async () => {
  const f = await fixture();
  const annotated: CertificateObj = { ...f.crt, metadata: { ...f.crt.metadata, annotations: { [ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION]: 'true' } } };
  const pending = f.request(0, { conditions: [cond('Ready', 'False', 'Pending')] });
  const secretWith = (keyPem: string, certPem: string): Secret => ({
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-tls', namespace: 'default' }, data: { 'tls.key': b64(keyPem), 'tls.crt': b64(certPem) },
  });
  const ownPair = await f.signed(f.otherKey, now, 3_600_000);
  const cases: { name: string; crt: CertificateObj; cr: CertificateRequestObj; secret?: Secret; want: string }[] = [
    { name: 'annotation off, Secret missing', crt: f.crt, cr: pending, want: 'wait' },
    { name: 'annotation "false"', crt: { ...annotated, metadata: { ...annotated.metadata, annotations: { [ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION]: 'false' } } }, cr: pending, want: 'wait' },
    { name: 'annotation on, Secret missing', crt: annotated, cr: pending, want: 'temporary' },
    { name: 'annotation on, Secret without tls.crt', crt: annotated, cr: pending, secret: { ...secretWith(f.otherKey, ownPair), data: { 'tls.key': b64(f.otherKey) } }, want: 'temporary' },
    { name: 'annotation on, key and certificate differ', crt: annotated, cr: pending, secret: secretWith(f.keyPem, ownPair), want: 'temporary' },
    { name: 'annotation on, Secret holds a matching pair (a renewal)', crt: annotated, cr: pending, secret: secretWith(f.otherKey, ownPair), want: 'wait' },
    // as upstream: a request with no Ready condition yet (e.g. not approved) has no outcome to wait on
    { name: 'annotation on, request without a Ready condition', crt: annotated, cr: f.request(0), want: 'wait' },
    { name: 'annotation on, request failed', crt: annotated, cr: f.request(0, { conditions: [cond('Ready', 'False', 'Failed')] }), want: 'fail' },
    { name: 'annotation on, request issued', crt: annotated, cr: f.request(0, { certificate: b64(await f.signed(f.keyPem, now, 3_600_000)), conditions: [cond('Ready', 'True', 'Issued')] }), want: 'issue' },
  ];
  for (const c of cases) {
    const d = decideIssuing({ certificate: c.crt, nextKeySecret: f.keySecret, requests: [c.cr], secret: c.secret }, now);
    assert.equal(d.kind, c.want, c.name);
    if (d.kind === 'temporary') assert.equal(d.keyPem, f.keyPem, `${c.name}: the temporary certificate is for the next key`);
  }
  // not issuing: no temporary certificate either
  const idle = { ...annotated, status: { ...annotated.status, conditions: [] } };
  assert.equal(decideIssuing({ certificate: idle, nextKeySecret: f.keySecret, requests: [pending] }, now).kind, 'wait');
});

test('readiness and trigger chains: a temporary certificate is never up to date', async () => {
  const f = await fixture();
  const chain = await createTemporaryCertificate({ template: { dnsNames: ['a.example.test'] }, keyPem: f.keyPem, notBefore: now, durationMs: 3_600_000 });
  const data = { 'tls.key': b64(f.keyPem), 'tls.crt': b64(chain) };
  const temporary: Secret = {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-tls', namespace: 'default', annotations: certificateAnnotations(f.crt, chain, undefined) }, data,
  };
  assert.equal(temporary.metadata.annotations?.[CertificateAnnotation.issuerName], undefined);
  const v = firstViolation(secretPolicies, { certificate: f.crt, secret: temporary });
  assert.equal(v?.reason, 'IncorrectIssuer');
  const ready = decideReadiness({ certificate: f.crt, secret: temporary }, now).fields.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'False');
  assert.equal(ready?.reason, 'IncorrectIssuer');
  // the same pair from a real issuer with no annotations at all (e.g. imported) stays acceptable
  const real = await f.signed(f.keyPem, now, 3_600_000);
  assert.equal(firstViolation(secretPolicies, { certificate: f.crt, secret: { ...temporary, metadata: { name: 'a-tls' }, data: { ...data, 'tls.crt': b64(real) } } }), undefined);
});

test('composeSecret: a temporary certificate drops the issuer annotations and ca.crt of an earlier issuance', async () => {
  const f = await fixture();
  const chain = await createTemporaryCertificate({ template: { dnsNames: ['a.example.test'] }, keyPem: f.keyPem, notBefore: now, durationMs: 3_600_000 });
  const earlier: Secret = {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
    metadata: { name: 'a-tls', namespace: 'default', annotations: { [CertificateAnnotation.issuerName]: 'ca', [CertificateAnnotation.issuerKind]: 'Issuer', [CertificateAnnotation.issuerGroup]: 'cert-manager.io', 'team': 'x' } },
    data: { 'tls.key': b64(f.otherKey), 'tls.crt': b64('x'), 'ca.crt': b64('y'), 'other': b64('kept') },
  };
  const data = await buildSecretData(f.crt, { keyPem: f.keyPem, chainPem: chain, passwords: {} });
  const out = composeSecret(f.crt, earlier, data, certificateAnnotations(f.crt, chain, undefined));
  for (const k of [CertificateAnnotation.issuerName, CertificateAnnotation.issuerKind, CertificateAnnotation.issuerGroup]) assert.equal(out.metadata.annotations?.[k], undefined, k);
  assert.equal(out.metadata.annotations?.team, 'x');
  assert.equal(out.metadata.annotations?.[CertificateAnnotation.certificateName], 'a');
  assert.deepEqual(Object.keys(out.data!).sort(), ['other', 'tls.crt', 'tls.key']);
});

test('composeSecret: what the last issuance wrote and this one does not is removed, what only someone else wrote stays (cert-manager\'s forced server-side apply)', async () => {
  const f = await fixture();
  const chain = await f.signed(f.keyPem, now, 3_600_000);
  const data = await buildSecretData(f.crt, { keyPem: f.keyPem, chainPem: chain, issuerRef: { name: 'ca' }, passwords: {} });
  const annotations = certificateAnnotations(f.crt, chain, { name: 'ca' });
  assert.equal(annotations[SubjectAnnotation.serialNumber], undefined, 'the new certificate has no subject serial number');
  const earlier = (managedFields?: unknown[]): Secret => ({
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
    metadata: {
      name: 'a-tls', namespace: 'default', ...(managedFields ? { managedFields: managedFields as never } : {}),
      // what an earlier certificate (a temporary one, or before emailAddresses and subject were taken out of the spec) was
      annotations: { [CertificateAnnotation.emailSANs]: 'a@example.test', [SubjectAnnotation.countries]: 'US', [SubjectAnnotation.serialNumber]: '1234567890', team: 'x' },
    },
    data: { 'tls.key': b64(f.otherKey), 'tls.crt': b64('x'), 'ca.crt': b64('bundle'), 'keystore.p12': b64('p12'), other: b64('kept') },
  });
  const ours = { manager: 'cert-manager-certificates-issuing', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:ca.crt': {}, 'f:keystore.p12': {}, 'f:tls.crt': {}, 'f:tls.key': {} } } };
  const users = { manager: 'kubectl-patch', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:ca.crt': {} } } };
  const rows: { why: string; managedFields?: unknown[]; keys: string[] }[] = [
    { why: 'no record of who wrote them: certsmith\'s keys, removed', keys: ['other', 'tls.crt', 'tls.key'] },
    { why: 'written by the last issuance: removed', managedFields: [ours], keys: ['other', 'tls.crt', 'tls.key'] },
    { why: 'a trust bundle a user added to a Secret whose issuer returns no CA: kept', managedFields: [{ ...ours, fieldsV1: { 'f:data': { 'f:keystore.p12': {}, 'f:tls.crt': {}, 'f:tls.key': {} } } }, users], keys: ['ca.crt', 'other', 'tls.crt', 'tls.key'] },
    { why: 'an older certsmith\'s manager name counts as ours', managedFields: [{ ...ours, manager: 'certificates-issuing' }], keys: ['other', 'tls.crt', 'tls.key'] },
  ];
  for (const r of rows) {
    const out = composeSecret(f.crt, earlier(r.managedFields), data, annotations);
    assert.deepEqual(Object.keys(out.data!).sort(), r.keys, r.why);
    for (const k of [CertificateAnnotation.emailSANs, SubjectAnnotation.countries, SubjectAnnotation.serialNumber]) assert.equal(out.metadata.annotations?.[k], undefined, `${r.why}: ${k} of the earlier certificate`);
    assert.equal(out.metadata.annotations?.team, 'x', r.why);
    assert.equal(out.metadata.annotations?.[CertificateAnnotation.altNames], 'a.example.test', r.why);
  }
});

test('buildSecretData: the key facts it records for tls.key are what reading tls.key cold gives', async () => {
  for (const spec of [{ algorithm: 'ECDSA', size: 384 }, { algorithm: 'RSA', size: 2048 }, { algorithm: 'Ed25519' }] as const) {
    const keyPem = await generatePrivateKey({ ...spec, encoding: 'PKCS8' });
    const crt: CertificateObj = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'k', namespace: 'default' }, spec: { secretName: 'k-tls', issuerRef: { name: 'ca' }, privateKey: spec } };
    const data = await buildSecretData(crt, { keyPem, chainPem: 'unused', passwords: {} });
    const tlsKey = Buffer.from(data['tls.key'], 'base64').toString('utf8');
    const cold = privateKeyFacts(tlsKey);
    assert.deepEqual(keyFactsMemo(tlsKey).value, { algorithm: cold.algorithm, size: cold.size, fingerprint: cold.fingerprint }, spec.algorithm);
  }
});

test('buildSecretData: keystore.jks holds the issuing CA as trusted entries beside the key, as cert-manager\'s (Java clients trust the CA through it)', async () => {
  const f = await fixture();
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' });
  const caPem = await signCertificate({ csrPem: await createCSR({ commonName: 'Test Root CA' }, caKey), notBefore: now, durationMs: 86_400_000, isCA: true, selfSignKeyPem: caKey });
  // Java refuses a certificate with an empty issuer DN: the leaf has a subject
  const leaf = await signCertificate({ csrPem: await createCSR({ commonName: 'a.example.test', dnsNames: ['a.example.test'] }, f.keyPem), notBefore: now, durationMs: 3_600_000, selfSignKeyPem: f.keyPem });
  const crt: CertificateObj = { ...f.crt, spec: { ...f.crt.spec, keystores: { jks: { create: true, password: 'changeit', alias: 'myalias' } } } };
  const data = await buildSecretData(crt, { keyPem: f.keyPem, chainPem: leaf, caPem, passwords: { jks: 'changeit' } });
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-jks-'));
  try {
    writeFileSync(join(dir, 'keystore.jks'), Buffer.from(data['keystore.jks'], 'base64'));
    const out = execFileSync('/usr/bin/keytool', ['-list', '-v', '-keystore', join(dir, 'keystore.jks'), '-storepass', 'changeit', '-storetype', 'JKS'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.match(out, /Your keystore contains 2 entries/);
    assert.match(out, /Alias name: myalias\s+Creation date: .*\s+Entry type: PrivateKeyEntry/);
    assert.match(out, /Alias name: ca\s+Creation date: .*\s+Entry type: trustedCertEntry\s+Owner: CN=Test Root CA/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
