// /api/v1/namespaces/NAME/finalize, kube-apiserver's subresource for a namespace's
// spec.finalizers: clearing them is how an administrator frees a namespace stuck Terminating on
// content whose finalizers nobody will remove (kubectl replace --raw .../finalize). The namespace
// then goes at once; what was left in it stays stored, as on a cluster. It answered 404.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('namespace-finalize');

test('clearing spec.finalizers through /finalize removes a namespace stuck on content with finalizers', async () => {
  assert.equal((await requestJSON(api, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'stuck' } })).status, 201);
  assert.equal((await requestJSON(api, 'POST', '/api/v1/namespaces/stuck/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', finalizers: ['example.com/hold'] } })).status, 201);
  assert.equal((await requestJSON(api, 'DELETE', '/api/v1/namespaces/stuck')).status, 200);
  const terminating = await requestJSON(api, 'GET', '/api/v1/namespaces/stuck');
  assert.equal(terminating.body.status.phase, 'Terminating');
  assert.deepEqual(terminating.body.spec.finalizers, ['kubernetes']);

  // a body naming another namespace is refused
  const other = await requestJSON(api, 'PUT', '/api/v1/namespaces/stuck/finalize', { ...terminating.body, metadata: { ...terminating.body.metadata, name: 'other' } });
  assert.equal(other.status, 400);
  // only PUT is served there
  assert.equal((await requestJSON(api, 'GET', '/api/v1/namespaces/stuck/finalize')).status, 405);

  const freed = await requestJSON(api, 'PUT', '/api/v1/namespaces/stuck/finalize', { ...terminating.body, spec: { finalizers: [] } });
  assert.equal(freed.status, 200, JSON.stringify(freed.body));
  assert.deepEqual(freed.body.spec.finalizers ?? [], []);
  assert.equal((await requestJSON(api, 'GET', '/api/v1/namespaces/stuck')).status, 404);
});

test('/finalize on a namespace that is not being deleted sets its finalizers, and it stays', async () => {
  assert.equal((await requestJSON(api, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'live' } })).status, 201);
  const live = (await requestJSON(api, 'GET', '/api/v1/namespaces/live')).body;
  const r = await requestJSON(api, 'PUT', '/api/v1/namespaces/live/finalize', { ...live, spec: { finalizers: [] } });
  assert.equal(r.status, 200);
  const after = await requestJSON(api, 'GET', '/api/v1/namespaces/live');
  assert.equal(after.status, 200);
  assert.deepEqual(after.body.spec.finalizers ?? [], []);
  assert.equal(after.body.status.phase, 'Active');
});
