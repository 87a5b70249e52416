// A CertificateRequest that holds the next request's name but is not the Certificate's (one
// imported from another cluster without its owner, numbering restarting at 1) blocks issuance, as
// it would under cert-manager; what must not happen is that nothing says so. cert-manager records
// a Warning RequestFailed "Failed to create CertificateRequest: ..." on the Certificate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, withCA } from './harness.ts';
import { CertificateRequest, EventType } from '../../src/api/resources.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import crypto from 'node:crypto';
import { createCSR } from '../../src/pki/csr.ts';

interface CoreEvent extends KubeObject { type?: string; reason?: string; message?: string; involvedObject?: { name?: string; kind?: string } }

test('a request name already taken by another object gives a Warning RequestFailed on the Certificate naming the cause', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    const key = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const csr = await createCSR({ dnsNames: ['imported.example.test'] }, key);
    await lc.store.create(CertificateRequest, {
      apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'taken-1', namespace: 'default' },
      spec: { request: Buffer.from(csr).toString('base64'), issuerRef: { name: 'nowhere' } },
    } as KubeObject);
    await lc.apply(certificate('taken', { dnsNames: ['taken.example.test'] }));
    await lc.settle();
    const events = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items
      .filter((e) => e.involvedObject?.kind === 'Certificate' && e.involvedObject.name === 'taken' && e.reason === 'RequestFailed');
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(events[0].type, 'Warning');
    assert.match(events[0].message ?? '', /^Failed to create CertificateRequest: .*"taken-1" already exists/);
  } finally {
    await lc.stop();
  }
});
