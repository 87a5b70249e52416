import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deployHookMessage, deployHookRevision } from './deploy-hook-events.ts';

test('deployHookRevision reads back the revision deployHookMessage wrote; 0 for anything else', () => {
  const rows: [string, string | undefined, number][] = [
    ['a success', deployHookMessage(3, 'exited with status 0', ': reloaded'), 3],
    ['a failure with its retry', deployHookMessage(12, 'exited with status 1', ' (attempt 2, retrying in 2m): no'), 12],
    ['no revision known', deployHookMessage(undefined, 'timed out'), 0],
    ['another Event', 'Issued certificate for revision 4', 0],
    ['no message', undefined, 0],
  ];
  for (const [name, message, want] of rows) assert.equal(deployHookRevision(message), want, name);
  assert.equal(deployHookMessage(3, 'exited with status 0', ': reloaded'), 'Deploy hook for revision 3 exited with status 0: reloaded');
});

test('a certificate certsmith adopted (no revision yet) is named as such, not as revision "?"', () => {
  assert.equal(deployHookMessage(undefined, 'exited with status 0'), 'Deploy hook for the adopted certificate (no revision yet) exited with status 0');
});
