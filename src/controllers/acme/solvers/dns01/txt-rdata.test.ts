import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quotedTxt, txtValue } from './txt-rdata.ts';

test('TXT data: the value its character-strings stand for', () => {
  const rows: [string, string][] = [
    ['"abc"', 'abc'],
    ['abc', 'abc'],
    ['"ab" "c"', 'abc'],
    ['"a\\"b"', 'a"b'],
    ['"a\\\\b"', 'a\\b'],
    ['"v=spf1\\032-all"', 'v=spf1 -all'],
    ['""', ''],
  ];
  for (const [rdata, value] of rows) assert.equal(txtValue(rdata), value, rdata);
  assert.equal(txtValue(quotedTxt('Xk_9-a')), 'Xk_9-a');
});
