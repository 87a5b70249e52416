// Post-issuance upkeep of additionalOutputFormats (issue 15): tls-combined.pem and key.der are
// compared with what tls.key and tls.crt imply, not only checked for presence, and a corrupted
// one is rewritten from the Secret's own key and certificate without a new issuance — as
// cert-manager's SecretAdditionalOutputFormatsDataMismatch policy and SecretsManager do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition } from './harness.ts';
import { CertificateRequest, SecretType } from '../../src/api/resources.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../src/api/types.ts';
import { signWithCA } from '../../src/controllers/requests/signers.ts';
import type { Secret } from '../../src/api/meta.ts';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const text = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString();

for (const field of ['tls-combined.pem', 'key.der'] as const) {
  test(`a corrupted ${field} is repaired in place: same revision, no new request`, async () => {
    const lc = await startLifecycle();
    try {
      await withCA(lc);
      await lc.apply(certificate('web', { dnsNames: ['web.example.test'], additionalOutputFormats: [{ type: 'CombinedPEM' }, { type: 'DER' }] }));
      await lc.settle();
      const crt = await lc.certificate('web');
      assert.equal(condition(crt, 'Ready')?.status, 'True', JSON.stringify(crt.status));
      const before = (await lc.secret(crt.spec.secretName))!;
      const good = before.data![field];
      const tlsKey = text(before.data!['tls.key']);
      // what cert-manager writes: key PEM, a newline, the chain; and the key's DER
      if (field === 'tls-combined.pem') assert.equal(text(good), `${tlsKey}\n${text(before.data!['tls.crt'])}`);
      const requestsBefore = (await lc.requests()).length;

      const corrupted = field === 'tls-combined.pem'
        ? b64(`${tlsKey}\n-----BEGIN CERTIFICATE-----\nnot the certificate\n-----END CERTIFICATE-----\n`)
        : b64(Buffer.from('not the key'));
      await lc.store.update<Secret>(SecretType, { ...before, data: { ...before.data, [field]: corrupted } });
      await lc.settle();
      await lc.advance(60_000);

      const after = (await lc.secret(crt.spec.secretName))!;
      assert.equal(after.data![field], good, `${field} rewritten from tls.key and tls.crt`);
      assert.equal(after.data!['tls.crt'], before.data!['tls.crt'], 'same certificate: not re-issued');
      assert.equal(after.data!['tls.key'], before.data!['tls.key'], 'same key');
      assert.equal((await lc.certificate('web')).status?.revision, crt.status?.revision, 'same revision');
      assert.equal((await lc.requests()).length, requestsBefore, 'no new CertificateRequest');
    } finally {
      await lc.stop();
    }
  });
}

// cert-manager's SecretSecretTemplateManagedFieldsMismatch and SecretManagedLabelsAndAnnotationsManagedFieldsMismatch:
// a template key taken out of the spec leaves the Secret at once, and a detail annotation removed by hand comes back
test('the record of the template keys applied last is put back when something strips it, so a key later removed from secretTemplate still leaves the Secret', async () => {
  // seen: a Secret copied or replaced without certsmith's annotation (a reflector, kubectl replace) kept, for good, the
  // labels and annotations later taken out of spec.secretTemplate
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('tpl', { dnsNames: ['tpl.example.test'], secretTemplate: { labels: { team: 'a', env: 'b' } } }));
    await lc.settle();
    let s = (await lc.secret('tpl-tls'))!;
    const { 'certsmith.io/secret-template-keys': marker, ...others } = s.metadata.annotations ?? {};
    assert.ok(marker, 'certsmith records which keys it applied');
    await lc.store.update<Secret>(SecretType, { ...s, metadata: { ...s.metadata, annotations: others } });
    await lc.settle();
    s = (await lc.secret('tpl-tls'))!;
    assert.equal(s.metadata.annotations?.['certsmith.io/secret-template-keys'], marker, 'put back');
    const crt = await lc.certificate('tpl');
    await lc.apply({ ...crt, metadata: { ...crt.metadata, resourceVersion: undefined }, spec: { ...crt.spec, secretTemplate: { labels: { team: 'a' } } } });
    await lc.settle();
    s = (await lc.secret('tpl-tls'))!;
    assert.equal(s.metadata.labels?.env, undefined, 'env left the Secret');
    assert.equal(s.metadata.labels?.team, 'a');
    assert.equal((await lc.certificate('tpl')).status?.revision, 1, 'without a new issuance');
  } finally {
    await lc.stop();
  }
});

test('secretTemplate keys removed from the spec leave the Secret, and a removed detail annotation is put back, without a new issuance', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('tpl', { dnsNames: ['tpl.example.test'], secretTemplate: { labels: { team: 'a', env: 'b' }, annotations: { note: 'x' } } }));
    await lc.settle();
    const crt = await lc.certificate('tpl');
    const issued = (await lc.secret(crt.spec.secretName))!;
    assert.equal(issued.metadata.labels?.env, 'b');
    const requestsBefore = (await lc.requests()).length;

    await lc.apply({ ...crt, metadata: { ...crt.metadata, resourceVersion: undefined }, spec: { ...crt.spec, secretTemplate: { labels: { team: 'a' } } } });
    await lc.settle();
    let s = (await lc.secret(crt.spec.secretName))!;
    assert.equal(s.metadata.labels?.env, undefined, 'env left the Secret');
    assert.equal(s.metadata.annotations?.note, undefined, 'note left the Secret');
    assert.equal(s.metadata.labels?.team, 'a');

    const { ['cert-manager.io/alt-names']: _gone, ...rest } = s.metadata.annotations ?? {};
    await lc.store.update<Secret>(SecretType, { ...s, metadata: { ...s.metadata, annotations: rest } });
    await lc.settle();
    s = (await lc.secret(crt.spec.secretName))!;
    assert.equal(s.metadata.annotations?.['cert-manager.io/alt-names'], 'tpl.example.test', 'put back');
    assert.equal(s.data?.['tls.crt'], issued.data?.['tls.crt'], 'not re-issued');
    assert.equal((await lc.requests()).length, requestsBefore, 'no new CertificateRequest');
  } finally {
    await lc.stop();
  }
});

test('two Certificates naming one Secret do not take turns rewriting it (the fuzz test saw 170 writes in 1.5 s)', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('one', { dnsNames: ['one.example.test'], secretName: 'shared-tls' }));
    await lc.settle();
    await lc.apply(certificate('two', { dnsNames: ['two.example.test'], secretName: 'shared-tls' }));
    await lc.settle();
    const before = (await lc.secret('shared-tls'))!.metadata.resourceVersion;
    await lc.advance(60_000);
    await lc.settle();
    assert.equal((await lc.secret('shared-tls'))!.metadata.resourceVersion, before, 'the Secret is left alone');
  } finally {
    await lc.stop();
  }
});

test('a ca.crt a user added to a Secret whose issuer returns no CA survives a renewal; the earlier certificate\'s subject annotations do not', async () => {
  // cert-manager's forced server-side apply keeps a data key only another manager set, and drops
  // what it applied before and not now; the cache keeps no managedFields, so they are read when it matters
  const lc = await startLifecycle({ options: { approveSignerNames: ['issuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/*', 'fooissuers.example.com/*'] } });
  try {
    await withCA(lc);
    // an external issuer (another API group) that returns no CA: its controller is played here with the CA above
    const signPending = async () => {
      await lc.settle();
      for (const cr of await lc.requests()) {
        if (cr.metadata.annotations?.['cert-manager.io/certificate-name'] !== 'bundle' || cr.status?.certificate || condition(cr, 'Approved')?.status !== 'True') continue;
        const signed = await signWithCA(cr, await lc.store.get<Secret>(SecretType, 'default', 'ca-keypair'), 'ca-keypair', lc.clock.now());
        await lc.store.updateStatus<CertificateRequestObj>(CertificateRequest, {
          ...cr, status: { ...cr.status, certificate: Buffer.from((signed as { certificatePem: string }).certificatePem).toString('base64'),
            conditions: [...(cr.status?.conditions ?? []), { type: 'Ready', status: 'True', reason: 'Issued', message: 'Certificate fetched from issuer successfully', lastTransitionTime: lc.clock.now().toISOString().replace('.000Z', 'Z') }] },
        });
      }
      await lc.settle();
    };
    await lc.apply(certificate('bundle', { dnsNames: ['bundle.example.test'], emailAddresses: ['a@example.test'], subject: { countries: ['US'] }, issuerRef: { name: 'foo', kind: 'FooIssuer', group: 'example.com' } }));
    await signPending();
    let s = (await lc.secret('bundle-tls'))!;
    assert.equal(s.metadata.annotations?.['cert-manager.io/subject-countries'], 'US');
    assert.equal(s.data?.['ca.crt'], undefined, 'the issuer returned no CA');
    // a user adds a trust bundle, as kubectl patch does
    await lc.store.update<Secret>(SecretType, { ...s, data: { ...s.data, 'ca.crt': Buffer.from('my trust bundle').toString('base64') } }, { fieldManager: 'kubectl-patch' });
    // a re-issue for a spec without the email SAN and the subject
    const current = await lc.certificate('bundle');
    const { emailAddresses: _e, subject: _s, ...spec } = current.spec;
    await lc.apply({ ...current, metadata: { ...current.metadata, resourceVersion: undefined }, spec });
    await signPending();
    assert.equal((await lc.certificate('bundle')).status?.revision, 2);
    s = (await lc.secret('bundle-tls'))!;
    assert.equal(Buffer.from(s.data?.['ca.crt'] ?? '', 'base64').toString(), 'my trust bundle', 'the user\'s ca.crt stays');
    assert.equal(s.metadata.annotations?.['cert-manager.io/subject-countries'], undefined, 'the earlier certificate\'s subject');
    assert.equal(s.metadata.annotations?.['cert-manager.io/email-sans'], undefined, 'the earlier certificate\'s email SAN');
  } finally {
    await lc.stop();
  }
});
