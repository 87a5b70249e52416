// The DNS clients' reading of a throttled answer: retried in the client up to a 10 s wait, else
// given up at once with the wait asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { throttledError, throttledRetryMs } from './throttling.ts';
import { ProviderThrottledError } from './secret-ref.ts';

const NOW = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

test('throttledRetryMs: the wait asked for up to 10 s; nothing when longer or when no attempt is left', () => {
  const rows: [string | null, boolean, number | undefined, string][] = [
    [null, true, 1000, 'no Retry-After: the fallback'],
    ['3', true, 3000, 'delay-seconds'],
    ['10', true, 10_000, 'the bound itself'],
    ['11', true, undefined, 'longer than a client waits: give up at once'],
    ['Wed, 21 Oct 2015 07:28:05 GMT', true, 5000, 'HTTP-date'],
    ['Wed, 21 Oct 2015 07:29:00 GMT', true, undefined, 'HTTP-date a minute ahead'],
    ['3', false, undefined, 'attempts spent'],
  ];
  for (const [header, left, want, name] of rows) assert.equal(throttledRetryMs(header, left, 1000, NOW), want, name);
  assert.equal(throttledRetryMs(null, true, 30_000, NOW), undefined, 'a fallback (RateLimit-Reset) beyond the bound too');
});

test('throttledError: the vendor\'s message and the wait asked for, carried for the Challenge\'s backoff', () => {
  const e = throttledError('Cloudflare creating TXT x: HTTP 429', '60', undefined, NOW);
  assert.ok(e instanceof ProviderThrottledError);
  assert.equal(e.message, 'Cloudflare creating TXT x: HTTP 429 (throttled: the API asks to wait 60 s)');
  assert.equal(e.retryAfterMs, 60_000);
  assert.equal(throttledError('m', null, 1500, NOW).message, 'm (throttled: the API asks to wait 2 s)', 'a reset time, rounded up');
  const none = throttledError('Route 53 x: Throttling: Rate exceeded', null, undefined, NOW);
  assert.equal(none.message, 'Route 53 x: Throttling: Rate exceeded (throttled)');
  assert.equal(none.retryAfterMs, 0, 'no wait asked: the Challenge\'s own backoff');
});
