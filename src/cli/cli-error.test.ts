// Running out of file descriptors names the limit and how to raise it: with `ulimit -n 128` the
// server exited at start with only "EMFILE: too many open files, open '.../node_modules/...'".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeOpenFilesError } from './cli-error.ts';

const limits = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            128                  128                  files
Max locked memory         8388608              8388608              bytes
`;

test('an EMFILE names the soft and hard limits and what to raise', () => {
  const e = Object.assign(new Error("EMFILE: too many open files, open '/x/node_modules/y.js'"), { code: 'EMFILE' });
  const text = describeOpenFilesError(e, () => limits);
  assert.ok(text?.startsWith("EMFILE: too many open files, open '/x/node_modules/y.js'"), text);
  assert.match(text!, /at most 128 files at once \(soft limit; hard limit 128\)/);
  assert.match(text!, /ulimit -n/);
  assert.match(text!, /LimitNOFILE=/);
});

test('without /proc the hint still says what to raise; other errors are not described', () => {
  const e = Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
  const text = describeOpenFilesError(e, () => { throw new Error('no /proc'); });
  assert.match(text!, /ulimit -n/);
  assert.doesNotMatch(text!, /soft limit/);
  assert.equal(describeOpenFilesError(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }), () => limits), undefined);
  assert.equal(describeOpenFilesError('not an error', () => limits), undefined);
});
