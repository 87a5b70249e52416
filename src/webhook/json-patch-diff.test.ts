import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyJSONPatch } from '../store/patch.ts';
import { diffToJSONPatch, escapePointerToken } from './json-patch-diff.ts';

test('pointer tokens escape ~ before / (RFC 6901)', () => {
  assert.equal(escapePointerToken('a/b'), 'a~1b');
  assert.equal(escapePointerToken('a~b'), 'a~0b');
  assert.equal(escapePointerToken('~1'), '~01');
  assert.equal(escapePointerToken('cert-manager.io/issuer-name'), 'cert-manager.io~1issuer-name');
});

const cases: Array<{ name: string; from: unknown; to: unknown; ops?: unknown[] }> = [
  { name: 'equal objects: no operation', from: { a: 1, b: { c: [1, 2] } }, to: { b: { c: [1, 2] }, a: 1 }, ops: [] },
  { name: 'a new member is added', from: { spec: {} }, to: { spec: { username: 'alice' } }, ops: [{ op: 'add', path: '/spec/username', value: 'alice' }] },
  { name: 'a changed member is replaced, nothing else touched', from: { spec: { a: 1, b: 2 } }, to: { spec: { a: 1, b: 3 } }, ops: [{ op: 'replace', path: '/spec/b', value: 3 }] },
  { name: 'a member gone is removed', from: { spec: { uid: 'x', username: 'u' } }, to: { spec: { username: 'u' } }, ops: [{ op: 'remove', path: '/spec/uid' }] },
  { name: 'undefined counts as absent', from: { a: undefined, b: 1 }, to: { b: 1, c: undefined }, ops: [] },
  {
    name: 'keys with / and ~ are escaped',
    from: { metadata: { annotations: { 'cert-manager.io/x': 'a' } } },
    to: { metadata: { annotations: { 'cert-manager.io/x': 'b', 'a~b': 'c' } } },
    ops: [{ op: 'replace', path: '/metadata/annotations/cert-manager.io~1x', value: 'b' }, { op: 'add', path: '/metadata/annotations/a~0b', value: 'c' }],
  },
  { name: 'same-length arrays are diffed per element', from: { l: [{ a: 1 }, { a: 2 }] }, to: { l: [{ a: 1 }, { a: 2, b: 3 }] }, ops: [{ op: 'add', path: '/l/1/b', value: 3 }] },
  { name: 'a list of another length is replaced', from: { groups: ['a'] }, to: { groups: ['a', 'b'] }, ops: [{ op: 'replace', path: '/groups', value: ['a', 'b'] }] },
  { name: 'a type change is a replace', from: { x: { y: 1 } }, to: { x: 'y' }, ops: [{ op: 'replace', path: '/x', value: 'y' }] },
  { name: 'root of another type is replaced at ""', from: [1], to: { a: 1 }, ops: [{ op: 'replace', path: '', value: { a: 1 } }] },
  { name: 'the empty key', from: { '': 1 }, to: { '': 2 }, ops: [{ op: 'replace', path: '/', value: 2 }] },
];

for (const c of cases) {
  test(`diff: ${c.name}`, () => {
    const ops = diffToJSONPatch(c.from, c.to);
    if (c.ops) assert.deepEqual(ops, c.ops);
    // whatever the operations, applying them must give the target
    assert.deepEqual(JSON.parse(JSON.stringify(applyJSONPatch(c.from, ops) ?? null)), JSON.parse(JSON.stringify(c.to)));
  });
}

test('diff: the patch holds copies, not references into the target', () => {
  const to = { spec: { groups: ['a'] } };
  const ops = diffToJSONPatch({}, to);
  to.spec.groups.push('b');
  assert.deepEqual(ops, [{ op: 'add', path: '/spec', value: { groups: ['a'] } }]);
});

test('diff: a larger random round trip', () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
  const gen = (depth: number): unknown => {
    const k = rnd(depth > 2 ? 3 : 6);
    if (k === 0) return rnd(5);
    if (k === 1) return ['x', 'y/z', 'w~'][rnd(3)];
    if (k === 2) return null;
    if (k === 3) return Array.from({ length: rnd(3) }, () => gen(depth + 1));
    return Object.fromEntries(Array.from({ length: rnd(4) }, () => [['a', 'b/c', 'd~e', ''][rnd(4)], gen(depth + 1)]));
  };
  for (let i = 0; i < 300; i++) {
    const from = gen(0);
    const to = gen(0);
    assert.deepEqual(applyJSONPatch(from, diffToJSONPatch(from, to)), to, JSON.stringify({ from, to }));
  }
});
