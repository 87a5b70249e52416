import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyJSONPatch, applyMergePatch, jsonEqual } from './patch.ts';
import { StoreError } from './store.ts';

const reason = (r: string) => (e: unknown) => e instanceof StoreError && e.reason === r;

test('merge patch follows the RFC 7386 examples and leaves its inputs alone', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, want] of cases) {
    const t = structuredClone(target);
    const p = structuredClone(patch);
    assert.deepEqual(applyMergePatch(t, p), want, JSON.stringify({ target, patch }));
    assert.deepEqual(t, target);
    assert.deepEqual(p, patch);
  }
  const target = { keep: { deep: [1] }, x: 1 };
  const out = applyMergePatch<typeof target>(target, { x: 2 });
  out.keep.deep.push(2);
  assert.deepEqual(target.keep.deep, [1], 'untouched members are copies');
});

test('json patch applies every RFC 6902 operation', () => {
  const doc = { a: { b: [1, 2, 3] }, s: 'x', 'we/ird~': 1 };
  const out = applyJSONPatch(doc, [
    { op: 'add', path: '/a/b/1', value: 9 },
    { op: 'add', path: '/a/b/-', value: 4 },
    { op: 'remove', path: '/a/b/0' },
    { op: 'replace', path: '/s', value: 'y' },
    { op: 'copy', from: '/s', path: '/t' },
    { op: 'move', from: '/t', path: '/a/u' },
    { op: 'test', path: '/a/u', value: 'y' },
    { op: 'test', path: '/we~1ird~0', value: 1 },
    { op: 'add', path: '/new', value: { n: [1] } },
  ]);
  assert.deepEqual(out, { a: { b: [9, 2, 3, 4], u: 'y' }, s: 'y', 'we/ird~': 1, new: { n: [1] } });
  assert.deepEqual(doc, { a: { b: [1, 2, 3] }, s: 'x', 'we/ird~': 1 }, 'the input is not mutated');
  assert.deepEqual(applyJSONPatch({ a: 1 }, [{ op: 'replace', path: '', value: [1] }]), [1]);
});

test('json patch: malformed operations are BadRequest, inapplicable ones Invalid', () => {
  assert.throws(() => applyJSONPatch({}, { op: 'add' }), reason('BadRequest'));
  assert.throws(() => applyJSONPatch({}, [{ op: 'nope', path: '/a' }]), reason('BadRequest'));
  assert.throws(() => applyJSONPatch({}, [{ op: 'add', path: 'a', value: 1 }]), reason('BadRequest'));
  assert.throws(() => applyJSONPatch({}, [{ op: 'add', path: '/a' }]), reason('BadRequest'));
  assert.throws(() => applyJSONPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), reason('Invalid'));
  assert.throws(() => applyJSONPatch({}, [{ op: 'remove', path: '/a' }]), reason('Invalid'));
  assert.throws(() => applyJSONPatch({}, [{ op: 'replace', path: '/a', value: 1 }]), reason('Invalid'));
  assert.throws(() => applyJSONPatch({}, [{ op: 'add', path: '/a/b', value: 1 }]), reason('Invalid'));
  assert.throws(() => applyJSONPatch({ l: [1] }, [{ op: 'add', path: '/l/2', value: 1 }]), reason('Invalid'));
  assert.throws(() => applyJSONPatch({ l: [1] }, [{ op: 'remove', path: '/l/01' }]), reason('Invalid'));
  assert.throws(() => applyJSONPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/c' }]), reason('Invalid'));
  // a failing operation leaves nothing half-applied in the caller's object
  const doc = { a: 1 };
  assert.throws(() => applyJSONPatch(doc, [{ op: 'replace', path: '/a', value: 2 }, { op: 'test', path: '/a', value: 1 }]));
  assert.deepEqual(doc, { a: 1 });
});

test('jsonEqual ignores key order and undefined members', () => {
  assert.ok(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(jsonEqual({ a: 1, u: undefined }, { a: 1 }));
  assert.ok(!jsonEqual([1, 2], [2, 1]));
  assert.ok(!jsonEqual({ a: null }, {}));
  assert.ok(!jsonEqual([], {}));
});

test('json patch: what one patch may do is bounded as kube-apiserver bounds it (a 1.9 KB patch of 35 copies doubling /data ended the process out of memory)', () => {
  const bomb = [{ op: 'add', path: '/data', value: { a: 'eA==' } }, ...Array.from({ length: 35 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/a${i}` }))];
  const t0 = Date.now();
  assert.throws(() => applyJSONPatch({}, bomb), (e: StoreError) => e.reason === 'RequestEntityTooLarge' && e.code === 413 &&
    /^Unable to copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/.test(e.message));
  assert.ok(Date.now() - t0 < 5000);
  const many = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/a', value: 1 }));
  assert.throws(() => applyJSONPatch({ a: 1 }, many), (e: StoreError) => e.code === 413 && e.message === 'The allowed maximum operations in a JSON patch is 10000, got 10001');
  assert.deepEqual(applyJSONPatch({ a: 1 }, many.slice(1)), { a: 1 }, '10000 are allowed');
  // copies up to the limit in all are fine
  assert.deepEqual(applyJSONPatch({ d: { x: 'y' } }, [{ op: 'copy', from: '/d', path: '/e' }, { op: 'copy', from: '/e', path: '/f' }]), { d: { x: 'y' }, e: { x: 'y' }, f: { x: 'y' } });
});
