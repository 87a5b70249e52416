import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedCache } from './bounded-cache.ts';

test('BoundedCache keeps at most maxEntries and evicts the least recently used first', () => {
  const c = new BoundedCache<string, number>(3);
  c.set('a', 1).set('b', 2).set('c', 3);
  assert.equal(c.get('a'), 1); // a is now the most recently used: b is the oldest
  c.set('d', 4);
  assert.equal(c.size, 3);
  assert.equal(c.has('b'), false);
  assert.deepEqual([...c.keys()], ['c', 'a', 'd']);
  c.set('c', 30); // overwriting is a use too
  c.set('e', 5);
  assert.deepEqual([...c.keys()], ['d', 'c', 'e']);
  assert.equal(c.get('c'), 30);
});

test('BoundedCache: a miss, has() and an undefined value do not change the order', () => {
  const c = new BoundedCache<string, number | undefined>(2);
  c.set('a', undefined).set('b', 2);
  assert.equal(c.get('zz'), undefined);
  assert.equal(c.has('a'), true);
  assert.deepEqual([...c.keys()], ['a', 'b']);
  assert.equal(c.get('a'), undefined); // a stored undefined is still a hit
  assert.deepEqual([...c.keys()], ['b', 'a']);
  c.set('c', 3);
  assert.deepEqual([...c.keys()], ['a', 'c']);
});

test('BoundedCache refuses a bound that is not a positive integer', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new BoundedCache(bad), /maxEntries must be a positive integer/);
});
