// ingress-shim as a cert-manager user drives it: kubectl applies an Ingress annotated
// cert-manager.io/cluster-issuer to `certsmith server`; its tls entries become Ready Certificates
// whose Secrets openssl accepts; editing the Ingress re-issues; deleting it takes them away.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isReady, waitFor } from './harness.ts';
import { startWithCAClusterIssuer, type KubeJSON, type ServerKubectlSession } from './kubectl-session.ts';

let s: ServerKubectlSession;

const ingress = (aHosts: string[]) => `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations:
    cert-manager.io/cluster-issuer: ca
    cert-manager.io/private-key-algorithm: ECDSA
spec:
  rules:
    - host: a.example.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
  tls:
    - { hosts: [${aHosts.join(', ')}], secretName: a-tls }
    - { hosts: [b.example.test], secretName: b-tls }
`;

before(async () => {
  s = await startWithCAClusterIssuer('ingress-shim');
});
after(() => s?.close());

test('an annotated Ingress gets a Ready Certificate per tls entry; edits re-issue; deleting it deletes them', async () => {
  await s.apply(ingress(['a.example.test']));
  const ing = await s.getJSON(['get', 'ingress', 'web', '-n', 'default']);

  const certs = await waitFor('two Ready Certificates from the Ingress', async () => {
    const list = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-n', 'default']);
    const mine = list.items.filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === ing.metadata.uid));
    return mine.length === 2 && mine.every(isReady) ? mine : undefined;
  }, 60_000);
  const a = certs.find((c) => c.metadata.name === 'a-tls')!;
  assert.ok(a, 'a Certificate named after the secret');
  assert.deepEqual(a.spec!.issuerRef, { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.equal(a.spec!.privateKey.algorithm, 'ECDSA');
  assert.deepEqual(a.metadata.ownerReferences, [{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'web', uid: ing.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(await s.verifiedSANs('a-tls'), ['a.example.test']);
  assert.deepEqual(await s.verifiedSANs('b-tls'), ['b.example.test']);
  const events = await s.getJSON<{ items: KubeJSON[] }>(['get', 'events', '-n', 'default']);
  const created = events.items.filter((e) => e.involvedObject?.kind === 'Ingress' && e.involvedObject.name === 'web' && e.reason === 'CreateCertificate');
  assert.deepEqual(created.map((e) => e.message).sort(), ['Successfully created Certificate "a-tls"', 'Successfully created Certificate "b-tls"']);

  // a host added to the first tls entry: the Certificate follows and is issued again with it
  const firstRevision = a.status!.revision as number;
  await s.apply(ingress(['a.example.test', 'www.a.example.test']));
  await waitFor('a-tls re-issued with the new host', async () => {
    const c = await s.getJSON(['get', 'certificate', 'a-tls', '-n', 'default']);
    return isReady(c) && c.status!.revision > firstRevision && (c.spec!.dnsNames as string[]).includes('www.a.example.test') ? c : undefined;
  }, 60_000);
  assert.deepEqual(await s.verifiedSANs('a-tls'), ['a.example.test', 'www.a.example.test']);

  // the Ingress deleted: its Certificates go with it (owner references, cascading)
  const deleted = await s.kubectl(['delete', 'ingress', 'web', '-n', 'default']);
  assert.equal(deleted.code, 0, deleted.stderr);
  await waitFor('the Ingress\'s Certificates deleted', async () => {
    const list = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-n', 'default']);
    return list.items.every((c) => !['a-tls', 'b-tls'].includes(c.metadata.name)) ? true : undefined;
  }, 30_000);
});

test('a bad annotation: a BadConfig Warning on the Ingress naming it, and no Certificate', async () => {
  const bad = ingress(['bad.example.test']).replace('name: web', 'name: bad').replace(/a-tls/, 'bad-a-tls').replace(/b-tls/, 'bad-b-tls')
    .replace('cert-manager.io/private-key-algorithm: ECDSA', 'cert-manager.io/duration: abc');
  await s.apply(bad);
  const warning = await waitFor('a BadConfig event on Ingress bad', async () => {
    const events = await s.getJSON<{ items: KubeJSON[] }>(['get', 'events', '-n', 'default']);
    return events.items.find((e) => e.involvedObject?.name === 'bad' && e.reason === 'BadConfig');
  });
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message!, /cert-manager\.io\/duration/);
  const list = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-n', 'default']);
  assert.deepEqual(list.items.filter((c) => c.metadata.name.startsWith('bad-')), []);
});
