// The Certificate lifecycle end to end on the embedded store with a fake clock: issuance,
// renewal at renewalTime, re-issuance on spec and Secret changes, key rotation policies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition, type Lifecycle } from './harness.ts';
import { parseCertificate, certificateMatchesKey } from '../../src/pki/parse.ts';
import { publicKeyFingerprint } from '../../src/pki/keys.ts';
import { SecretType } from '../../src/api/resources.ts';

const HOUR = 3_600_000;

function leafOf(secret: { data?: Record<string, string> } | undefined) {
  assert.ok(secret?.data?.['tls.crt'], 'secret has tls.crt');
  return parseCertificate(Buffer.from(secret.data['tls.crt'], 'base64').toString());
}

function keyFingerprint(secret: { data?: Record<string, string> } | undefined): string {
  return publicKeyFingerprint(Buffer.from(secret!.data!['tls.key'], 'base64').toString());
}

async function issued(lc: Lifecycle, name: string) {
  const crt = await lc.certificate(name);
  assert.equal(condition(crt, 'Ready')?.status, 'True', `Ready of ${name}: ${JSON.stringify(crt.status)}`);
  const secret = await lc.secret(crt.spec.secretName);
  const d = secret!.data!;
  assert.ok(certificateMatchesKey(Buffer.from(d['tls.crt'], 'base64').toString(), Buffer.from(d['tls.key'], 'base64').toString()), 'key matches certificate');
  return { crt, secret, leaf: leafOf(secret) };
}

test('a CA-issued Certificate becomes Ready with a matching key, ca.crt and annotations', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], duration: '2160h', renewBefore: '360h' }));
    await lc.settle();
    const { crt, secret, leaf } = await issued(lc, 'web');
    assert.deepEqual(leaf.template.dnsNames, ['web.example.test']);
    assert.equal(crt.status?.revision, 1);
    assert.equal(crt.status?.notAfter, '2026-04-01T00:00:00Z');
    assert.equal(crt.status?.renewalTime, '2026-03-17T00:00:00Z');
    assert.equal(condition(crt, 'Issuing'), undefined);
    assert.equal(crt.status?.nextPrivateKeySecretName, undefined);
    assert.ok(secret!.data!['ca.crt']);
    assert.equal(secret!.type, 'kubernetes.io/tls');
    assert.equal(secret!.metadata.annotations?.['cert-manager.io/issuer-name'], 'ca');
    assert.equal(secret!.metadata.annotations?.['cert-manager.io/certificate-name'], 'web');
    assert.equal(secret!.metadata.annotations?.['cert-manager.io/alt-names'], 'web.example.test');
    // the temporary key Secret is gone once issued
    const keys = (await lc.store.list(SecretType, { namespace: 'default', labelSelector: 'cert-manager.io/next-private-key=true' })).items;
    assert.equal(keys.length, 0);
    assert.deepEqual(lc.mismatchedSecretVersions, []);
  } finally {
    await lc.stop();
  }
});

test('renews at renewalTime and not before', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('renew', { dnsNames: ['renew.example.test'], duration: '24h', renewBefore: '8h' }));
    await lc.settle();
    const first = await issued(lc, 'renew');
    assert.equal(first.crt.status?.renewalTime, '2026-01-01T16:00:00Z');
    await lc.advance(16 * HOUR - 1000);
    assert.equal((await lc.certificate('renew')).status?.revision, 1, 'not renewed a second early');
    await lc.advance(1000);
    const second = await issued(lc, 'renew');
    assert.equal(second.crt.status?.revision, 2);
    assert.notEqual(second.leaf.serialNumber, first.leaf.serialNumber);
    assert.equal(second.crt.status?.renewalTime, '2026-01-02T08:00:00Z');
    assert.deepEqual(lc.mismatchedSecretVersions, []);
  } finally {
    await lc.stop();
  }
});

test('spec changes, a deleted Secret and an edited certificate each re-issue', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('edit', { dnsNames: ['a.example.test'], privateKey: { algorithm: 'RSA', size: 2048 } }));
    await lc.settle();
    assert.equal((await issued(lc, 'edit')).crt.status?.revision, 1);

    const crt = await lc.certificate('edit');
    await lc.apply({ ...crt, spec: { ...crt.spec, dnsNames: ['a.example.test', 'b.example.test'] } });
    await lc.settle();
    let now = await issued(lc, 'edit');
    assert.equal(now.crt.status?.revision, 2);
    assert.deepEqual(now.leaf.template.dnsNames?.sort(), ['a.example.test', 'b.example.test']);

    const crt2 = await lc.certificate('edit');
    await lc.apply({ ...crt2, spec: { ...crt2.spec, privateKey: { algorithm: 'RSA', size: 3072 } } });
    await lc.settle();
    now = await issued(lc, 'edit');
    assert.equal(now.crt.status?.revision, 3);
    assert.equal(Buffer.from(now.secret!.data!['tls.key'], 'base64').toString().length > 2000, true);

    await lc.store.delete(SecretType, 'default', 'edit-tls');
    await lc.settle();
    now = await issued(lc, 'edit');
    assert.equal(now.crt.status?.revision, 4);

    // Replace the certificate with the CA's own: key and cert no longer match.
    const secret = (await lc.secret('edit-tls'))!;
    const ca = (await lc.secret('ca-keypair'))!;
    await lc.store.update(SecretType, { ...secret, data: { ...secret.data, 'tls.crt': ca.data!['tls.crt'] } });
    await lc.settle();
    now = await issued(lc, 'edit');
    assert.equal(now.crt.status?.revision, 5);
    // Only the mismatch we made by hand, never one written by certsmith.
    assert.equal(lc.mismatchedSecretVersions.length, 1);
  } finally {
    await lc.stop();
  }
});

test('rotationPolicy Never keeps the key across renewals, Always replaces it', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('never', { dnsNames: ['n.example.test'], duration: '24h', privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Never' } }));
    await lc.apply(certificate('always', { dnsNames: ['x.example.test'], duration: '24h', privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Always' } }));
    await lc.settle();
    const n1 = keyFingerprint((await issued(lc, 'never')).secret);
    const a1 = keyFingerprint((await issued(lc, 'always')).secret);
    await lc.advance(17 * HOUR);
    const never = await issued(lc, 'never');
    const always = await issued(lc, 'always');
    assert.equal(never.crt.status?.revision, 2);
    assert.equal(always.crt.status?.revision, 2);
    assert.equal(keyFingerprint(never.secret), n1);
    assert.notEqual(keyFingerprint(always.secret), a1);
  } finally {
    await lc.stop();
  }
});
