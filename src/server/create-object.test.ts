// A create that carries metadata.resourceVersion (an object exported with `kubectl get -o yaml`
// and created again) is refused, as kube-apiserver's storage refuses it, so a restore script
// that passes here passes on a cluster; a dry run too, and nothing is stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('create-object');

test('create with metadata.resourceVersion set is refused with kube-apiserver\'s message, dry run or not; without it, created', async () => {
  const secrets = '/api/v1/namespaces/default/secrets';
  const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'exported', resourceVersion: '42' }, type: 'Opaque' };
  for (const path of [`${secrets}?dryRun=All`, secrets]) {
    const r = await requestJSON(api, 'POST', path, body);
    assert.equal(r.status, 400, path);
    assert.equal(r.body.message, 'resourceVersion should not be set on objects to be created');
  }
  assert.equal((await requestJSON(api, 'GET', `${secrets}/exported`)).status, 404);
  assert.equal((await requestJSON(api, 'POST', secrets, { ...body, metadata: { name: 'exported', resourceVersion: '' } })).status, 201);
});
