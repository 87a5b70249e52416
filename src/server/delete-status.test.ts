// What a DELETE answers, as kube-apiserver's registry answers it (finalizeDelete): a Status naming
// what went for the kinds whose storage does not set ReturnDeletedObject (Secrets, Events, Leases,
// Ingresses, webhook configurations), the deleted object for those that do (custom resources,
// Pods, Services, Namespaces), and the object, marked, when something still holds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('delete-status');

async function created(path: string, body: object): Promise<string> {
  const r = await requestJSON(api, 'POST', path, body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.metadata.uid;
}

test('deleting a Secret, an Event or a Lease answers a Status naming it, not the object (a Secret\'s data among it)', async () => {
  const cases: [string, string, object, string | undefined][] = [
    ['/api/v1/namespaces/default/secrets', 'secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gone' }, data: { 'tls.key': Buffer.from('k').toString('base64') } }, undefined],
    ['/api/v1/namespaces/default/events', 'events', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'gone' }, involvedObject: { kind: 'Secret', name: 'x', namespace: 'default' }, reason: 'R', message: 'm', type: 'Normal' }, undefined],
    ['/apis/coordination.k8s.io/v1/namespaces/default/leases', 'leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'gone' }, spec: {} }, 'coordination.k8s.io'],
  ];
  for (const [path, plural, body, group] of cases) {
    const uid = await created(path, body);
    const r = await requestJSON(api, 'DELETE', `${path}/gone`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
      details: { name: 'gone', ...(group ? { group } : {}), kind: plural, uid },
    });
    assert.equal((await requestJSON(api, 'GET', `${path}/gone`)).status, 404);
  }
});

test('deleting a custom resource answers the deleted object, as ReturnDeletedObject stores do', async () => {
  const path = '/apis/cert-manager.io/v1/namespaces/default/issuers';
  await created(path, { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'gone' }, spec: { selfSigned: {} } });
  const r = await requestJSON(api, 'DELETE', `${path}/gone`);
  assert.equal(r.status, 200);
  assert.equal(r.body.kind, 'Issuer');
  assert.equal(r.body.metadata.name, 'gone');
});

test('a Secret a finalizer holds is answered as the object, marked for deletion', async () => {
  const path = '/api/v1/namespaces/default/secrets';
  await created(path, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
  const r = await requestJSON(api, 'DELETE', `${path}/held`);
  assert.equal(r.status, 200);
  assert.equal(r.body.kind, 'Secret');
  assert.ok(r.body.metadata.deletionTimestamp);
});
