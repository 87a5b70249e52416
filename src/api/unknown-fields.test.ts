// Unknown and duplicate fields as kube-apiserver finds them for structural schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Certificate, Issuer, SecretType, GatewayType } from './resources.ts';
import { duplicateFields, hasFieldSchema, jsonPointer, parseFieldValidation, pruneUnknownFields, pruneUnknownPatchFields, strictProblems } from './unknown-fields.ts';

const typoCert = () => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
  metadata: { name: 'c', namespace: 'default', labels: { a: 'b' }, annotations: { x: 'y' }, colour: 'red', managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }] },
  spec: {
    secretName: 's', renewbefore: '360h', issuerRef: { name: 'i' }, dnsNames: ['a.example'],
    privateKey: { algoritm: 'ECDSA', size: 256 },
    secretTemplate: { annotations: { any: 'thing' } },
  },
  status: { conditions: [{ type: 'Ready', status: 'True', extra: 1 }] },
});

test('unknown fields of a Certificate are pruned and reported sorted, with metadata and list indexes', () => {
  const obj = typoCert();
  const unknown = pruneUnknownFields(Certificate, obj);
  assert.deepEqual(unknown.map((u) => u.path), ['metadata.colour', 'spec.privateKey.algoritm', 'spec.renewbefore', 'status.conditions[0].extra']);
  assert.deepEqual(unknown.map((u) => jsonPointer(u.pointer)), ['/metadata/colour', '/spec/privateKey/algoritm', '/spec/renewbefore', '/status/conditions/0/extra']);
  assert.deepEqual(obj.spec.privateKey, { size: 256 });
  assert.equal('renewbefore' in obj.spec, false);
  // maps and preserved subtrees keep their keys
  assert.deepEqual(obj.metadata.labels, { a: 'b' });
  assert.deepEqual(obj.spec.secretTemplate, { annotations: { any: 'thing' } });
  assert.deepEqual(obj.metadata.managedFields, [{ manager: 'm', fieldsV1: { 'f:spec': {} } }]);
  assert.deepEqual(pruneUnknownFields(Certificate, obj), []);
});

test('open subtrees (x-kubernetes-preserve-unknown-fields) keep unknown fields', () => {
  const issuer = {
    apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i' },
    spec: { acme: { server: 'https://x', privateKeySecretRef: { name: 'k' }, solvers: [{ dns01: { webhook: { groupName: 'g', solverName: 's', config: { anything: { deep: 1 } } } } }] } },
  };
  assert.deepEqual(pruneUnknownFields(Issuer, issuer).map((u) => u.path), []);
  assert.deepEqual(issuer.spec.acme.solvers[0].dns01.webhook.config, { anything: { deep: 1 } });
  (issuer.spec.acme.solvers[0] as Record<string, unknown>).http02 = {};
  assert.deepEqual(pruneUnknownFields(Issuer, issuer).map((u) => u.path), ['spec.acme.solvers[0].http02']);
});

test('a Secret is checked at its top level; kinds served without a schema are not', () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dg==' }, strinData: { a: 'b' }, type: 'Opaque' };
  assert.deepEqual(pruneUnknownFields(SecretType, secret).map((u) => u.path), ['strinData']);
  assert.equal(hasFieldSchema(GatewayType), false);
  const gw = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'g' }, spec: { gatewayClassName: 'x' } };
  assert.deepEqual(pruneUnknownFields(GatewayType, gw), []);
  assert.deepEqual(gw.spec, { gatewayClassName: 'x' });
});

test('a merge patch is pruned; an unknown field set to null is dropped without a report', () => {
  const patch = { spec: { renewbefore: '1h', duration: '2h', gone: null }, metadata: { labels: { a: null } } };
  assert.deepEqual(pruneUnknownPatchFields(Certificate, patch).map((u) => u.path), ['spec.renewbefore']);
  assert.deepEqual(patch, { spec: { duration: '2h' }, metadata: { labels: { a: null } } });
});

test('duplicate keys are found in document order with their paths', () => {
  const text = '{"metadata":{"name":"a","name":"b"},"spec":{"dnsNames":["x"],"x":{"a\\"b":1,"a\\"b":2},"ports":[{"p":1},{"p":1,"p":2}],"dnsNames":[]}}';
  assert.deepEqual(duplicateFields(text), ['metadata.name', 'spec.x.a"b', 'spec.ports[1].p', 'spec.dnsNames']);
  assert.deepEqual(duplicateFields('{"a": [ ], "b": { }, "c": "}\\"{", "d": -1.5e3, "e": null, "f": true}'), []);
  assert.deepEqual(duplicateFields('[{"a":1,"a":1}]'), ['[0].a']);
});

test('keys and values with escapes: backslashes before a quote, escaped and not; an escaped key equals its plain spelling', () => {
  const cases: [unknown, string[]][] = [
    [{ a: 'x\\', b: 'q"\\"', c: '\\\\' }, []],
    [{ 'k\\': { 'in"ner': 1 } }, []],
  ];
  for (const [v, dup] of cases) assert.deepEqual(duplicateFields(JSON.stringify(v)), dup, JSON.stringify(v));
  assert.deepEqual(duplicateFields('{"a\\\\":1,"a\\\\":2,"z":"\\\\","z":"\\""}'), ['a\\', 'z']);
  assert.deepEqual(duplicateFields('{"\\u0061":1,"a":2}'), ['a'], 'a key written as \\u0061 is "a"');
  assert.deepEqual(duplicateFields('{"x":"\\"}","x":1}'), ['x'], 'an escaped quote does not end the string');
});

test('kube words the problems duplicates first, then unknown fields', () => {
  assert.deepEqual(strictProblems(['spec.paused'], [{ path: 'spec.a', pointer: ['spec', 'a'] }]), ['duplicate field "spec.paused"', 'unknown field "spec.a"']);
  assert.equal(parseFieldValidation(null), 'Warn');
  assert.equal(parseFieldValidation('Strict'), 'Strict');
  assert.equal(parseFieldValidation('strict'), undefined);
});

test('a value of the wrong type is left for validation to refuse, not emptied', () => {
  const obj = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', annotations: { a: { nested: 1 } } }, spec: { secretName: { x: 1 }, dnsNames: { y: 2 } } };
  assert.deepEqual(pruneUnknownFields(Certificate, obj), []);
  assert.deepEqual(obj.metadata.annotations, { a: { nested: 1 } });
  assert.deepEqual(obj.spec, { secretName: { x: 1 }, dnsNames: { y: 2 } });
});
