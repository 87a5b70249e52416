// ARI (RFC 9773) in the renewal decision and the fetch schedule: fake times only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeRenewal, type AriInput, type RenewalInput } from '../../../shared/renewal/renewal-time.ts';
import { ariRenewalPoint } from '../../../acme/ari.ts';
import { ariStatusAfterAnswer, ariStatusAfterError, decideAriCheck } from './ari-check.ts';

const d = (iso: string) => new Date(iso);
const NB = d('2026-01-01T00:00:00Z');
const NA = d('2026-04-01T00:00:00Z'); // 90 days; ordinary renewal 2026-03-02
const SEED = 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE';
const ari = (start: string, end: string, fetchedAt = '2026-01-01T00:05:00Z'): AriInput => ({ start: d(start), end: d(end), fetchedAt: d(fetchedAt), seed: SEED });
const base = (extra: Partial<RenewalInput> = {}): RenewalInput => ({ notBefore: NB, notAfter: NA, ...extra });
const point = (a: AriInput) => ariRenewalPoint(a, a.seed).toISOString();

// A window the seed's point lands in: checked, not assumed.
const W = ari('2026-02-20T00:00:00Z', '2026-02-22T00:00:00Z');

test('ARI: renewal at the seeded point inside the suggested window, instead of renewBefore', () => {
  const r = computeRenewal(base({ ari: W, renewBefore: '720h' }));
  assert.equal(r.kind, 'scheduled');
  if (r.kind !== 'scheduled') return;
  assert.equal(r.reason, 'ARI');
  assert.equal(r.renewalTime.toISOString(), point(W));
  assert.ok(r.renewalTime >= W.start && r.renewalTime < W.end);
  assert.equal(r.baseTime.toISOString(), '2026-03-02T00:00:00.000Z');
  // The same answer after a restart gives the same time.
  assert.equal((computeRenewal(base({ ari: W })) as { renewalTime: Date }).renewalTime.toISOString(), point(W));
});

test('ARI combined with seed 003 windows and policies (table)', () => {
  const p = d(point(W));
  const hourOfPoint = p.getUTCHours();
  // maintenance windows built around the point so each row tests what its name says
  const containing = { cron: [`0 ${hourOfPoint} * * *`], duration: '1h' };
  assert.equal(p.toISOString(), '2026-02-20T00:21:15.000Z', 'the point of this seed in W (sha256-seeded, fixed forever)');
  const LATE = ari('2026-02-19T00:00:00Z', '2026-02-23T00:00:00Z', '2026-02-20T10:00:00Z');
  assert.equal(point(LATE), '2026-02-19T00:42:31.000Z');
  type Row = { name: string; input: RenewalInput; kind: string; reason?: string; at?: string };
  const rows: Row[] = [
    { name: 'no windows: the point', input: base({ ari: W }), kind: 'scheduled', reason: 'ARI', at: p.toISOString() },
    { name: 'point inside a maintenance window: the point', input: base({ ari: W, windows: [containing] }), kind: 'scheduled', reason: 'ARI', at: p.toISOString() },
    {
      // the seeded point is 02-20 00:21:15 (asserted above the table); the window [00:00, 00:10) is in the CA window before it
      name: 'point outside: the last second of a maintenance window between the CA window start and the point',
      input: base({ ari: W, windows: [{ cron: ['0 0 20 2 *'], duration: '10m' }] }),
      kind: 'scheduled', reason: 'ARIMovedIntoWindow', at: '2026-02-20T00:09:59.000Z',
    },
    {
      name: 'point outside, nothing earlier in the CA window: the next maintenance window (the operator says when not)',
      input: base({ ari: W, windows: [{ cron: ['0 3 10 3 *'], duration: '1h' }] }), kind: 'scheduled', reason: 'ARIMovedIntoWindow', at: '2026-03-10T03:00:00.000Z',
    },
    {
      name: 'no maintenance window before expiry: the point stands',
      input: base({ ari: W, windows: [{ cron: ['0 3 10 6 *'], duration: '1h' }] }), kind: 'scheduled', reason: 'ARI', at: p.toISOString(),
    },
    {
      name: 'EarliestWindow: the CA window replaces "first window after issuance"',
      input: base({ ari: W, policy: 'EarliestWindow', windows: [containing] }), kind: 'scheduled', reason: 'ARI', at: p.toISOString(),
    },
    // a CA window open when fetched whose seeded point (2026-02-19T00:42:31Z, asserted below) was
    // already past then: "renew now" (RFC 9773 §4.2) means the first maintenance window from the
    // fetch on, never one that had closed before it (which would renew at once, outside every window)
    {
      name: 'point past at the fetch, outside windows: the next maintenance window after the fetch',
      input: base({ ari: LATE, windows: [{ cron: ['0 2 * * *'], duration: '1h' }] }), kind: 'scheduled', reason: 'ARIMovedIntoWindow', at: '2026-02-21T02:00:00.000Z',
    },
    {
      name: 'point past at the fetch, inside a window that has closed since: the next maintenance window after the fetch',
      input: base({ ari: LATE, windows: [{ cron: ['40 0 * * *'], duration: '10m' }] }), kind: 'scheduled', reason: 'ARIMovedIntoWindow', at: '2026-02-21T00:40:00.000Z',
    },
    {
      name: 'point after the fetch, the only window before it closed before the fetch: the next window after the point',
      input: base({ ari: ari('2026-02-19T00:00:00Z', '2026-02-23T00:00:00Z', '2026-02-19T00:30:00Z'), windows: [{ cron: ['10 0 * * *'], duration: '10m' }] }),
      kind: 'scheduled', reason: 'ARIMovedIntoWindow', at: '2026-02-20T00:10:00.000Z',
    },
    {
      name: 'point past at the fetch, no windows: renew at once',
      input: base({ ari: LATE }), kind: 'scheduled', reason: 'ARI', at: '2026-02-19T00:42:31.000Z',
    },
    {
      name: 'window ended before it was fetched: renew now, even outside maintenance windows',
      input: base({ ari: ari('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-10T00:00:00Z'), windows: [{ cron: ['0 3 10 3 *'], duration: '1h' }] }),
      kind: 'scheduled', reason: 'ARIRenewNow', at: '2026-01-01T00:00:00.000Z',
    },
    {
      name: 'Disabled wins over ARI, even a window in the past (the message says the CA asks)',
      input: base({ ari: ari('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-10T00:00:00Z'), policy: 'Disabled' }), kind: 'disabled',
    },
    { name: 'Disabled wins over an ordinary ARI window', input: base({ ari: W, policy: 'Disabled' }), kind: 'disabled' },
    {
      name: 'a CA window starting at or after notAfter is ignored: ordinary time',
      input: base({ ari: ari('2026-04-01T00:00:00Z', '2026-04-02T00:00:00Z') }), kind: 'scheduled', reason: 'RenewBefore', at: '2026-03-02T00:00:00.000Z',
    },
    { name: 'no ARI answer: ordinary time', input: base(), kind: 'scheduled', reason: 'RenewBefore', at: '2026-03-02T00:00:00.000Z' },
    { name: 'windows invalid stay invalid with ARI', input: base({ ari: W, windows: [{ cron: ['nope'], duration: '1h' }] }), kind: 'invalid' },
  ];
  for (const row of rows) {
    const r = computeRenewal(row.input);
    assert.equal(r.kind, row.kind, `${row.name}: ${JSON.stringify(r)}`);
    if (r.kind === 'scheduled') {
      if (row.reason) assert.equal(r.reason, row.reason, `${row.name}: ${r.message}`);
      if (row.at) assert.equal(r.renewalTime.toISOString(), row.at, `${row.name}: ${r.message}`);
    }
    if (row.name.startsWith('Disabled wins over ARI, even')) assert.match(r.message, /asks for this certificate to be replaced now/);
  }
});

test('fetch schedule: after issuance, again at nextCheck, not again after a restart before it', () => {
  const now = d('2026-01-01T00:05:00Z');
  assert.deepEqual(decideAriCheck(undefined, undefined, now), { kind: 'none' }, 'no AKI: no ARI');
  assert.deepEqual(decideAriCheck(undefined, SEED, now), { kind: 'fetch', certID: SEED }, 'after issuance');
  const stored = ariStatusAfterAnswer(SEED, { suggestedWindow: { start: '2026-02-20T00:00:00Z', end: '2026-02-22T00:00:00Z' }, retryAfterMs: 3 * 3_600_000 }, now);
  assert.equal(stored.nextCheck, '2026-01-01T03:05:00Z');
  assert.equal(stored.lastChecked, '2026-01-01T00:05:00Z');
  // A restart one hour later reads status.acme.ari: waits the remaining two hours.
  assert.deepEqual(decideAriCheck(stored, SEED, d('2026-01-01T01:05:00Z')), { kind: 'wait', untilMs: 2 * 3_600_000 });
  assert.deepEqual(decideAriCheck(stored, SEED, d('2026-01-01T03:05:00Z')), { kind: 'fetch', certID: SEED });
  // After a renewal the stored answer is about another certificate: fetch for the new one.
  assert.deepEqual(decideAriCheck(stored, 'other.AQ', d('2026-01-01T01:05:00Z')), { kind: 'fetch', certID: 'other.AQ' });
  // Retry-After bounds: 10 s becomes 1 minute, 3 days becomes 1 day.
  assert.equal(ariStatusAfterAnswer(SEED, { suggestedWindow: stored.suggestedWindow!, retryAfterMs: 10_000 }, now).nextCheck, '2026-01-01T00:06:00Z');
  assert.equal(ariStatusAfterAnswer(SEED, { suggestedWindow: stored.suggestedWindow!, retryAfterMs: 3 * 86_400_000 }, now).nextCheck, '2026-01-02T00:05:00Z');
});

test('a failed fetch keeps the last window of the same certificate, says why, and tries again within bounds', () => {
  const now = d('2026-01-02T00:00:00Z');
  const stored = ariStatusAfterAnswer(SEED, { suggestedWindow: { start: '2026-02-20T00:00:00Z', end: '2026-02-22T00:00:00Z' } }, d('2026-01-01T00:00:00Z'));
  const failed = ariStatusAfterError(stored, SEED, 'GET /renewal-info: connect ECONNREFUSED', undefined, now);
  assert.deepEqual(failed.suggestedWindow, stored.suggestedWindow);
  assert.equal(failed.lastChecked, stored.lastChecked);
  assert.equal(failed.nextCheck, '2026-01-02T01:00:00Z');
  assert.match(failed.lastError!, /ECONNREFUSED/);
  // ARI down from the start: no window, so the ordinary renewal time applies.
  const none = ariStatusAfterError(undefined, SEED, 'HTTP 503', 120_000, now);
  assert.equal(none.suggestedWindow, undefined);
  assert.equal(none.nextCheck, '2026-01-02T00:02:00Z');
  const other = ariStatusAfterError(stored, 'other.AQ', 'HTTP 500', undefined, now);
  assert.equal(other.suggestedWindow, undefined, 'a window about the previous certificate is dropped');
});
