import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { boundHeapGrowth, heapGrowthHeld } from './heap-growth.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** gc entries reach observers asynchronously */
const delivered = () => new Promise((r) => setTimeout(r, 50));

test('heap growth is held once a full collection leaves a large heap, and let go with the last release', async () => {
  const largeHeap = 32 * 1024 * 1024;
  const first = boundHeapGrowth(largeHeap);
  const second = boundHeapGrowth(largeHeap);
  gc();
  await delivered();
  assert.equal(heapGrowthHeld(), false, 'a small heap keeps V8\'s own growth');

  let live: string[] | undefined = Array.from({ length: 400_000 }, (_, i) => `a string of its own ${i}`.padEnd(80, '.'));
  gc();
  await delivered();
  assert.equal(heapGrowthHeld(), true, `held with ${live.length} strings live`);

  live = undefined;
  gc();
  await delivered();
  assert.equal(heapGrowthHeld(), false, 'let go once the heap is small again');

  live = Array.from({ length: 400_000 }, (_, i) => `a string of its own ${i}`.padEnd(80, '.'));
  gc();
  await delivered();
  assert.equal(heapGrowthHeld(), true);
  first();
  first();
  assert.equal(heapGrowthHeld(), true, 'another stack still watches');
  second();
  assert.equal(heapGrowthHeld(), false, 'the last release lets go');
  assert.ok(live.length > 0);
});
