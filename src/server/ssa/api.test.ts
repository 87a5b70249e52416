// Server-side apply through the HTTP API: ownership recorded for every kind (a Secret as well
// as a Certificate), a conflict as kube-apiserver words it, and managedFields kept by an
// update that does not mention them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../testing/test-api-server.ts';
import http from 'node:http';

const { api } = await startTestApiServer('ssa');

function request(method: string, path: string, body?: string, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method, headers: body === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const secret = '/api/v1/namespaces/default/secrets/creds';
const apply = (manager: string, body: object, force = false) =>
  request('PATCH', `${secret}?fieldManager=${manager}${force ? '&force=true' : ''}`, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, ...body }), 'application/apply-patch+yaml');

test('ssa over HTTP: a Secret\'s keys owned per applier, a 409 for another\'s key, removal of a dropped key', async () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  assert.equal((await apply('dns-team', { data: { token: b64('t1') } })).status, 201);
  assert.equal((await apply('ops', { data: { email: b64('ops@example.test') } })).status, 200);
  const conflict = await apply('ops', { data: { email: b64('ops@example.test'), token: b64('t2') } });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.reason, 'Conflict');
  assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "dns-team": .data.token');
  assert.deepEqual(conflict.body.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "dns-team"', field: '.data.token' }]);

  const forced = await apply('ops', { data: { email: b64('ops@example.test'), token: b64('t2') } }, true);
  assert.equal(forced.status, 200);
  assert.deepEqual(forced.body.metadata.managedFields.map((e: { manager: string; fieldsV1: object }) => [e.manager, e.fieldsV1]), [
    ['ops', { 'f:data': { 'f:email': {}, 'f:token': {} } }],
  ], 'dns-team lost its only field and its entry');

  const dropped = await apply('ops', { data: { token: b64('t2') } });
  assert.deepEqual(dropped.body.data, { token: b64('t2') });

  // an update that leaves managedFields out keeps them; an explicit empty list clears them
  const { managedFields: _m, ...metadata } = dropped.body.metadata;
  const put = await request('PUT', secret, JSON.stringify({ ...dropped.body, metadata, data: { token: b64('t3') } }));
  assert.equal(put.status, 200);
  assert.equal(put.body.metadata.managedFields[0].manager, 'ops');
  const cleared = await request('PUT', secret, JSON.stringify({ ...put.body, metadata: { ...put.body.metadata, managedFields: [] } }));
  assert.deepEqual(cleared.body.metadata.managedFields, []);
});

test('applying the same configuration again writes nothing: same resourceVersion and managedFields time, as kube-apiserver (kubernetes#88875)', async () => {
  const path = '/api/v1/namespaces/default/secrets/same';
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'same', labels: { a: 'b' } }, data: { k: 'dg==' } });
  const first = await request('PATCH', `${path}?fieldManager=same-applier`, body, 'application/apply-patch+yaml');
  assert.equal(first.status, 201);
  await new Promise((r) => setTimeout(r, 1100)); // a new managedFields time would differ by a second
  const again = await request('PATCH', `${path}?fieldManager=same-applier`, body, 'application/apply-patch+yaml');
  assert.equal(again.status, 200);
  assert.equal(again.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
  assert.deepEqual(again.body.metadata.managedFields, first.body.metadata.managedFields);
});

function requestAs(userAgent: string, method: string, path: string, body: string, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method, headers: { 'User-Agent': userAgent, 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a write without fieldManager is owned by its User-Agent\'s first part, as kube-apiserver names it, so an apply of its field conflicts', async () => {
  const issuers = '/apis/cert-manager.io/v1/namespaces/default/issuers';
  const created = await requestAs('my-operator/1.0 (linux/amd64)', 'POST', issuers, JSON.stringify({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ua', labels: { tier: 'a' } }, spec: { selfSigned: {} } }));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(created.body.metadata.managedFields.map((e: { manager: string; operation: string }) => [e.manager, e.operation]), [['my-operator', 'Update']]);
  const patched = await requestAs('other-tool/2', 'PATCH', `${issuers}/ua`, JSON.stringify({ metadata: { labels: { tier: 'b' } } }), 'application/merge-patch+json');
  assert.equal(patched.status, 200);
  assert.ok(patched.body.metadata.managedFields.some((e: { manager: string }) => e.manager === 'other-tool'), JSON.stringify(patched.body.metadata.managedFields));
  const conflict = await request('PATCH', `${issuers}/ua?fieldManager=gitops`, JSON.stringify({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ua', labels: { tier: 'c' } } }), 'application/apply-patch+yaml');
  assert.equal(conflict.status, 409, JSON.stringify(conflict.body));
  assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "other-tool" using cert-manager.io/v1: .metadata.labels.tier');
  // an explicit fieldManager wins over the User-Agent
  const put = await requestAs('my-operator/1.0', 'PUT', `${issuers}/ua?fieldManager=named`, JSON.stringify({ ...patched.body, metadata: { ...patched.body.metadata, labels: { tier: 'd' } } }));
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.ok(put.body.metadata.managedFields.some((e: { manager: string }) => e.manager === 'named'));
});
