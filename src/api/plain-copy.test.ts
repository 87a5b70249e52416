import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plainCopy } from './plain-copy.ts';

test('a copy of plain data equals structuredClone of it and shares no object or array with the original', () => {
  const o = {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', labels: { x: 'y' }, finalizers: ['f'], ownerReferences: [{ uid: 'u', controller: true }] },
    data: { 'tls.crt': 'QQ==' }, n: 1.5, nothing: null, gone: undefined, nested: [[1, 2], [{ deep: { er: [] } }]],
  };
  const c = plainCopy(o);
  assert.deepStrictEqual(c, structuredClone(o));
  assert.ok('gone' in c, 'an undefined field is kept, as structuredClone keeps it');
  c.metadata.labels.x = 'changed';
  c.metadata.finalizers.push('g');
  (c.nested[1][0] as { deep: { er: unknown[] } }).deep.er.push(1);
  assert.equal(o.metadata.labels.x, 'y');
  assert.deepEqual(o.metadata.finalizers, ['f']);
  assert.deepEqual((o.nested[1][0] as { deep: { er: unknown[] } }).deep.er, []);
});

test('values that are not plain data are copied as structuredClone copies them', () => {
  const when = new Date('2026-11-26T00:00:00Z');
  const c = plainCopy({ when, bytes: Buffer.from('ab'), m: new Map([['k', 1]]) });
  assert.ok(c.when instanceof Date && c.when !== when && c.when.getTime() === when.getTime());
  assert.deepEqual([...c.m], [['k', 1]]);
  assert.deepEqual([...c.bytes], [...Buffer.from('ab')]);
});

test('scalars and a prototype-less record', () => {
  assert.equal(plainCopy('s'), 's');
  assert.equal(plainCopy(null), null);
  const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: { b: 1 } });
  const c = plainCopy(bare);
  assert.equal(Object.getPrototypeOf(c), null);
  assert.deepEqual({ ...c }, { a: { b: 1 } });
  assert.notEqual(c.a, bare.a);
});

test('a "__proto__" key from a request body stays a key: the copy\'s prototype is not set from it', () => {
  const body = JSON.parse('{"spec": {"__proto__": {"isCA": true}, "commonName": "x"}}') as { spec: Record<string, unknown> };
  const c = plainCopy(body);
  assert.equal(Object.getPrototypeOf(c.spec), Object.prototype);
  assert.equal(c.spec.isCA, undefined, 'nothing reads through a prototype taken from the body');
  assert.deepEqual(Object.keys(c.spec), ['__proto__', 'commonName']);
  assert.equal(JSON.stringify(c), JSON.stringify(body));
  assert.equal(JSON.stringify(c), JSON.stringify(structuredClone(body)));
});
