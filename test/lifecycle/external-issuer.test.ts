// A Certificate whose issuerRef names an external issuer (another API group: step-issuer,
// aws-privateca-issuer, Google CAS): as in cert-manager's default install, its request waits for
// an approver granted its signer; with the signer among --approve-signer-names it is approved,
// the external controller signs it, and the Certificate becomes Ready with what it signed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, condition, withCA } from './harness.ts';
import { CertificateRequest, SecretType } from '../../src/api/resources.ts';
import type { Secret } from '../../src/api/meta.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../src/api/types.ts';
import { signWithCA } from '../../src/controllers/requests/signers.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

test("by default a request for an external issuer is left unapproved, as cert-manager's default install leaves it", async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('ext', { dnsNames: ['ext.example.test'], issuerRef: { name: 'foo', kind: 'FooIssuer', group: 'example.com' } }));
    await lc.settle();
    const [cr] = (await lc.requests()).filter((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === 'ext');
    assert.ok(cr, 'a request was made');
    assert.equal(condition(cr, 'Approved'), undefined, JSON.stringify(cr.status));
    assert.equal(condition(cr, 'Ready'), undefined, 'not signed, nor marked, by certsmith');
  } finally {
    await lc.stop();
  }
});

test('a request for an external issuer whose signer is listed is approved, left to that issuer, and what it signs is issued', async () => {
  const lc = await startLifecycle({ options: { approveSignerNames: ['issuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/*', 'fooissuers.example.com/*'] } });
  try {
    await withCA(lc);
    await lc.apply(certificate('ext', { dnsNames: ['ext.example.test'], issuerRef: { name: 'foo', kind: 'FooIssuer', group: 'example.com' } }));
    await lc.settle();
    const [cr] = (await lc.requests()).filter((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === 'ext');
    assert.ok(cr, 'a request was made');
    assert.deepEqual([condition(cr, 'Approved')?.status, condition(cr, 'Approved')?.reason], ['True', 'cert-manager.io']);
    assert.equal(condition(cr, 'Ready'), undefined, 'not signed, nor marked, by certsmith');
    assert.equal(cr.status?.certificate, undefined);

    // the external issuer's controller signs it (here with the CA above) and reports Issued
    const ca = await lc.store.get<Secret>(SecretType, 'default', 'ca-keypair');
    const signed = await signWithCA(cr, ca, 'ca-keypair', lc.clock.now());
    assert.equal(signed.kind, 'issued');
    const pem = (signed as { certificatePem: string }).certificatePem;
    await lc.store.updateStatus<CertificateRequestObj>(CertificateRequest, {
      ...cr,
      status: {
        ...cr.status, certificate: b64(pem),
        conditions: [...(cr.status?.conditions ?? []), { type: 'Ready', status: 'True', reason: 'Issued', message: 'Certificate fetched from issuer successfully', lastTransitionTime: lc.clock.now().toISOString().replace('.000Z', 'Z') }],
      },
    });
    await lc.settle();
    const crt = await lc.certificate('ext');
    assert.equal(condition(crt, 'Ready')?.status, 'True', JSON.stringify(crt.status));
    const secret = await lc.store.get<Secret>(SecretType, 'default', 'ext-tls');
    assert.equal(Buffer.from(secret!.data!['tls.crt'], 'base64').toString(), pem);
    assert.equal(secret!.metadata.annotations?.['cert-manager.io/issuer-group'], 'example.com');
  } finally {
    await lc.stop();
  }
});
