// /openapi/v2: the Swagger 2.0 form of the v3 schemas, in JSON by default and in gnostic's
// protobuf when asked for it, as kubectl before 1.27 asks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import YAML from 'yaml';
import { decodeOpenAPIV2Protobuf, openAPIV2Document } from './v2.ts';
import { startTestApiServer } from '../testing/test-api-server.ts';

const { api } = await startTestApiServer('openapi-v2');

function get(path: string, accept?: string): Promise<{ status: number; contentType: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(new URL(path, api.url), { headers: accept ? { Accept: accept } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), bytes: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

test('openapi v2 JSON: every kind\'s definition, references under #/definitions, GVK extensions', async () => {
  const r = await get('/openapi/v2', 'application/json');
  assert.equal(r.status, 200);
  assert.equal(r.contentType, 'application/json');
  const doc = JSON.parse(r.bytes.toString());
  assert.equal(doc.swagger, '2.0');
  const cert = doc.definitions['io.cert-manager.v1.Certificate'];
  assert.deepEqual(cert['x-kubernetes-group-version-kind'], [{ group: 'cert-manager.io', kind: 'Certificate', version: 'v1' }]);
  assert.equal(cert.properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.equal(cert.properties.metadata.allOf, undefined);
  assert.ok(cert.properties.spec.properties.privateKey.properties.rotationPolicy);
  assert.ok(doc.definitions['io.k8s.api.core.v1.Secret']);
  assert.doesNotMatch(r.bytes.toString(), /#\/components\/schemas/);
  // Swagger 2.0 has no anyOf: an int-or-string quantity keeps only its extension, as kube-apiserver writes it
  const limit = doc.definitions['io.cert-manager.v1.Issuer'].properties.spec.properties.acme.properties.solvers.items.properties.http01.properties.ingress.properties.podTemplate.properties.spec.properties.resources.properties.limits.additionalProperties;
  assert.equal(limit['x-kubernetes-int-or-string'], true);
  assert.equal(limit.anyOf, undefined);
  assert.doesNotMatch(r.bytes.toString(), /"anyOf"/);
});

test('openapi v2 protobuf: gnostic\'s Document carrying the same definitions', async () => {
  const r = await get('/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
  assert.equal(r.status, 200);
  assert.equal(r.contentType, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  const doc = decodeOpenAPIV2Protobuf(r.bytes);
  assert.equal(doc.swagger, '2.0');
  const names = doc.definitions.additional_properties.map((d: { name: string }) => d.name);
  assert.deepEqual(names, Object.keys(openAPIV2Document().definitions as object));
  const cert = doc.definitions.additional_properties.find((d: { name: string }) => d.name === 'io.cert-manager.v1.Certificate').value;
  assert.deepEqual(cert.type.value, ['object']);
  const gvk = cert.vendor_extension.find((e: { name: string }) => e.name === 'x-kubernetes-group-version-kind');
  assert.deepEqual(YAML.parse(gvk.value.yaml), [{ group: 'cert-manager.io', kind: 'Certificate', version: 'v1' }]);
  const props = Object.fromEntries(cert.properties.additional_properties.map((p: { name: string; value: unknown }) => [p.name, p.value]));
  assert.equal(props.metadata._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  const secret = doc.definitions.additional_properties.find((d: { name: string }) => d.name === 'io.k8s.api.core.v1.Secret').value;
  const data = secret.properties.additional_properties.find((p: { name: string }) => p.name === 'data').value;
  assert.deepEqual(data.additional_properties.schema.type.value, ['string'], 'a map is additionalProperties with a schema');
});
