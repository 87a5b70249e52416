// The object rules shared by the HTTP boundary, admission and the SQLite store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta.ts';
import { Certificate, SecretType } from '../api/resources.ts';
import { base64Problem, checkValueShape, maxNestingDepth, textNestsDeeperThan } from './object-checks.ts';
import { openSqliteStore } from './sqlite/index.ts';
import { StoreError } from './store.ts';
import { soundValue } from '../api/validation/metadata.ts';

test('base64 as Go decodes it: the first rejected byte, padding only at the end, CR/LF skipped', () => {
  for (const ok of ['', 'YQ==', 'YWI=', 'YWJj', 'YWJj\nZGVm', 'YW\r\nJj']) assert.equal(base64Problem(ok), -1, ok);
  assert.equal(base64Problem('not base64!'), 3);
  assert.equal(base64Problem('YQ=a'), 3);
  assert.equal(base64Problem('Y==='), 1);
  assert.equal(base64Problem('YQ'), 2);
  assert.equal(base64Problem('YWJj-_'), 4);
});

test('nesting: text and value checks agree, strings do not count, nothing recurses', () => {
  const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
  assert.equal(textNestsDeeperThan(nested(maxNestingDepth)), false);
  assert.equal(textNestsDeeperThan(nested(maxNestingDepth + 1)), true);
  assert.equal(textNestsDeeperThan(`"${'['.repeat(10_000)}"`), false);
  assert.equal(textNestsDeeperThan(`"\\"${'['.repeat(10_000)}"`), false);
  assert.doesNotThrow(() => checkValueShape(JSON.parse(nested(maxNestingDepth))));
  assert.throws(() => checkValueShape(JSON.parse(nested(maxNestingDepth + 1))), /nested too deeply/);
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.throws(() => checkValueShape(deep), /nested too deeply/);
});

test('lone surrogates are refused with their field path; pairs are fine', () => {
  assert.doesNotThrow(() => checkValueShape({ a: ['😀', 'é'] }));
  const err = (v: unknown) => {
    try {
      checkValueShape(v);
    } catch (e) {
      return e as StoreError;
    }
    assert.fail('accepted');
  };
  assert.match(err({ spec: { dnsNames: ['a', '\ud83d'] } }).message, /^spec\.dnsNames\[1\]: .*U\+D83D/);
  assert.match(err({ metadata: { annotations: { 'example.com/k': '\ude00' } } }).message, /^metadata\.annotations\["example\.com\/k"\]/);
  assert.match(err({ data: { ['\udfff']: 'x' } }).message, /^data: .*a key/);
  assert.equal(err({ a: '\ud800' }).code, 422);
});

test('a problem an object was stored with (before these rules) does not block writes that leave it as it was', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'old', namespace: 'default' } } as KubeObject);
    // what an older version stored: a number as an annotation value
    const db = (store as unknown as { db: { prepare(s: string): { run(...a: unknown[]): unknown } } }).db;
    db.prepare(`UPDATE log SET value = json_set(value, '$.metadata.annotations', json('{"n":123}')) WHERE name = 'old'`).run();
    const got = (await store.get(SecretType, 'default', 'old'))!;
    assert.equal(got.metadata.annotations!.n as unknown, 123);
    // an unrelated change is written
    const labelled = await store.update(SecretType, { ...got, metadata: { ...got.metadata, labels: { a: 'b' } } });
    assert.deepEqual(labelled.metadata.labels, { a: 'b' });
    // a new problem is not
    await assert.rejects(store.update(SecretType, { ...labelled, metadata: { ...labelled.metadata, annotations: { n: 123 as unknown as string, m: true as unknown as string } } }),
      (e: StoreError) => e.code === 400);
    // a status write checks only status
    await store.create(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'default' }, spec: {} } as KubeObject);
    db.prepare(`UPDATE log SET value = json_set(value, '$.metadata.annotations', json('{"n":[1]}')) WHERE name = 'c'`).run();
    const c = (await store.get(Certificate, 'default', 'c'))!;
    const withStatus = await store.updateStatus(Certificate, { ...c, status: { conditions: [] } } as KubeObject);
    assert.deepEqual(withStatus.status, { conditions: [] });
    await assert.rejects(store.updateStatus(Certificate, { ...withStatus, status: { message: '\ud800' } } as KubeObject), (e: StoreError) => e.code === 422);
  } finally {
    await store.close();
  }
});

test('the quick shape check and the detailed walk agree: the walk runs only to name what the quick check found', () => {
  const cases: [unknown, boolean][] = [
    [{ a: ['x', { b: 'y' }], c: 1, d: null }, true],
    [{ a: ['x', { b: 'bad\uD800' }] }, false],
    [{ a: { ['key\uDC00']: 'x' } }, false],
    [{ a: '\uD83D\uDE00 a pair is fine' }, true],
    [JSON.parse('['.repeat(maxNestingDepth) + ']'.repeat(maxNestingDepth)), true],
    [JSON.parse('['.repeat(maxNestingDepth + 1) + ']'.repeat(maxNestingDepth + 1)), false],
  ];
  for (const [v, sound] of cases) {
    assert.equal(soundValue(v, maxNestingDepth), sound);
    if (sound) assert.doesNotThrow(() => checkValueShape(v));
    else assert.throws(() => checkValueShape(v), StoreError);
  }
  assert.throws(() => checkValueShape({ a: [{ b: 'bad\uD800' }] }), /a\[0\]\.b: Invalid value: the value is not well-formed Unicode.*U\+D800/);
});
