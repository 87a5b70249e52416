// The DNS clients' reading of a throttled answer: retried in the client up to a 10 s wait, else
// given up at once with the wait asked for; and the one call loop every fetch-based client makes of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWaitingOutThrottling, throttledError, throttledRetryMs, type ThrottledCall } from './throttling.ts';
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

/** One answer of the fake vendor: status, Retry-After, and the body its error message is read from. */
type Answer = [status: number, retryAfter?: string, body?: string];

const answer = ([status, retryAfter, body]: Answer) => new Response(body ?? `body ${status}`, { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });

test('fetchWaitingOutThrottling: waits out what the server asks, gives up as throttled, returns any other answer untouched', async (t) => {
  // the waits it asks of the global timer, each run at once: the real wait is the loopback vendors' tests'
  const waits: number[] = [];
  t.mock.method(globalThis, 'setTimeout', ((fn: () => void, ms: number) => {
    waits.push(ms);
    queueMicrotask(fn);
  }) as unknown as typeof setTimeout);

  const rows: {
    name: string;
    answers: Answer[];
    call?: Partial<Pick<ThrottledCall, 'attempts' | 'alsoWaitOut' | 'askedMs'>>;
    sends: number;
    waits: number[];
    /** the answer returned, or the ProviderThrottledError thrown */
    want: { status: number; text: string } | { throttled: string; retryAfterMs: number };
  }[] = [
    { name: 'a 429 retried after its Retry-After, then the success', answers: [[429, '2'], [200, undefined, 'ok']], sends: 2, waits: [2000], want: { status: 200, text: 'ok' } },
    { name: 'no Retry-After: a second', answers: [[429], [201, undefined, 'made']], sends: 2, waits: [1000], want: { status: 201, text: 'made' } },
    {
      name: 'throttled at every attempt: three requests, then the vendor\'s message and the wait asked',
      answers: [[429, '3'], [429, '3'], [429, '3', 'slow down']],
      sends: 3, waits: [3000, 3000], want: { throttled: 'V: HTTP 429: slow down (throttled: the API asks to wait 3 s)', retryAfterMs: 3000 },
    },
    {
      name: 'the vendor\'s attempt count',
      answers: [[429, '1'], [429, '1', 'again']], call: { attempts: 2 },
      sends: 2, waits: [1000], want: { throttled: 'V: HTTP 429: again (throttled: the API asks to wait 1 s)', retryAfterMs: 1000 },
    },
    { name: 'given up without a wait asked: the Challenge\'s own backoff', answers: [[429], [429], [429, undefined, 'no wait']], sends: 3, waits: [1000, 1000], want: { throttled: 'V: HTTP 429: no wait (throttled)', retryAfterMs: 0 } },
    { name: 'Retry-After beyond 10 s: no early retry, given up at once', answers: [[429, '60', 'later']], sends: 1, waits: [], want: { throttled: 'V: HTTP 429: later (throttled: the API asks to wait 60 s)', retryAfterMs: 60_000 } },
    { name: 'Retry-After of exactly 10 s is still waited', answers: [[429, '10'], [200, undefined, 'ok']], sends: 2, waits: [10_000], want: { status: 200, text: 'ok' } },
    { name: 'a failure that is not throttling: returned at once, untouched', answers: [[500, '1', 'broken']], sends: 1, waits: [], want: { status: 500, text: 'broken' } },
    { name: 'refused credentials: returned for the client to call a configuration error', answers: [[401, undefined, 'who']], sends: 1, waits: [], want: { status: 401, text: 'who' } },
    { name: 'a 404: returned (a zone lookup reads it as absent)', answers: [[404, undefined, 'none']], sends: 1, waits: [], want: { status: 404, text: 'none' } },
    { name: '503 of a vendor that does not document it: returned at once', answers: [[503, '1', 'down']], sends: 1, waits: [], want: { status: 503, text: 'down' } },
    { name: 'the vendor\'s extra status (503) waited out like a 429', answers: [[503, '2'], [200, undefined, 'ok']], call: { alsoWaitOut: [503] }, sends: 2, waits: [2000], want: { status: 200, text: 'ok' } },
    {
      name: 'the vendor\'s extra status given up on: returned as the failure it is, not as throttling',
      answers: [[503, '1'], [503, '1'], [503, '1', 'still down']], call: { alsoWaitOut: [503] },
      sends: 3, waits: [1000, 1000], want: { status: 503, text: 'still down' },
    },
    { name: 'the vendor\'s extra status beyond 10 s: returned at once', answers: [[503, '60', 'down long']], call: { alsoWaitOut: [503] }, sends: 1, waits: [], want: { status: 503, text: 'down long' } },
    {
      name: 'the vendor\'s own wait (a reset header) without Retry-After: waited, and carried when given up',
      answers: [[429], [429], [429, undefined, 'reset']], call: { askedMs: () => 4000 },
      sends: 3, waits: [4000, 4000], want: { throttled: 'V: HTTP 429: reset (throttled: the API asks to wait 4 s)', retryAfterMs: 4000 },
    },
    {
      name: 'Retry-After before the vendor\'s own wait',
      answers: [[429, '2'], [200, undefined, 'ok']], call: { askedMs: () => 4000 },
      sends: 2, waits: [2000], want: { status: 200, text: 'ok' },
    },
    {
      name: 'the vendor\'s own wait beyond 10 s: given up at once with it',
      answers: [[429, undefined, 'reset later']], call: { askedMs: () => 30_000 },
      sends: 1, waits: [], want: { throttled: 'V: HTTP 429: reset later (throttled: the API asks to wait 30 s)', retryAfterMs: 30_000 },
    },
  ];
  for (const row of rows) {
    waits.length = 0;
    let sends = 0;
    const run = fetchWaitingOutThrottling({
      send: async () => answer(row.answers[sends++]),
      errorMessage: (res, text) => `V: HTTP ${res.status}: ${text}`,
      ...row.call,
    });
    if ('throttled' in row.want) {
      const want = row.want;
      await assert.rejects(run, (e: Error) => {
        assert.ok(e instanceof ProviderThrottledError, `${row.name}: ${e.name}: ${e.message}`);
        assert.equal(e.message, want.throttled, row.name);
        assert.equal(e.retryAfterMs, want.retryAfterMs, row.name);
        return true;
      });
    } else {
      const { res, text } = await run;
      assert.deepEqual({ status: res.status, text }, row.want, row.name);
    }
    assert.equal(sends, row.sends, `${row.name}: requests`);
    assert.deepEqual(waits, row.waits, `${row.name}: waits`);
  }
});
