import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StringInterner } from './string-interner.ts';

test('StringInterner answers an equal string and holds at most two generations', () => {
  const strings = new StringInterner(4);
  for (let i = 0; i < 100; i++) assert.equal(strings.intern(`s${i}`), `s${i}`);
  assert.ok(strings.size <= 8, `holds ${strings.size}`);
  assert.equal(strings.intern(['a', 'b'].join('')), 'ab');
});

test('StringInterner refuses a generation size that is not a positive integer', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new StringInterner(bad), /generationSize must be a positive integer/);
});
