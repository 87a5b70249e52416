import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byCodeUnits } from './ordering.ts';

test('orders as Go sort.Strings does: upper case before lower case, RFC 3339 times chronologically', () => {
  assert.deepEqual(['b', 'a', 'B', 'a-1', 'a'].sort(byCodeUnits), ['B', 'a', 'a', 'a-1', 'b']);
  assert.deepEqual(['2026-11-25T10:00:00Z', '2026-01-02T00:00:00Z', '2026-11-25T09:59:59Z'].sort(byCodeUnits),
    ['2026-01-02T00:00:00Z', '2026-11-25T09:59:59Z', '2026-11-25T10:00:00Z']);
  assert.equal(byCodeUnits('x', 'x'), 0);
});
