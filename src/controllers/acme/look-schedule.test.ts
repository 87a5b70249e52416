// The pace of looks at an object waiting on the ACME server, as a table: one row per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANN_NEXT_LOOK, lookDueInMs, nextLookDelayMs, RETRY_AFTER_CAP_MS, type LookPace } from './look-schedule.ts';

const pace: LookPace = { firstMs: 50, maxMs: 2_000 };

test('nextLookDelayMs: doubles with the time waited, bounded, Retry-After a floor', () => {
  const rows: { name: string; waited: number; retryAfterMs?: number; want: number }[] = [
    { name: 'just asked: the first wait', waited: 0, want: 50 },
    { name: 'nothing recorded (NaN): the first wait', waited: Number.NaN, want: 50 },
    { name: 'a clock behind the record: the first wait', waited: -500, want: 50 },
    { name: 'waited 50 ms: wait 50 more (look at 100)', waited: 50, want: 50 },
    { name: 'waited 150 ms: wait as long again', waited: 150, want: 150 },
    { name: 'waited 1.5 s: 1.5 s', waited: 1_500, want: 1_500 },
    { name: 'waited a minute: the bound', waited: 60_000, want: 2_000 },
    { name: 'Retry-After longer than the pace wins', waited: 50, retryAfterMs: 3_000, want: 3_000 },
    { name: 'Retry-After shorter than the pace: the pace', waited: 1_000, retryAfterMs: 10, want: 1_000 },
    { name: 'Retry-After 0: the pace', waited: 0, retryAfterMs: 0, want: 50 },
    { name: 'an absurd Retry-After is capped', waited: 0, retryAfterMs: 7 * 24 * 3_600_000, want: RETRY_AFTER_CAP_MS },
  ];
  for (const r of rows) assert.equal(nextLookDelayMs(pace, r.waited, r.retryAfterMs), r.want, r.name);
});

test('lookDueInMs: the next-look mark, or now', () => {
  const now = new Date('2026-06-01T00:00:00.000Z');
  const rows: { name: string; annotations?: Record<string, string>; want: number }[] = [
    { name: 'no annotations', want: 0 },
    { name: 'no mark', annotations: { other: 'x' }, want: 0 },
    { name: 'an unreadable mark counts as none', annotations: { [ANN_NEXT_LOOK]: 'soon' }, want: 0 },
    { name: 'a past mark: due now', annotations: { [ANN_NEXT_LOOK]: '2026-05-31T23:59:59.000Z' }, want: 0 },
    { name: 'a future mark, with milliseconds', annotations: { [ANN_NEXT_LOOK]: '2026-06-01T00:00:00.250Z' }, want: 250 },
  ];
  for (const r of rows) assert.equal(lookDueInMs(r.annotations, now), r.want, r.name);
});
