// --enable-certificate-owner-ref, cert-manager's flag: the Secret gets its Certificate as owner
// (controller, blockOwnerDeletion), so deleting the Certificate deletes the Secret; without the
// flag the reference is taken off again (cert-manager's SecretOwnerRefMismatch), with no new
// request either way. Clusters that ran with it expect their Secrets to go with their Certificates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, withCA, condition, type Lifecycle } from './harness.ts';
import { Certificate, SecretType } from '../../src/api/resources.ts';
import type { Secret } from '../../src/api/meta.ts';

const secretOf = (lc: Lifecycle) => lc.store.get<Secret>(SecretType, 'default', 'owned-tls');

test('with --enable-certificate-owner-ref the Secret is owned by its Certificate and goes with it', async () => {
  const lc = await startLifecycle({ options: { enableCertificateOwnerRef: true } });
  try {
    await withCA(lc);
    await lc.apply(certificate('owned', { dnsNames: ['owned.example.test'] }));
    await lc.settle();
    const crt = await lc.certificate('owned');
    assert.equal(condition(crt, 'Ready')?.status, 'True');
    const secret = await secretOf(lc);
    assert.deepEqual(secret?.metadata.ownerReferences, [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'owned', uid: crt.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    await lc.store.delete(Certificate, 'default', 'owned');
    await lc.settle();
    assert.equal(await secretOf(lc), undefined, 'the Secret went with its Certificate');
  } finally {
    await lc.stop();
  }
});

test('without the flag a Secret carries no reference to its Certificate, and one left from a run with the flag is taken off without a new request', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('owned', { dnsNames: ['owned.example.test'] }));
    await lc.settle();
    const crt = await lc.certificate('owned');
    const secret = (await secretOf(lc))!;
    assert.equal(secret.metadata.ownerReferences, undefined);
    // as a server run with the flag left it
    await lc.store.update(SecretType, { ...secret, metadata: { ...secret.metadata, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'owned', uid: crt.metadata.uid!, controller: true, blockOwnerDeletion: true }] } });
    await lc.settle();
    const after = (await secretOf(lc))!;
    assert.equal(after.metadata.ownerReferences, undefined);
    assert.equal(after.data?.['tls.crt'], secret.data?.['tls.crt'], 'no new certificate');
    assert.equal((await lc.certificate('owned')).status?.revision, crt.status?.revision);
  } finally {
    await lc.stop();
  }
});
