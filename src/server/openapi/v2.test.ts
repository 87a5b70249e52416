// /openapi/v2: the Swagger 2.0 form of the v3 schemas, in JSON by default and in gnostic's
// protobuf when asked for it, as kubectl before 1.27 asks; with the paths kubectl v1.20 reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import YAML from 'yaml';
import { decodeOpenAPIV2Protobuf, openAPIV2Document } from './v2.ts';
import { startTestApiServer } from '../testing/test-api-server.ts';
import { resourceTypes } from '../../api/resources.ts';

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

test('openapi v2 JSON: each served kind\'s paths, their operations with GVK, action and write parameters', async () => {
  const doc = JSON.parse((await get('/openapi/v2', 'application/json')).bytes.toString());
  const gvk = { group: 'cert-manager.io', kind: 'Certificate', version: 'v1' };
  const collection = doc.paths['/apis/cert-manager.io/v1/namespaces/{namespace}/certificates'];
  const item = doc.paths['/apis/cert-manager.io/v1/namespaces/{namespace}/certificates/{name}'];
  assert.deepEqual(Object.keys(collection).sort(), ['get', 'parameters', 'post']);
  assert.deepEqual(Object.keys(item).sort(), ['delete', 'get', 'parameters', 'patch', 'put']);
  assert.deepEqual(item.parameters.map((p: { name: string; in: string; required: boolean; type: string }) => [p.name, p.in, p.required, p.type]), [['name', 'path', true, 'string'], ['namespace', 'path', true, 'string']]);
  for (const [action, op] of [['list', collection.get], ['post', collection.post], ['get', item.get], ['put', item.put], ['patch', item.patch], ['delete', item.delete]]) {
    assert.equal(op['x-kubernetes-action'], action);
    assert.deepEqual(op['x-kubernetes-group-version-kind'], gvk, action);
    assert.ok(op.responses['200'], action);
  }
  const queryNames = (op: { parameters: { name: string; in: string }[] }) => op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  for (const op of [collection.post, item.put]) assert.deepEqual(queryNames(op), ['dryRun', 'fieldManager', 'fieldValidation']);
  assert.deepEqual(queryNames(item.patch), ['dryRun', 'fieldManager', 'fieldValidation', 'force']);
  // Swagger 2.0's forms: the body a parameter, media types in consumes, a query parameter's type on itself
  assert.deepEqual(item.patch.parameters[0], { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } });
  assert.ok(item.patch.consumes.includes('application/apply-patch+yaml'));
  assert.deepEqual(item.patch.parameters[1], { name: 'dryRun', in: 'query', description: item.patch.parameters[1].description, type: 'string', uniqueItems: true });
  assert.deepEqual(item.put.responses['201'].schema, { $ref: '#/definitions/io.cert-manager.v1.Certificate' });
  assert.equal(collection.get.responses['200'].schema.$ref, '#/definitions/io.cert-manager.v1.CertificateList');
  assert.ok(doc.paths['/apis/cert-manager.io/v1/namespaces/{namespace}/certificates/{name}/status'].patch);
  assert.ok(doc.paths['/api/v1/namespaces/{name}'].patch, 'cluster-scoped kinds: no namespace segment');
  // every reference resolves within the document, and none is left in v3's form
  const text = JSON.stringify(doc);
  for (const [, ref] of text.matchAll(/"\$ref":"([^"]+)"/g)) assert.ok(doc.definitions[ref.replace('#/definitions/', '')], ref);
  assert.doesNotMatch(text, /requestBody|"content"|#\/components/);
});

/**
 * cli-runtime's supportsDryRun as kubectl v1.20 runs it on the protobuf document (release-1.20
 * pkg/resource/dry_run_verifier.go): the first path whose PATCH carries the kind's
 * x-kubernetes-group-version-kind (YAML `group`, `kind`, `version`) answers, by whether that
 * operation lists a `dryRun` query parameter of its own.
 */
function supportsDryRun(doc: Record<string, any>, gvk: { group: string; kind: string; version: string }): boolean | undefined {
  for (const path of doc.paths?.path ?? []) {
    const patch = path.value?.patch;
    const ext = (patch?.vendor_extension ?? []).find((e: { name: string; value?: { yaml?: string } }) => e.name === 'x-kubernetes-group-version-kind' && e.value?.yaml);
    if (!ext) continue;
    const v = YAML.parse(ext.value.yaml) as Record<string, string>;
    if (v.group !== gvk.group || v.kind !== gvk.kind || v.version !== gvk.version) continue;
    return (patch.parameters ?? []).some((p: any) => p.parameter?.non_body_parameter?.query_parameter_sub_schema?.name === 'dryRun');
  }
  return undefined;
}

test('openapi v2 protobuf: every served kind supports dry-run as kubectl v1.20 reads it (kubectl diff, --dry-run=server)', async () => {
  const doc = decodeOpenAPIV2Protobuf((await get('/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf')).bytes);
  const json = openAPIV2Document();
  assert.deepEqual(doc.paths.path.map((p: { name: string }) => p.name), Object.keys(json.paths as object));
  for (const t of resourceTypes) assert.equal(supportsDryRun(doc, { group: t.group, kind: t.kind, version: t.version }), true, `${t.group}/${t.version} ${t.kind}`);
  assert.equal(supportsDryRun(doc, { group: 'example.test', kind: 'Unknown', version: 'v1' }), undefined);

  // the item path in full: path parameters, then each operation's body, query parameters and responses
  const item = doc.paths.path.find((p: { name: string }) => p.name === '/api/v1/namespaces/{namespace}/secrets/{name}').value;
  assert.deepEqual(item.parameters.map((p: any) => p.parameter.non_body_parameter.path_parameter_sub_schema.name), ['name', 'namespace']);
  assert.equal(item.parameters[0].parameter.non_body_parameter.path_parameter_sub_schema.required, true);
  const [body, ...query] = item.put.parameters.map((p: any) => p.parameter);
  assert.equal(body.body_parameter.schema._ref, '#/definitions/io.k8s.api.core.v1.Secret');
  assert.deepEqual(query.map((q: any) => [q.non_body_parameter.query_parameter_sub_schema.name, q.non_body_parameter.query_parameter_sub_schema.type]),
    [['dryRun', 'string'], ['fieldManager', 'string'], ['fieldValidation', 'string']]);
  const ok = item.get.responses.response_code.find((r: { name: string }) => r.name === '200').value.response;
  assert.equal(ok.schema.schema._ref, '#/definitions/io.k8s.api.core.v1.Secret');
  assert.deepEqual(item.patch.consumes, (json.paths as any)['/api/v1/namespaces/{namespace}/secrets/{name}'].patch.consumes);
  const action = item.delete.vendor_extension.find((e: { name: string }) => e.name === 'x-kubernetes-action');
  assert.equal(YAML.parse(action.value.yaml), 'delete');
});
