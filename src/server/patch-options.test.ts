// PATCH options checked as kube-apiserver checks them: force only on an apply patch (422), and an
// apply patch whose apiVersion is not the resource's version is a 400 naming both, and one whose body names
// another object, namespace or kind is a 400.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('patch-options');
const secrets = '/api/v1/namespaces/default/secrets';
const certificates = '/apis/cert-manager.io/v1/namespaces/default/certificates';

test('force on a merge or JSON patch is refused; on an apply patch it is taken', async () => {
  assert.equal((await requestJSON(api, 'POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'p' } })).status, 201);
  for (const [force, type, body] of [['true', 'application/merge-patch+json', { metadata: { labels: { a: 'b' } } }], ['false', 'application/json-patch+json', []]] as const) {
    const r = await requestJSON(api, 'PATCH', `${secrets}/p?force=${force}`, body, type);
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  }
  const applied = await requestJSON(api, 'PATCH', `${secrets}/p?force=true&fieldManager=me`, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'p', labels: { a: 'c' } } }), 'application/apply-patch+yaml');
  assert.equal(applied.status, 200, JSON.stringify(applied.body));
});

test('an apply patch for another version of the resource is refused, naming both versions', async () => {
  const body = JSON.stringify({ apiVersion: 'cert-manager.io/v2', kind: 'Certificate', metadata: { name: 'v2' }, spec: { secretName: 's', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' } } });
  const r = await requestJSON(api, 'PATCH', `${certificates}/v2?fieldManager=me`, body, 'application/apply-patch+yaml');
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.message, 'Incorrect version specified in apply patch. Specified patch version: cert-manager.io/v2, expected: cert-manager.io/v1');
});

test('an apply patch that carries metadata.managedFields is refused, as kube-apiserver refuses it', async () => {
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mf', managedFields: [{ manager: 'old', operation: 'Update', apiVersion: 'v1' }] } });
  const r = await requestJSON(api, 'PATCH', `${secrets}/mf?fieldManager=me`, body, 'application/apply-patch+yaml');
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.message, 'metadata.managedFields must be nil');
});

test('an apply patch whose body names another object, namespace or kind is refused, as kube-apiserver refuses it', async () => {
  const spec = { secretName: 's', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' } };
  const apply = (name: string, body: object) => requestJSON(api, 'PATCH', `${certificates}/${name}?fieldManager=me`, JSON.stringify(body), 'application/apply-patch+yaml');
  const cases: [string, object, string][] = [
    ['web', { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'api' }, spec }, 'the name of the object (api) does not match the name on the URL (web)'],
    ['ns1', { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ns1', namespace: 'kube-system' }, spec }, 'the namespace of the provided object does not match the namespace sent on the request'],
    ['nokind', { metadata: { name: 'nokind' }, spec }, 'Incorrect version specified in apply patch. Specified patch version: , expected: cert-manager.io/v1'],
    ['wrongkind', { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'wrongkind' }, spec }, 'invalid object type: cert-manager.io/v1, Kind=Issuer'],
    ['nokind2', { apiVersion: 'cert-manager.io/v1', metadata: { name: 'nokind2' }, spec }, 'invalid object type: cert-manager.io/v1, Kind='],
  ];
  for (const [name, body, message] of cases) {
    const r = await apply(name, body);
    assert.equal(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, message);
  }
  for (const name of ['web', 'api', 'ns1', 'nokind', 'wrongkind', 'nokind2']) {
    assert.equal((await requestJSON(api, 'GET', `${certificates}/${name}`)).status, 404, `${name} was stored`);
  }
  assert.equal((await requestJSON(api, 'GET', '/apis/cert-manager.io/v1/namespaces/kube-system/certificates/ns1')).status, 404);

  // the same checks once the object exists (an update, not a create)
  assert.equal((await apply('live', { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'live' }, spec })).status, 201);
  const renamed = await apply('live', { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'other' }, spec });
  assert.equal(renamed.status, 400, JSON.stringify(renamed.body));
  assert.equal(renamed.body.message, 'the name of the object (other) does not match the name on the URL (live)');
  const moved = await apply('live', { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'live', namespace: 'other' }, spec });
  assert.equal(moved.status, 400, JSON.stringify(moved.body));
});
