import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta.ts';
import { lastAppliedAnnotation, lastAppliedConfiguration, lastAppliedOf } from './last-applied.ts';

// what kubectl v1.32 `apply -f` stored for these documents on a certsmith server (read back with
// `kubectl get -o jsonpath`), trailing newline included
test('the record is the bytes kubectl writes: keys sorted, namespace filled in, an empty annotations map kept', () => {
  const issuer = { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'selfsigned', labels: { b: '2', a: 'x' }, namespace: 'default' }, spec: { selfSigned: {} } } as KubeObject;
  assert.equal(lastAppliedConfiguration(issuer),
    '{"apiVersion":"cert-manager.io/v1","kind":"Issuer","metadata":{"annotations":{},"labels":{"a":"x","b":"2"},"name":"selfsigned","namespace":"default"},"spec":{"selfSigned":{}}}\n');
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lac' } } as KubeObject;
  assert.equal(lastAppliedConfiguration(ns), '{"apiVersion":"v1","kind":"Namespace","metadata":{"annotations":{},"name":"lac"}}\n');
  const crt = {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c1', namespace: 'default', annotations: { z: '1' } },
    spec: { secretName: 'c1', dnsNames: ['a.example', 'b.example'], duration: '2160h', issuerRef: { name: 'selfsigned' } },
  } as KubeObject;
  assert.equal(lastAppliedConfiguration(crt),
    '{"apiVersion":"cert-manager.io/v1","kind":"Certificate","metadata":{"annotations":{"z":"1"},"name":"c1","namespace":"default"},"spec":{"dnsNames":["a.example","b.example"],"duration":"2160h","issuerRef":{"name":"selfsigned"},"secretName":"c1"}}\n');
});

test('the record leaves out a previous record, and escapes <, > and & as Go does', () => {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm', annotations: { [lastAppliedAnnotation]: '{"old":true}\n' } }, data: { html: '<a href="x">&</a>' } } as KubeObject;
  assert.equal(lastAppliedConfiguration(obj), '{"apiVersion":"v1","data":{"html":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"m"}}\n');
  assert.deepEqual(JSON.parse(lastAppliedConfiguration(obj)).data, obj.data);
});

test('lastAppliedOf reads a record back, and ignores one that is not a JSON object', () => {
  const stored = (v: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', annotations: { [lastAppliedAnnotation]: v } } }) as KubeObject;
  assert.deepEqual(lastAppliedOf(stored('{"metadata":{"labels":{"a":"b"}}}\n'))?.metadata, { labels: { a: 'b' } });
  assert.equal(lastAppliedOf(stored('not json')), undefined);
  assert.equal(lastAppliedOf(stored('"a string"')), undefined);
  assert.equal(lastAppliedOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }), undefined);
});
