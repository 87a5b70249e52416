import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  backoffDelay, defaultBackoff, failedAttempts, nextAttemptTime, remainingBackoffMs, resolveBackoffConfig, spreadOffset,
} from './backoff.ts';

const H = 3_600_000;
const M = 60_000;

test('delay doubles from 1h per consecutive failure and stops at 32h', () => {
  const expected: Array<[number, number]> = [[1, 1 * H], [2, 2 * H], [3, 4 * H], [4, 8 * H], [5, 16 * H], [6, 32 * H], [7, 32 * H], [20, 32 * H], [100, 32 * H], [5000, 32 * H]];
  for (const [attempts, delay] of expected) assert.equal(backoffDelay(attempts), delay, `attempts=${attempts}`);
});

test('a missing or zero counter (objects from before the upgrade) waits the initial 1h', () => {
  assert.equal(backoffDelay(undefined), H);
  assert.equal(backoffDelay(0), H);
  assert.equal(backoffDelay(-3), H);
});

test('the seed field is read first, cert-manager\'s failedIssuanceAttempts when it is absent', () => {
  assert.equal(failedAttempts({ issuanceAttempts: 3 }), 3);
  assert.equal(failedAttempts({ failedIssuanceAttempts: 4 }), 4);
  assert.equal(failedAttempts({ issuanceAttempts: 2, failedIssuanceAttempts: 5 }), 2);
  assert.equal(failedAttempts({}), undefined);
  assert.equal(backoffDelay(failedAttempts({ failedIssuanceAttempts: 4 })), 8 * H);
});

test('configured initial 5m and max 1h keep the doubling shape', () => {
  const cfg = resolveBackoffConfig({ initialMs: 5 * M, maxMs: H });
  assert.deepEqual([1, 2, 3, 4, 5, 6, undefined].map((n) => backoffDelay(n, cfg)), [5 * M, 10 * M, 20 * M, 40 * M, H, H, 5 * M]);
});

test('config: zero means default, negative or max below initial is rejected', () => {
  assert.deepEqual(resolveBackoffConfig({ initialMs: 0, maxMs: 0 }), defaultBackoff);
  assert.deepEqual(resolveBackoffConfig({ maxMs: 4 * H }), { initialMs: H, maxMs: 4 * H });
  assert.throws(() => resolveBackoffConfig({ initialMs: -1 }), /negative/);
  assert.throws(() => resolveBackoffConfig({ initialMs: 2 * H, maxMs: H }), /shorter/);
  // cert-manager's vectors with max=4h: n=6 waits 4h, n=1 still 1h; min=max=1h always 1h.
  assert.equal(backoffDelay(6, { initialMs: H, maxMs: 4 * H }), 4 * H);
  assert.equal(backoffDelay(1, { initialMs: H, maxMs: 4 * H }), H);
  assert.equal(backoffDelay(9, { initialMs: H, maxMs: H }), H);
});

test('next attempt is lastFailureTime + delay; the 3rd failure waits 4h (seed example)', () => {
  const last = new Date('2020-11-20T16:05:00Z');
  assert.equal(nextAttemptTime({ lastFailureTime: last, attempts: 3, uid: 'u' }).toISOString(), '2020-11-20T20:05:00.000Z');
  assert.equal(nextAttemptTime({ lastFailureTime: last, uid: 'u' }).toISOString(), '2020-11-20T17:05:00.000Z');
  // cert-manager vectors: n=1 failed 59 min ago waits 1 more minute; n=6 exactly 32h ago waits no more.
  assert.equal(remainingBackoffMs({ lastFailureTime: last, attempts: 1, uid: 'u', now: new Date(last.getTime() + 59 * M) }), M);
  assert.equal(remainingBackoffMs({ lastFailureTime: last, attempts: 6, uid: 'u', now: new Date(last.getTime() + 32 * H) }), 0);
  assert.equal(remainingBackoffMs({ lastFailureTime: last, attempts: 2, uid: 'u', now: new Date(last.getTime() + 121 * M) }), 0);
});

test('spread offset is deterministic per uid and below 10% of the delay', () => {
  assert.equal(spreadOffset('abc', H), spreadOffset('abc', H));
  assert.notEqual(spreadOffset('abc', H), spreadOffset('abd', H));
  assert.equal(spreadOffset('abc', 0), 0);
  for (let i = 0; i < 200; i++) {
    const o = spreadOffset(randomUUID(), 32 * H);
    assert.ok(o >= 0 && o < 3.2 * H);
  }
});

test('1,000 certificates failing within one minute retry spread over the window, never before the formula', () => {
  const t0 = Date.parse('2026-05-01T12:00:00Z');
  const attempts = 2;
  const delay = backoffDelay(attempts);
  const retries: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const lastFailureTime = new Date(t0 + Math.floor(Math.random() * M));
    const at = nextAttemptTime({ lastFailureTime, attempts, uid: randomUUID(), spread: true }).getTime();
    assert.ok(at >= lastFailureTime.getTime() + delay, 'never earlier than the formula');
    assert.ok(at < lastFailureTime.getTime() + delay * 1.1, 'at most 10% later');
    retries.push(at);
  }
  const first = Math.min(...retries);
  const last = Math.max(...retries);
  assert.ok(last - first >= 0.05 * delay, `spread ${(last - first) / M} min must cover 5% of ${delay / M} min`);
  // Without the spread all 1,000 would land inside one minute; with it no minute may hold
  // more than a quarter of them (uniform over 12 minutes gives about 83 per minute).
  const perMinute = new Map<number, number>();
  for (const at of retries) perMinute.set(Math.floor((at - first) / M), (perMinute.get(Math.floor((at - first) / M)) ?? 0) + 1);
  assert.ok(Math.max(...perMinute.values()) <= 250, `busiest minute holds ${Math.max(...perMinute.values())}`);
  assert.ok(perMinute.size >= 10, `retries spread over ${perMinute.size} distinct minutes`);
  // And without spread they stay bunched in the minute they failed in, as cert-manager does.
  const unspread = retries.map((_, i) => nextAttemptTime({ lastFailureTime: new Date(t0 + (i % 60) * 1000), attempts, uid: `u${i}` }).getTime());
  assert.ok(Math.max(...unspread) - Math.min(...unspread) < M);
});

test('expiry bound: the seed\'s delay while more than twice it is left, else half of what is left (at least a minute)', async () => {
  const { expiryBoundedDelay, nextAttemptTime } = await import('./backoff.ts');
  const H = 3_600_000;
  const t0 = new Date('2026-03-01T00:00:00Z');
  const at = (h: number) => new Date(t0.getTime() + h * H);
  const rows: [string, number, number | undefined, number][] = [
    ['no certificate in use: seed', 8 * H, undefined, 8 * H],
    ['expired already: seed', 8 * H, -1, 8 * H],
    ['far from expiry: seed', 8 * H, 100, 8 * H],
    ['exactly twice the delay left: seed', 8 * H, 16, 8 * H],
    ['less than twice: half of what is left', 8 * H, 12, 6 * H],
    ['less than the delay: half of what is left', 32 * H, 10, 5 * H],
    ['a minute at least', 1 * H, 1 / 60, 60_000],
  ];
  for (const [name, delay, leftH, want] of rows) {
    assert.equal(expiryBoundedDelay(delay, t0, leftH === undefined ? undefined : at(leftH)), want, name);
  }
  // nextAttemptTime applies it; without notAfter it is the seed's number exactly.
  assert.equal(nextAttemptTime({ lastFailureTime: t0, attempts: 4, uid: 'u' }).getTime(), at(8).getTime());
  assert.equal(nextAttemptTime({ lastFailureTime: t0, attempts: 4, uid: 'u', notAfter: at(12) }).getTime(), at(6).getTime());
});

test('a 6-day certificate renewing at half life that fails again and again keeps retrying before it expires', async () => {
  const { nextAttemptTime } = await import('./backoff.ts');
  const H = 3_600_000;
  const notBefore = Date.parse('2026-03-01T00:00:00Z');
  const notAfter = new Date(notBefore + 144 * H);
  let t = new Date(notBefore + 72 * H); // renewal at half life (renewal-time.ts), then every attempt fails
  const attemptsAt: number[] = [];
  for (let attempts = 1; attempts <= 12; attempts++) {
    const next = nextAttemptTime({ lastFailureTime: t, attempts, uid: 'u', notAfter });
    assert.ok(next < notAfter, `attempt ${attempts + 1} before expiry`);
    attemptsAt.push((next.getTime() - notBefore) / H);
    t = next;
  }
  // seed 000's 1h, 2h, 4h, 8h, 16h while twice the delay is left; then halving toward expiry
  assert.deepEqual(attemptsAt.slice(0, 5), [73, 75, 79, 87, 103]);
  assert.ok(attemptsAt[5] > 103 && attemptsAt[5] <= 123.5, `${attemptsAt[5]}`);
  console.log(`[6-day certificate, every attempt failing] attempts at hours after notBefore: ${attemptsAt.map((h) => h.toFixed(2)).join(', ')} (expiry at 144)`);
});
