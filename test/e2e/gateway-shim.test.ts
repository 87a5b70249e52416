// gateway-shim as a cert-manager user drives it: kubectl applies a Gateway annotated
// cert-manager.io/cluster-issuer to `certsmith server` (Gateway API on by default there); its TLS
// listeners become Ready Certificates, one per certificateRef, whose Secrets openssl accepts;
// a listener dropped deletes its Certificate; deleting the Gateway takes the rest away.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isReady, waitFor } from './harness.ts';
import { startWithCAClusterIssuer, type KubeJSON, type ServerKubectlSession } from './kubectl-session.ts';

let s: ServerKubectlSession;

const gateway = (extraListeners: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: default
  annotations:
    cert-manager.io/cluster-issuer: ca
    cert-manager.io/private-key-algorithm: ECDSA
spec:
  gatewayClassName: test
  listeners:
    - { name: http, port: 80, protocol: HTTP }
    - name: a
      hostname: a.example.test
      port: 443
      protocol: HTTPS
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, group: "", name: a-tls }] }
    - name: passthrough
      hostname: p.example.test
      port: 8443
      protocol: TLS
      tls: { mode: Passthrough }
${extraListeners}`;

const listenerB = `
    - name: b
      hostname: b.example.test
      port: 443
      protocol: HTTPS
      tls: { certificateRefs: [{ name: b-tls }] }
    - name: www-a
      hostname: www.a.example.test
      port: 443
      protocol: HTTPS
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, name: a-tls }] }
`;

before(async () => {
  s = await startWithCAClusterIssuer('gateway-shim');
});
after(() => s?.close());

test('an annotated Gateway gets a Ready Certificate per certificateRef of its TLS listeners; a dropped listener and the Gateway take theirs away', async () => {
  await s.apply(gateway(listenerB));
  const gw = await s.getJSON(['get', 'gateway', 'edge', '-n', 'default']);

  const mine = async () => (await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-n', 'default'])).items
    .filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === gw.metadata.uid));
  const certs = await waitFor('two Ready Certificates from the Gateway', async () => {
    const list = await mine();
    return list.length === 2 && list.every(isReady) ? list : undefined;
  }, 60_000);
  const a = certs.find((c) => c.metadata.name === 'a-tls')!;
  assert.ok(a, 'a Certificate named after the secret');
  assert.deepEqual(a.spec!.issuerRef, { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.equal(a.spec!.privateKey.algorithm, 'ECDSA');
  assert.deepEqual(a.metadata.ownerReferences, [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'edge', uid: gw.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  // two listeners naming a-tls share its Certificate; the HTTP and Passthrough listeners have none
  assert.deepEqual(await s.verifiedSANs('a-tls'), ['a.example.test', 'www.a.example.test']);
  assert.deepEqual(await s.verifiedSANs('b-tls'), ['b.example.test']);
  const events = await s.getJSON<{ items: KubeJSON[] }>(['get', 'events', '-n', 'default']);
  const created = events.items.filter((e) => e.involvedObject?.kind === 'Gateway' && e.involvedObject.name === 'edge' && e.reason === 'CreateCertificate');
  assert.deepEqual(created.map((e) => e.message).sort(), ['Successfully created Certificate "a-tls"', 'Successfully created Certificate "b-tls"']);

  // listeners b and www-a removed: b-tls goes, a-tls follows with one host and is issued again
  const firstRevision = a.status!.revision as number;
  await s.apply(gateway(''));
  await waitFor('b-tls deleted and a-tls re-issued for a.example.test alone', async () => {
    const list = await mine();
    const cur = list.find((c) => c.metadata.name === 'a-tls');
    return list.length === 1 && cur && isReady(cur) && cur.status!.revision > firstRevision ? cur : undefined;
  }, 60_000);
  assert.deepEqual(await s.verifiedSANs('a-tls'), ['a.example.test']);

  const deleted = await s.kubectl(['delete', 'gateway', 'edge', '-n', 'default']);
  assert.equal(deleted.code, 0, deleted.stderr);
  await waitFor('the Gateway\'s Certificates deleted', async () => ((await mine()).length === 0 ? true : undefined), 30_000);
});

test('a listener with a cross-namespace certificateRef: a BadConfig Warning on the Gateway, and no Certificate for it', async () => {
  await s.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: crossns, namespace: default, annotations: { cert-manager.io/cluster-issuer: ca } }
spec:
  gatewayClassName: test
  listeners:
    - { name: x, hostname: x.example.test, port: 443, protocol: HTTPS, tls: { certificateRefs: [{ name: x-tls, namespace: cert-manager }] } }
`);
  const warning = await waitFor('a BadConfig event on Gateway crossns', async () => {
    const events = await s.getJSON<{ items: KubeJSON[] }>(['get', 'events', '-n', 'default']);
    return events.items.find((e) => e.involvedObject?.name === 'crossns' && e.reason === 'BadConfig');
  });
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message!, /cross-namespace secret references are not allowed/);
  for (const ns of ['default', 'cert-manager']) {
    const list = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-n', ns]);
    assert.deepEqual(list.items.filter((c) => c.metadata.name === 'x-tls'), []);
  }
});
