// client-go's metadata client (controller-runtime's metadata-only caches) asks for
// PartialObjectMetadata(List) in its Accept header; the server answered full objects, so a cache
// meant to hold metadata held every Secret's data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { requestJSON, startTestApiServer, watchLines } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('partial-metadata');
const ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

function get(path: string): Promise<any> {
  return new Promise((resolve, reject) => {
    http.get(new URL(path, api.url), { headers: { Accept: ACCEPT } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(JSON.parse(text)));
    }).on('error', reject);
  });
}

test('an object, a list and a watch asked for as PartialObjectMetadata answer metadata only, as kube-apiserver does', async () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'meta', labels: { a: 'b' } }, type: 'Opaque', data: { key: Buffer.from('private').toString('base64') } };
  assert.equal((await requestJSON(api, 'POST', '/api/v1/namespaces/default/secrets', secret)).status, 201);
  const one = await get('/api/v1/namespaces/default/secrets/meta');
  assert.equal(one.kind, 'PartialObjectMetadata');
  assert.equal(one.apiVersion, 'meta.k8s.io/v1');
  assert.equal(one.metadata.name, 'meta');
  assert.deepEqual(one.metadata.labels, { a: 'b' });
  assert.equal(one.data, undefined);
  const list = await get('/api/v1/namespaces/default/secrets');
  assert.equal(list.kind, 'PartialObjectMetadataList');
  assert.equal(list.apiVersion, 'meta.k8s.io/v1');
  assert.ok(list.metadata.resourceVersion);
  const item = list.items.find((i: any) => i.metadata.name === 'meta');
  assert.deepEqual([item.kind, item.apiVersion, item.data], ['PartialObjectMetadata', 'meta.k8s.io/v1', undefined]);
  const events = await watchLines(api, '/api/v1/namespaces/default/secrets?watch=1&fieldSelector=metadata.name%3Dmeta', (ls) => ls.length > 0, undefined, { Accept: ACCEPT });
  assert.equal(events[0].type, 'ADDED');
  assert.deepEqual([events[0].object.kind, events[0].object.metadata.name, events[0].object.data], ['PartialObjectMetadata', 'meta', undefined]);
  // a custom resource too
  const issuer = await get('/apis/cert-manager.io/v1/namespaces/default/issuers');
  assert.equal(issuer.kind, 'PartialObjectMetadataList');
});
