import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/meta.ts';
import { Certificate, CertificateRequest, SecretType } from '../../api/resources.ts';
import { InformerFactory } from '../../runtime/informer.ts';
import { openTestStore } from '../../runtime/testing/test-store.ts';
import { indexCertificatesBySecret } from '../../shared/certificate-index.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { Secret } from '../../api/meta.ts';
import { watchCertificateGraph, type CertificateCaches } from './gather.ts';
import { wakeOnEverything, type CertificateWakes } from './wake.ts';

const settle = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

/** a Certificate, its target Secret and a request it controls */
async function graph() {
  const store = openTestStore();
  const crt = await store.create<KubeObject>(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'ns', name: 'web' }, spec: { secretName: 'web-tls' } });
  await store.create<KubeObject>(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ns', name: 'web-tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } } as KubeObject);
  const owner = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'web', uid: crt.metadata.uid!, controller: true };
  await store.create<KubeObject>(CertificateRequest, { apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { namespace: 'ns', name: 'web-1', ownerReferences: [owner] }, spec: { request: 'eA==', issuerRef: { name: 'ca' } } } as KubeObject);
  const informers = new InformerFactory(store);
  const caches: CertificateCaches = {
    certificates: informers.informerFor<CertificateObj>(Certificate),
    requests: informers.informerFor<CertificateRequestObj>(CertificateRequest),
    secrets: informers.informerFor<Secret>(SecretType),
  };
  indexCertificatesBySecret(caches.certificates);
  return { store, informers, caches };
}

/** the keys one subscriber is woken for, with what woke it */
function subscriber(c: CertificateCaches, wakes: CertificateWakes = wakeOnEverything) {
  const woken: string[] = [];
  const tagged: CertificateWakes = {
    added: (crt, s) => wakes.added(crt, s) && !!woken.push('certificate'),
    changed: (a, b) => wakes.changed(a, b) && !!woken.push('certificate changed'),
    targetSecret: (crt, a, b) => wakes.targetSecret(crt, a, b) && !!woken.push('secret'),
    nextKeySecret: (crt, a, b) => wakes.nextKeySecret(crt, a, b) && !!woken.push('next key'),
    request: (crt, a, b) => wakes.request(crt, a, b) && !!woken.push('request'),
  };
  const keys: string[] = [];
  watchCertificateGraph(c, (k) => keys.push(k), tagged);
  return { keys, woken };
}

test('controllers subscribed before the caches fill are each woken by the Certificate, its Secret and its request', async () => {
  const { informers, caches, store } = await graph();
  const first = subscriber(caches);
  const second = subscriber(caches);
  informers.start();
  await informers.waitForSync();
  for (const s of [first, second]) {
    assert.deepEqual(s.keys, ['ns/web', 'ns/web', 'ns/web']);
    // the informers fill in any order
    assert.deepEqual([...s.woken].sort(), ['certificate', 'request', 'secret']);
  }
  await store.delete(Certificate, 'ns', 'web');
  await settle();
  // the deletion wakes both (and so may the garbage collection of what the Certificate owned)
  assert.ok(first.keys.length >= 4);
  assert.deepEqual(second.keys, first.keys);
  informers.stop();
});

test('a controller subscribed after the caches filled is told of what they hold, as a handler of its own would be', async () => {
  const { informers, caches } = await graph();
  const early = subscriber(caches);
  informers.start();
  await informers.waitForSync();
  const late = subscriber(caches);
  assert.deepEqual([...late.woken].sort(), [...early.woken].sort());
  assert.equal(late.woken.length, 3);
  assert.deepEqual(late.keys, ['ns/web', 'ns/web', 'ns/web']);
  informers.stop();
});

test('a controller whose predicate throws on an object does not keep the event from the others', async () => {
  const { informers, caches } = await graph();
  const throwing = { ...wakeOnEverything, added: () => { throw new TypeError('malformed'); } };
  watchCertificateGraph(caches, () => {}, throwing);
  const after = subscriber(caches);
  informers.start();
  await informers.waitForSync();
  assert.deepEqual([...after.woken].sort(), ['certificate', 'request', 'secret']);
  informers.stop();
});
