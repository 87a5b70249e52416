// cert-manager.io/issue-temporary-certificate on the embedded store with a fake clock: a
// temporary certificate while the request is pending, replaced by the real one on issuance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, caIssuer, condition, selfSignedClusterIssuer, type Lifecycle } from './harness.ts';
import { certificateMatchesKey, parseCertificate } from '../../src/pki/parse.ts';
import { CertificateRequest, EventType } from '../../src/api/resources.ts';
import { rfc3339 } from '../../src/api/conditions.ts';
import type { Secret } from '../../src/api/meta.ts';

const ISSUER_ANNOTATIONS = ['cert-manager.io/issuer-name', 'cert-manager.io/issuer-kind', 'cert-manager.io/issuer-group'];
const text = (s: Secret | undefined, k: string) => Buffer.from(s?.data?.[k] ?? '', 'base64').toString();

/** A CA Issuer whose CA Secret does not exist yet: requests for it stay Pending (IssuerNotReady). */
async function pendingIssuer(lc: Lifecycle) {
  await lc.apply(selfSignedClusterIssuer);
  await lc.apply(caIssuer());
  await lc.settle();
}

/** Creating the CA's Secret makes the Issuer Ready, and its pending requests get signed. */
async function makeIssuerReady(lc: Lifecycle) {
  await lc.apply(certificate('root', {
    secretName: 'ca-keypair', isCA: true, commonName: 'test root', privateKey: { algorithm: 'ECDSA', size: 256 },
    issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer', group: 'cert-manager.io' },
  }));
  await lc.settle();
  // the issuer and request controllers retry on their own schedule; let a few minutes pass
  await lc.advance(5 * 60_000);
}

function withTemporaryCertificate<T extends { metadata: { annotations?: Record<string, string> } }>(crt: T): T {
  return { ...crt, metadata: { ...crt.metadata, annotations: { ...crt.metadata.annotations, 'cert-manager.io/issue-temporary-certificate': 'true' } } };
}

async function eventsFor(lc: Lifecycle, name: string) {
  const all = (await lc.store.list<{ involvedObject?: { name?: string }; reason?: string; message?: string } & Secret>(EventType, { namespace: 'default' })).items;
  return all.filter((e) => e.involvedObject?.name === name).map((e) => `${e.reason}: ${e.message}`);
}

test('a pending request with the annotation gets a temporary certificate, then the real one replaces it', async () => {
  const lc = await startLifecycle();
  try {
    await pendingIssuer(lc);
    await lc.apply(withTemporaryCertificate(certificate('web', { dnsNames: ['web.example.test', 'www.example.test'], privateKey: { algorithm: 'ECDSA', encoding: 'PKCS8' } })));
    await lc.settle();

    const [cr] = await lc.requests();
    assert.equal(condition(cr, 'Ready')?.reason, 'Pending', JSON.stringify(cr.status));
    const temp = await lc.secret('web-tls');
    assert.ok(temp, 'the Secret exists while the request is pending');
    const leaf = parseCertificate(text(temp, 'tls.crt'));
    assert.equal(leaf.issuer, 'CN=cert-manager.local');
    assert.deepEqual(leaf.template.dnsNames, ['web.example.test', 'www.example.test']);
    assert.ok(certificateMatchesKey(text(temp, 'tls.crt'), text(temp, 'tls.key')));
    assert.match(text(temp, 'tls.key'), /^-----BEGIN PRIVATE KEY-----/, 'the spec\'s key encoding');
    assert.equal(temp.data?.['ca.crt'], undefined);
    for (const k of ISSUER_ANNOTATIONS) assert.equal(temp.metadata.annotations?.[k], undefined, k);
    assert.equal(temp.metadata.annotations?.['cert-manager.io/certificate-name'], 'web');

    let crt = await lc.certificate('web');
    assert.equal(condition(crt, 'Ready')?.status, 'False');
    assert.equal(condition(crt, 'Ready')?.reason, 'IncorrectIssuer');
    assert.equal(condition(crt, 'Issuing')?.status, 'True');
    assert.equal(crt.status?.revision, undefined);
    assert.ok((await eventsFor(lc, 'web')).includes('Issuing: Issued temporary certificate'));

    // time passes with the request still pending: the temporary certificate stays, written once
    const rv = temp.metadata.resourceVersion;
    await lc.advance(2 * 60_000);
    assert.equal((await lc.secret('web-tls'))?.metadata.resourceVersion, rv);

    await makeIssuerReady(lc);
    crt = await lc.certificate('web');
    assert.equal(condition(crt, 'Ready')?.status, 'True', JSON.stringify(crt.status));
    assert.equal(crt.status?.revision, 1);
    assert.equal(condition(crt, 'Issuing'), undefined);
    const real = await lc.secret('web-tls');
    assert.equal(parseCertificate(text(real, 'tls.crt')).issuer, 'CN=test root');
    assert.equal(text(real, 'tls.key'), text(temp, 'tls.key'), 'the real certificate is for the same next key');
    assert.ok(real?.data?.['ca.crt']);
    assert.equal(real?.metadata.annotations?.['cert-manager.io/issuer-name'], 'ca');

    // no second issuance: still one request for web, and nothing starts later
    await lc.advance(60 * 60_000);
    const forWeb = (await lc.requests()).filter((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === 'web');
    assert.equal(forWeb.length, 1);
    assert.equal((await lc.certificate('web')).status?.revision, 1);
    assert.deepEqual(lc.mismatchedSecretVersions, []);
  } finally {
    await lc.stop();
  }
});

test('without the annotation no Secret appears while the request is pending', async () => {
  const lc = await startLifecycle();
  try {
    await pendingIssuer(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'] }));
    await lc.settle();
    const [cr] = await lc.requests();
    assert.equal(condition(cr, 'Ready')?.reason, 'Pending');
    assert.equal(await lc.secret('web-tls'), undefined);
    assert.equal(condition(await lc.certificate('web'), 'Ready')?.reason, 'DoesNotExist');
  } finally {
    await lc.stop();
  }
});

test('a request left unapproved has no outcome yet: as upstream, no temporary certificate until it is Pending', async () => {
  const lc = await startLifecycle({ options: { noAutoApprove: true } });
  try {
    await pendingIssuer(lc);
    await lc.apply(withTemporaryCertificate(certificate('web', { dnsNames: ['web.example.test'] })));
    await lc.settle();
    assert.equal(await lc.secret('web-tls'), undefined);
  } finally {
    await lc.stop();
  }
});

test('a failed request keeps the temporary certificate until the backoff ends, then a new attempt replaces it', async () => {
  const lc = await startLifecycle();
  try {
    await pendingIssuer(lc);
    await lc.apply(withTemporaryCertificate(certificate('web', { dnsNames: ['web.example.test'] })));
    await lc.settle();
    const temp = await lc.secret('web-tls');
    assert.equal(parseCertificate(text(temp, 'tls.crt')).issuer, 'CN=cert-manager.local');

    // the issuer gives up on the request, as a signer does with Ready=False/Failed
    const [cr] = await lc.requests();
    const now = rfc3339(lc.clock.now());
    await lc.store.updateStatus(CertificateRequest, { ...cr, status: {
      ...cr.status, failureTime: now,
      // the Approved condition stays: once set, it may not be changed (admission refuses it)
      conditions: [...(cr.status?.conditions ?? []).filter((c) => c.type !== 'Ready'), { type: 'Ready', status: 'False', reason: 'Failed', message: 'signer gave up', lastTransitionTime: now }],
    } });
    await lc.settle();
    let crt = await lc.certificate('web');
    assert.equal(crt.status?.issuanceAttempts, 1, JSON.stringify(crt.status));
    assert.equal(condition(crt, 'Issuing')?.status, 'False');
    assert.equal(condition(crt, 'Ready')?.reason, 'IncorrectIssuer');

    // the issuer becomes ready meanwhile, but nothing is issued before the backoff's hour
    await makeIssuerReady(lc);
    await lc.advance(50 * 60_000);
    assert.equal(parseCertificate(text(await lc.secret('web-tls'), 'tls.crt')).issuer, 'CN=cert-manager.local');
    assert.equal((await lc.certificate('web')).status?.revision, undefined);

    await lc.advance(10 * 60_000);
    crt = await lc.certificate('web');
    assert.equal(condition(crt, 'Ready')?.status, 'True', JSON.stringify(crt.status));
    assert.equal(crt.status?.revision, 1);
    assert.equal(crt.status?.issuanceAttempts, undefined);
    assert.equal(parseCertificate(text(await lc.secret('web-tls'), 'tls.crt')).issuer, 'CN=test root');
    assert.deepEqual(lc.mismatchedSecretVersions, []);
  } finally {
    await lc.stop();
  }
});
