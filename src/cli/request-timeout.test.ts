import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestTimeoutFlag } from './client.ts';
import { CliError } from './cli-error.ts';

test('--request-timeout reads as kubectl reads it: a duration, a number of seconds, 0 for none', () => {
  assert.equal(requestTimeoutFlag(undefined), undefined);
  assert.equal(requestTimeoutFlag('5s'), 5_000);
  assert.equal(requestTimeoutFlag('2m'), 120_000);
  assert.equal(requestTimeoutFlag('7'), 7_000);
  assert.equal(requestTimeoutFlag('0'), 0);
  assert.throws(() => requestTimeoutFlag('soon'), (e: Error) => e instanceof CliError && e.message.startsWith('--request-timeout'));
});
