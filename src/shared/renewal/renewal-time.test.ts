import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration } from '../../api/duration.ts';
import {
  baseRenewalTime, computeRenewal, nextWindowStartAfter, parseWindows, windowContaining,
  type ParsedWindow, type RenewalInput, type RenewalReason,
} from './renewal-time.ts';
import { lastStartAtOrBefore } from './windows.ts';

const d = (iso: string) => new Date(iso);
// Most cases: a 90-day certificate, 2026-01-01 (a Thursday) to 2026-04-01.
const NB = '2026-01-01T00:00:00Z';
const NA = '2026-04-01T00:00:00Z';
// The default base time for NB..NA: 90d life, renew 30d before expiry = 2026-03-02 (a Monday).
const BASE = '2026-03-02T00:00:00Z';

/** renewBefore that makes the plain renewBefore time land exactly on `base` (as cert-manager's tests do). */
function renewBeforeFor(notAfter: string, base: string): string {
  return formatDuration(Date.parse(notAfter) - Date.parse(base));
}

interface Case {
  name: string;
  input: Omit<RenewalInput, 'notBefore' | 'notAfter'> & { notBefore?: string; notAfter?: string; base?: string };
  reason: RenewalReason;
  at: string;
  windowIndex?: number;
}

const denverSeedWindows = [
  { cron: ['0 23 * * 1-5'], duration: '6h', timeZone: 'America/Denver' },
  { cron: ['0 10 * * 6,0'], duration: '8h', timeZone: 'America/Denver' },
];

const cases: Case[] = [
  // ---- no windows: cert-manager's renewBefore arithmetic
  { name: 'default: 2/3 of a 90d life', input: {}, reason: 'RenewBefore', at: BASE }, // 04-01 - 30d = 03-02
  { name: 'renewBefore 360h', input: { renewBefore: '360h' }, reason: 'RenewBefore', at: '2026-03-17T00:00:00Z' }, // 04-01 - 15d
  { name: 'renewBeforePercentage 25', input: { renewBeforePercentage: 25 }, reason: 'RenewBefore', at: '2026-03-09T12:00:00Z' }, // 25% of 2160h = 540h = 22d12h; 04-01 - 22d12h
  { name: 'renewBefore longer than the life falls back to 2/3', input: { renewBefore: '2400h' }, reason: 'RenewBefore', at: BASE }, // 100d >= 90d
  { name: 'renewBeforePercentage 100 falls back to 2/3', input: { renewBeforePercentage: 100 }, reason: 'RenewBefore', at: BASE },
  { name: 'truncated to whole seconds', input: { notAfter: '2026-01-01T23:59:59Z', renewBeforePercentage: 33 }, reason: 'RenewBefore', at: '2026-01-01T16:04:47Z' }, // life 86399 s, 33% = 28511.67 s, 23:59:59 - 7:55:11.67 = 16:04:47.33 -> :47
  { name: 'short life (under 10 days) defaults to half, truncated', input: { notAfter: '2026-01-01T23:59:59Z' }, reason: 'RenewBefore', at: '2026-01-01T11:59:59Z' }, // life 24h-1s, /2 = 11:59:59.5 -> :59
  { name: '3y at 99% (no overflow)', input: { notAfter: '2028-12-31T00:00:00Z', renewBeforePercentage: 99 }, reason: 'RenewBefore', at: '2026-01-11T22:48:00Z' }, // life 26280h (1095d), rb 26017h12m, nb + 262h48m = 01-11 22:48
  { name: 'EarliestWindow without windows behaves as RenewBefore', input: { policy: 'EarliestWindow' }, reason: 'RenewBefore', at: BASE },
  { name: 'EarliestWindow with an empty window list', input: { policy: 'EarliestWindow', windows: [] }, reason: 'RenewBefore', at: BASE },

  // ---- RenewBefore with UTC windows (base 03-02 00:00Z)
  { name: 'base inside a window', input: { windows: [{ cron: ['0 22 * * *'], duration: '4h' }] }, reason: 'InsideWindow', at: BASE, windowIndex: 0 }, // [03-01 22:00, 03-02 02:00) holds 00:00
  { name: 'base exactly at a window start is inside', input: { windows: [{ cron: ['0 0 * * *'], duration: '1h' }] }, reason: 'InsideWindow', at: BASE, windowIndex: 0 },
  { name: 'base exactly at a window end is outside (half-open)', input: { windows: [{ cron: ['0 23 * * *'], duration: '1h' }] }, reason: 'MovedIntoWindow', at: '2026-03-01T23:59:59Z', windowIndex: 0 }, // [03-01 23:00, 03-02 00:00): last second 23:59:59
  { name: 'base outside: last second of the previous window', input: { windows: [{ cron: ['0 10 * * *'], duration: '2h' }] }, reason: 'MovedIntoWindow', at: '2026-03-01T11:59:59Z', windowIndex: 0 }, // [03-01 10:00, 12:00)
  {
    name: 'base outside: the window that closed last wins', // daily [03-01 10:00,12:00) vs Sunday 03-01 [18:00,21:00): 20:59:59
    input: { windows: [{ cron: ['0 10 * * *'], duration: '2h' }, { cron: ['0 18 * * 0'], duration: '3h' }] },
    reason: 'MovedIntoWindow', at: '2026-03-01T20:59:59Z', windowIndex: 1,
  },
  { name: 'no window since issuance: the next window start', input: { windows: [{ cron: ['0 12 15 3 *'], duration: '2h' }] }, reason: 'MovedIntoWindow', at: '2026-03-15T12:00:00Z', windowIndex: 0 }, // last one 2025-03-15 < nb
  { name: 'window only after expiry: renew at base', input: { windows: [{ cron: ['0 12 15 5 *'], duration: '2h' }] }, reason: 'ExpiryImminent', at: BASE }, // 2025-05-15 < nb, 2026-05-15 > na
  { name: 'window open at issuance does not count', input: { windows: [{ cron: ['0 23 31 12 *'], duration: '26h' }] }, reason: 'ExpiryImminent', at: BASE }, // [2025-12-31 23:00, 2026-01-02 01:00) opened before nb; next 2026-12-31 > na
  { name: 'a window that never opens (31 Feb)', input: { windows: [{ cron: ['0 0 31 2 *'], duration: '1h' }] }, reason: 'ExpiryImminent', at: BASE },

  // ---- EarliestWindow with windows (renewBefore ignored)
  { name: 'EarliestWindow: first start after issuance', input: { policy: 'EarliestWindow', windows: [{ cron: ['0 10 * * *'], duration: '2h' }] }, reason: 'EarliestWindow', at: '2026-01-01T10:00:00Z', windowIndex: 0 },
  {
    name: 'EarliestWindow: a window open at issuance does not count', // nb 10:30 inside [10:00,12:00) -> next day 10:00
    input: { policy: 'EarliestWindow', notBefore: '2026-01-01T10:30:00Z', notAfter: '2026-04-01T10:30:00Z', windows: [{ cron: ['0 10 * * *'], duration: '2h' }] },
    reason: 'EarliestWindow', at: '2026-01-02T10:00:00Z', windowIndex: 0,
  },
  {
    name: 'EarliestWindow: a window opening exactly at notBefore does not count',
    input: { policy: 'EarliestWindow', notBefore: '2026-01-01T10:00:00Z', notAfter: '2026-04-01T10:00:00Z', windows: [{ cron: ['0 10 * * *'], duration: '2h' }] },
    reason: 'EarliestWindow', at: '2026-01-02T10:00:00Z', windowIndex: 0,
  },
  {
    name: 'EarliestWindow: earliest across windows, renewBefore ignored', // Mondays (first 01-05) vs Saturdays (first 01-03)
    input: { policy: 'EarliestWindow', renewBefore: '24h', windows: [{ cron: ['0 9 * * 1'], duration: '1h' }, { cron: ['0 9 * * 6'], duration: '1h' }] },
    reason: 'EarliestWindow', at: '2026-01-03T09:00:00Z', windowIndex: 1,
  },
  { name: 'EarliestWindow: window only after expiry', input: { policy: 'EarliestWindow', windows: [{ cron: ['0 12 15 5 *'], duration: '2h' }] }, reason: 'ExpiryImminent', at: BASE },

  // ---- America/Denver, the seed's windows: weekdays 23:00 for 6h, weekends 10:00 for 8h (MST = UTC-7 in February)
  {
    name: 'Denver seed windows: Saturday evening moves back to the weekend window', // base Sat 02-07 20:00 MST; Sat [10:00,18:00) MST closes 02-08 01:00Z
    input: { base: '2026-02-08T03:00:00Z', windows: denverSeedWindows },
    reason: 'MovedIntoWindow', at: '2026-02-08T00:59:59Z', windowIndex: 1,
  },
  {
    name: 'Denver seed windows: base inside the Tuesday night window', // Tue 02-10 23:00 MST = 02-11 06:00Z to 12:00Z holds 08:00Z (01:00 MST)
    input: { base: '2026-02-11T08:00:00Z', windows: denverSeedWindows },
    reason: 'InsideWindow', at: '2026-02-11T08:00:00Z', windowIndex: 0,
  },
  {
    name: 'Denver seed windows: no window since issuance moves forward', // nb Wed 06:00 MST, Tue-night window opened before it; base Wed 12:00 MST; Wed 23:00 MST = 02-12 06:00Z
    input: { notBefore: '2026-02-11T13:00:00Z', notAfter: '2026-03-13T13:00:00Z', base: '2026-02-11T19:00:00Z', windows: denverSeedWindows },
    reason: 'MovedIntoWindow', at: '2026-02-12T06:00:00Z', windowIndex: 0,
  },
  // ---- America/Denver DST: 2026-03-08 02:00 MST -> 03:00 MDT (09:00Z); 2026-11-01 02:00 MDT -> 01:00 MST (08:00Z)
  {
    name: 'Denver March: a start in the gap opens shifted by the gap (backward search)', // 02:30 does not exist on 03-08; read at MST: 09:30Z (03:30 MDT), closes 10:30Z
    input: { base: '2026-03-08T18:00:00Z', windows: [{ cron: ['30 2 * * *'], duration: '1h', timeZone: 'America/Denver' }] },
    reason: 'MovedIntoWindow', at: '2026-03-08T10:29:59Z', windowIndex: 0,
  },
  {
    name: 'Denver March: a start in the gap (forward search)', // nb 03-07 05:00 MST, after that day's 02:30; next is 03-08 02:30 -> 09:30Z
    input: { policy: 'EarliestWindow', notBefore: '2026-03-07T12:00:00Z', notAfter: '2026-06-05T12:00:00Z', windows: [{ cron: ['30 2 * * *'], duration: '1h', timeZone: 'America/Denver' }] },
    reason: 'EarliestWindow', at: '2026-03-08T09:30:00Z', windowIndex: 0,
  },
  {
    name: 'Denver March: duration is elapsed time across the jump', // opens 01:00 MST = 08:00Z, 2h elapsed -> 10:00Z (04:00 MDT); base 09:30Z (03:30 MDT) inside
    input: { base: '2026-03-08T09:30:00Z', windows: [{ cron: ['0 1 * * *'], duration: '2h', timeZone: 'America/Denver' }] },
    reason: 'InsideWindow', at: '2026-03-08T09:30:00Z', windowIndex: 0,
  },
  {
    name: 'Denver November: a repeated start opens once, at its first occurrence', // 01:30 MDT = 07:30Z opens [07:30Z,08:30Z); 01:30 MST (08:30Z) opens nothing; base 08:45Z outside
    input: { notBefore: '2026-08-01T00:00:00Z', notAfter: '2026-12-01T00:00:00Z', base: '2026-11-01T08:45:00Z', windows: [{ cron: ['30 1 * * *'], duration: '1h', timeZone: 'America/Denver' }] },
    reason: 'MovedIntoWindow', at: '2026-11-01T08:29:59Z', windowIndex: 0,
  },
  {
    name: 'Denver November: the day after the change opens at MST (cert-manager vector 18)', // 10-31 10:00 MDT (16:00Z) opened before nb 20:00Z; next 11-01 10:00 MST = 17:00Z
    input: { notBefore: '2026-10-31T20:00:00Z', notAfter: '2026-11-03T00:00:00Z', base: '2026-10-31T21:30:00Z', windows: [{ cron: ['0 10 * * *'], duration: '2h', timeZone: 'America/Denver' }] },
    reason: 'MovedIntoWindow', at: '2026-11-01T17:00:00Z', windowIndex: 0,
  },
  {
    name: 'Denver November: EarliestWindow skips the second pass of the repeated hour', // nb 07:45Z (01:45 MDT) is after 11-01's only 01:30 start (07:30Z); next 11-02 01:30 MST = 08:30Z
    input: { policy: 'EarliestWindow', notBefore: '2026-11-01T07:45:00Z', notAfter: '2026-12-01T07:45:00Z', windows: [{ cron: ['30 1 * * *'], duration: '1h', timeZone: 'America/Denver' }] },
    reason: 'EarliestWindow', at: '2026-11-02T08:30:00Z', windowIndex: 0,
  },
  // ---- Europe/London: 2026-03-29 01:00 GMT -> 02:00 BST (01:00Z); 2026-10-25 02:00 BST -> 01:00 GMT (01:00Z)
  {
    name: 'London March: 01:30 in the gap opens at 02:30 BST', // read at GMT: 01:30Z
    input: { policy: 'EarliestWindow', notBefore: '2026-03-28T12:00:00Z', notAfter: '2026-06-26T12:00:00Z', windows: [{ cron: ['30 1 * * *'], duration: '1h', timeZone: 'Europe/London' }] },
    reason: 'EarliestWindow', at: '2026-03-29T01:30:00Z', windowIndex: 0,
  },
  {
    name: 'London October: repeated 01:30 opens at 01:30 BST only', // 01:30 BST = 00:30Z -> [00:30Z, 01:30Z); base 02:00Z (02:00 GMT) outside
    input: { notBefore: '2026-08-01T00:00:00Z', notAfter: '2026-12-01T00:00:00Z', base: '2026-10-25T02:00:00Z', windows: [{ cron: ['30 1 * * *'], duration: '1h', timeZone: 'Europe/London' }] },
    reason: 'MovedIntoWindow', at: '2026-10-25T01:29:59Z', windowIndex: 0,
  },
  {
    name: 'London summer: weekday office window, Saturday base', // Fri 07-03 09:00 BST = 08:00Z, 8h -> 16:00Z; base Sat 07-04 12:00Z
    input: { notBefore: '2026-05-01T00:00:00Z', notAfter: '2026-08-01T00:00:00Z', base: '2026-07-04T12:00:00Z', windows: [{ cron: ['0 9 * * 1-5'], duration: '8h', timeZone: 'Europe/London' }] },
    reason: 'MovedIntoWindow', at: '2026-07-03T15:59:59Z', windowIndex: 0,
  },
  // ---- Asia/Kolkata, UTC+05:30, no DST
  {
    name: 'Kolkata: EarliestWindow', // nb 06-01 05:30 IST; next 02:00 IST is 06-02 = 06-01 20:30Z
    input: { policy: 'EarliestWindow', notBefore: '2026-06-01T00:00:00Z', notAfter: '2026-07-01T00:00:00Z', windows: [{ cron: ['0 2 * * *'], duration: '3h', timeZone: 'Asia/Kolkata' }] },
    reason: 'EarliestWindow', at: '2026-06-01T20:30:00Z', windowIndex: 0,
  },
  {
    name: 'Kolkata: base inside', // [06-01 20:30Z, 23:30Z) holds 22:00Z (03:30 IST)
    input: { notBefore: '2026-05-01T00:00:00Z', notAfter: '2026-07-01T00:00:00Z', base: '2026-06-01T22:00:00Z', windows: [{ cron: ['0 2 * * *'], duration: '3h', timeZone: 'Asia/Kolkata' }] },
    reason: 'InsideWindow', at: '2026-06-01T22:00:00Z', windowIndex: 0,
  },
  {
    name: 'Kolkata: base after the window', // closes 06-01 23:30Z; base 06-02 00:00Z (05:30 IST)
    input: { notBefore: '2026-05-01T00:00:00Z', notAfter: '2026-07-01T00:00:00Z', base: '2026-06-02T00:00:00Z', windows: [{ cron: ['0 2 * * *'], duration: '3h', timeZone: 'Asia/Kolkata' }] },
    reason: 'MovedIntoWindow', at: '2026-06-01T23:29:59Z', windowIndex: 0,
  },
  // ---- Australia/Lord_Howe: +10:30 standard, +11 summer, 30-minute shifts:
  //      2026-04-05 02:00 +11 -> 01:30 +10:30 (04-04 15:00Z); 2026-10-04 02:00 +10:30 -> 02:30 +11 (10-03 15:30Z)
  {
    name: 'Lord Howe October: 02:15 in the 30-minute gap opens at 02:45 +11', // read at +10:30: 10-04 02:15 - 10:30 = 10-03 15:45Z
    input: { policy: 'EarliestWindow', notBefore: '2026-10-03T10:00:00Z', notAfter: '2027-01-01T10:00:00Z', windows: [{ cron: ['15 2 * * *'], duration: '1h', timeZone: 'Australia/Lord_Howe' }] },
    reason: 'EarliestWindow', at: '2026-10-03T15:45:00Z', windowIndex: 0,
  },
  {
    name: 'Lord Howe April: repeated 01:45 opens once, at +11', // 01:45 +11 = 14:45Z, 30m -> 15:15Z; 01:45 +10:30 (15:15Z) opens nothing; base 15:20Z outside
    input: { notBefore: '2026-02-01T00:00:00Z', notAfter: '2026-05-01T00:00:00Z', base: '2026-04-04T15:20:00Z', windows: [{ cron: ['45 1 * * *'], duration: '30m', timeZone: 'Australia/Lord_Howe' }] },
    reason: 'MovedIntoWindow', at: '2026-04-04T15:14:59Z', windowIndex: 0,
  },
  {
    name: 'Lord Howe winter: +10:30', // 07-01 03:00 +10:30 = 06-30 16:30Z, 2h -> 18:30Z; base 07-01 00:00Z (10:30 local)
    input: { notBefore: '2026-05-01T00:00:00Z', notAfter: '2026-08-01T00:00:00Z', base: '2026-07-01T00:00:00Z', windows: [{ cron: ['0 3 * * *'], duration: '2h', timeZone: 'Australia/Lord_Howe' }] },
    reason: 'MovedIntoWindow', at: '2026-06-30T18:29:59Z', windowIndex: 0,
  },
  // ---- spellings and lists
  {
    name: 'cert-manager spelling: cron string, windowDuration, timezone', // Phoenix UTC-7: 03-02 10:30 local = 17:30Z inside [17:00Z, 19:00Z)
    input: { base: '2026-03-02T17:30:00Z', windows: [{ cron: '0 10 * * *', windowDuration: '2h', timezone: 'America/Phoenix' }] },
    reason: 'InsideWindow', at: '2026-03-02T17:30:00Z', windowIndex: 0,
  },
  {
    name: 'a cron list in one window: the earliest entry wins', // Sun 01-04 04:00Z vs Sat 01-03 03:00Z
    input: { policy: 'EarliestWindow', windows: [{ cron: ['0 4 * * 0', '0 3 * * 6'], duration: '1h' }] },
    reason: 'EarliestWindow', at: '2026-01-03T03:00:00Z', windowIndex: 0,
  },
];

for (const c of cases) {
  test(`renewal: ${c.name}`, () => {
    const { base, notBefore = NB, notAfter = NA, ...rest } = c.input;
    const input: RenewalInput = { ...rest, notBefore: d(notBefore), notAfter: d(notAfter) };
    if (base) input.renewBefore = renewBeforeFor(notAfter, base);
    const decision = computeRenewal(input);
    assert.equal(decision.kind, 'scheduled', decision.message);
    if (decision.kind !== 'scheduled') return;
    assert.equal(decision.reason, c.reason, decision.message);
    assert.equal(decision.renewalTime.toISOString(), d(c.at).toISOString(), decision.message);
    assert.equal(decision.window?.index, c.windowIndex);
    if (decision.window) {
      // The renewal time is an instant inside the window it names.
      assert.ok(decision.renewalTime >= decision.window.start && decision.renewalTime < decision.window.end);
    }
    if (base) assert.equal(decision.baseTime.toISOString(), d(base).toISOString());
    assert.ok(decision.message.length > 0);
  });
}

test('both input spellings give the same decision', () => {
  const common = { notBefore: d(NB), notAfter: d(NA), renewBefore: renewBeforeFor(NA, '2026-02-08T03:00:00Z') };
  const seed = computeRenewal({ ...common, windows: denverSeedWindows });
  const certManager = computeRenewal({
    ...common,
    windows: [
      { cron: '0 23 * * 1-5', windowDuration: '6h', timezone: 'America/Denver' },
      { cron: '0 10 * * 6,0', windowDuration: '8h', timezone: 'America/Denver' },
    ],
  });
  assert.deepEqual(certManager, seed);
  assert.equal(seed.kind === 'scheduled' && seed.renewalTime.toISOString(), '2026-02-08T00:59:59.000Z');
  // robfig/cron's zone prefix, which cert-manager's parser reads, names the same zone
  const cronTz = computeRenewal({
    ...common,
    windows: [
      { cron: 'CRON_TZ=America/Denver 0 23 * * 1-5', windowDuration: '6h' },
      { cron: 'TZ=America/Denver 0 10 * * 6,0', windowDuration: '8h' },
    ],
  });
  assert.deepEqual(cronTz, seed);
  // The seed's spelling wins when both are present.
  const both = parseWindows([{ cron: '0 1 * * *', duration: '1h', windowDuration: '5h', timeZone: 'Asia/Kolkata', timezone: 'UTC' }]);
  assert.ok('windows' in both);
  assert.deepEqual(both.windows.map((w) => [w.durationMs, w.timeZone]), [[3_600_000, 'Asia/Kolkata']]);
  // A missing or empty zone is UTC.
  const utc = parseWindows([{ cron: ['0 1 * * *'], duration: '1h', timeZone: '' }]);
  assert.ok('windows' in utc && utc.windows[0].timeZone === 'UTC');
});

test('Disabled: no renewal is scheduled, whatever the windows say', () => {
  const base = { notBefore: d(NB), notAfter: d(NA), policy: 'Disabled' as const };
  assert.equal(computeRenewal(base).kind, 'disabled');
  const withWindows = computeRenewal({ ...base, windows: [{ cron: ['0 10 * * *'], duration: '2h' }] });
  assert.equal(withWindows.kind, 'disabled');
  assert.match(withWindows.message, /disabled/);
});

test('invalid configuration is reported with the path of the bad part', () => {
  const invalid = (over: Partial<RenewalInput>) => {
    const decision = computeRenewal({ notBefore: d(NB), notAfter: d(NA), ...over });
    assert.equal(decision.kind, 'invalid', JSON.stringify(decision));
    return decision.message;
  };
  const good = { cron: ['0 10 * * *'], duration: '2h' };
  assert.equal(invalid({ windows: [good, { ...good, timeZone: 'Mars/Base' }] }), 'spec.renewal.windows[1].timeZone: unknown time zone "Mars/Base"');
  assert.equal(invalid({ windows: [{ cron: '0 10 * * *', windowDuration: '2h', timezone: 'Mars/Base' }] }), 'spec.renewal.windows[0].timezone: unknown time zone "Mars/Base"');
  assert.match(invalid({ windows: [{ ...good, cron: ['0 1 * * *', '61 * * * *'] }] }), /^spec\.renewal\.windows\[0\]\.cron\[1\]: invalid cron expression "61 \* \* \* \*"/);
  assert.match(invalid({ windows: [{ ...good, cron: 'every day' }] }), /^spec\.renewal\.windows\[0\]\.cron: invalid cron expression "every day": expected 5 fields/);
  assert.match(invalid({ windows: [{ ...good, cron: ['0 0 10 * * *'] }] }), /cron\[0\]: .*expected 5 fields .*got 6/);
  assert.match(invalid({ windows: [{ ...good, cron: ['@reboot'] }] }), /cron\[0\]: unknown descriptor "@reboot"/);
  assert.match(invalid({ windows: [{ ...good, cron: [] }] }), /^spec\.renewal\.windows\[0\]\.cron: must list at least one/);
  assert.match(invalid({ windows: [{ duration: '1h' } as never] }), /^spec\.renewal\.windows\[0\]\.cron: required/);
  assert.match(invalid({ windows: [{ ...good, duration: '6 hours' }] }), /^spec\.renewal\.windows\[0\]\.duration: invalid duration "6 hours"/);
  assert.match(invalid({ windows: [{ cron: '0 1 * * *', windowDuration: '-1h' }] }), /^spec\.renewal\.windows\[0\]\.windowDuration: must be a positive duration/);
  assert.match(invalid({ windows: [{ cron: ['0 1 * * *'], duration: '0s' }] }), /duration: must be a positive duration/);
  assert.match(invalid({ windows: [{ cron: ['0 1 * * *'] }] }), /^spec\.renewal\.windows\[0\]\.duration: required/);
  assert.match(invalid({ windows: 'nightly' as never }), /^spec\.renewal\.windows: must be a list/);
  assert.match(invalid({ renewBefore: 'soon' }), /^spec\.renewBefore: invalid duration "soon"/);
  assert.match(invalid({ renewBeforePercentage: 150 }), /^spec\.renewBeforePercentage: /);
  assert.match(invalid({ policy: 'Sometimes' as never }), /^spec\.renewal\.policy: unsupported renewal policy "Sometimes"/);
  assert.match(invalid({ notAfter: d(NB) }), /notAfter .* is not after notBefore/);
});

test('baseRenewalTime follows cert-manager\'s vectors', () => {
  const N = d('2026-05-05T05:05:05Z');
  const plus = (h: number, extraMs = 0) => new Date(N.getTime() + h * 3_600_000 + extraMs);
  // cert-manager's two thirds, from 10 days of life up; below, certsmith renews at half (issue 16,
  // Let's Encrypt's guidance for 6-day certificates), where cert-manager's vectors give 2/3.
  assert.deepEqual(baseRenewalTime(N, plus(3)), plus(1.5));
  assert.deepEqual(baseRenewalTime(N, plus(144)), plus(72), '6-day certificate: 3 days');
  assert.deepEqual(baseRenewalTime(N, plus(239)), plus(119.5));
  assert.deepEqual(baseRenewalTime(N, plus(240)), plus(160), 'exactly 10 days: two thirds');
  assert.deepEqual(baseRenewalTime(N, plus(4380)), plus(2920));
  assert.deepEqual(baseRenewalTime(N, plus(24), '20h'), plus(4));
  assert.deepEqual(baseRenewalTime(N, plus(24), '25h'), plus(12));
  assert.deepEqual(baseRenewalTime(N, plus(730), undefined, 30), plus(511));
  assert.deepEqual(baseRenewalTime(N, plus(24, 180_000), '24h'), plus(0, 180_000));
  assert.deepEqual(baseRenewalTime(N, plus(24, -1000)), plus(12, -1000));
  // renewBefore wins over the percentage; renewBefore <= 0 falls through to the percentage.
  assert.deepEqual(baseRenewalTime(N, plus(3), '1h', 25), plus(2));
  assert.deepEqual(baseRenewalTime(N, plus(3), '0s', 25), plus(2, 15 * 60_000));
  assert.deepEqual(baseRenewalTime(N, plus(87600), undefined, 99), plus(87600 - 86724));
});

// ---- the window search itself, against the sequences worked out by hand

function schedule(cron: string, timeZone: string, duration = '1h'): ParsedWindow[] {
  const parsed = parseWindows([{ cron: [cron], duration, timeZone }]);
  assert.ok('windows' in parsed);
  return parsed.windows;
}

function startsBetween(w: ParsedWindow[], from: string, count: number): string[] {
  const out: string[] = [];
  let t = d(from);
  for (let i = 0; i < count; i++) {
    const next = nextWindowStartAfter(w, t);
    assert.ok(next);
    out.push(next.start.toISOString().replace('.000Z', 'Z'));
    t = next.start;
  }
  return out;
}

function startsBackward(w: ParsedWindow[], from: string, count: number): string[] {
  const out: string[] = [];
  let t = d(from).getTime();
  for (let i = 0; i < count; i++) {
    const start = lastStartAtOrBefore(w[0], t, t - 10 * 86_400_000);
    assert.ok(start !== undefined);
    out.push(new Date(start).toISOString().replace('.000Z', 'Z'));
    t = start - 1;
  }
  return out.reverse();
}

test('daily starts across DST changes: once per local day, the same forwards and backwards', () => {
  const sequences: Array<[string, string, string, string, string[]]> = [
    // Denver 02:30: MST -7 until 03-08, where 02:30 is skipped and opens at 03:30 MDT (09:30Z), then MDT -6.
    ['30 2 * * *', 'America/Denver', '2026-03-06T00:00:00Z', '2026-03-10T23:00:00Z',
      ['2026-03-06T09:30:00Z', '2026-03-07T09:30:00Z', '2026-03-08T09:30:00Z', '2026-03-09T08:30:00Z', '2026-03-10T08:30:00Z']],
    // Denver 01:30: MDT -6 through 11-01 (first pass 07:30Z only), then MST -7.
    ['30 1 * * *', 'America/Denver', '2026-10-30T00:00:00Z', '2026-11-03T23:00:00Z',
      ['2026-10-30T07:30:00Z', '2026-10-31T07:30:00Z', '2026-11-01T07:30:00Z', '2026-11-02T08:30:00Z', '2026-11-03T08:30:00Z']],
    // Lord Howe 02:15: +10:30 until 10-04, where 02:15 is skipped (read at +10:30: 10-03 15:45Z), then +11.
    ['15 2 * * *', 'Australia/Lord_Howe', '2026-10-01T00:00:00Z', '2026-10-06T00:00:00Z',
      ['2026-10-01T15:45:00Z', '2026-10-02T15:45:00Z', '2026-10-03T15:45:00Z', '2026-10-04T15:15:00Z', '2026-10-05T15:15:00Z']],
    // Lord Howe 01:45: +11 through 04-05 (first pass 04-04 14:45Z), then +10:30.
    ['45 1 * * *', 'Australia/Lord_Howe', '2026-04-02T00:00:00Z', '2026-04-07T00:00:00Z',
      ['2026-04-02T14:45:00Z', '2026-04-03T14:45:00Z', '2026-04-04T14:45:00Z', '2026-04-05T15:15:00Z', '2026-04-06T15:15:00Z']],
    // London 01:30: GMT until 03-29, where 01:30 is skipped (read at GMT: 01:30Z = 02:30 BST), then BST.
    ['30 1 * * *', 'Europe/London', '2026-03-27T00:00:00Z', '2026-03-31T23:00:00Z',
      ['2026-03-27T01:30:00Z', '2026-03-28T01:30:00Z', '2026-03-29T01:30:00Z', '2026-03-30T00:30:00Z', '2026-03-31T00:30:00Z']],
  ];
  for (const [cron, zone, from, to, expected] of sequences) {
    const w = schedule(cron, zone);
    assert.deepEqual(startsBetween(w, from, expected.length), expected, `${cron} ${zone} forwards`);
    assert.deepEqual(startsBackward(w, to, expected.length), expected, `${cron} ${zone} backwards`);
  }
});

test('windowContaining honours half-open windows and absolute durations', () => {
  const w = schedule('0 1 * * *', 'America/Denver', '2h');
  // 03-08: opens 01:00 MST = 08:00Z, closes 2 elapsed hours later at 10:00Z (04:00 MDT).
  assert.equal(windowContaining(w, d('2026-03-08T07:59:59Z')), undefined);
  assert.equal(windowContaining(w, d('2026-03-08T08:00:00Z'))?.start.toISOString(), '2026-03-08T08:00:00.000Z');
  assert.equal(windowContaining(w, d('2026-03-08T09:59:59Z'))?.end.toISOString(), '2026-03-08T10:00:00.000Z');
  assert.equal(windowContaining(w, d('2026-03-08T10:00:00Z')), undefined);
});

test('rare and impossible schedules end the search instead of looping', () => {
  const started = Date.now();
  assert.equal(nextWindowStartAfter(schedule('0 0 31 2 *', 'UTC'), d('2026-01-01T00:00:00Z')), undefined);
  assert.equal(nextWindowStartAfter(schedule('0 0 30 2 *', 'Europe/London'), d('2026-01-01T00:00:00Z')), undefined);
  assert.equal(nextWindowStartAfter(schedule('0 0 29 2 *', 'UTC'), d('2026-03-01T00:00:00Z'))?.start.toISOString(), '2028-02-29T00:00:00.000Z');
  // Bounded by `until`: the 2028 leap day is past a 2027 limit.
  assert.equal(nextWindowStartAfter(schedule('0 0 29 2 *', 'UTC'), d('2026-03-01T00:00:00Z'), d('2027-12-31T00:00:00Z')), undefined);
  assert.ok(Date.now() - started < 5000, 'bounded searches are fast');
});

test('cron details: descriptors and day-of-month OR day-of-week', () => {
  assert.equal(nextWindowStartAfter(schedule('@daily', 'Asia/Kolkata'), d('2026-06-01T00:00:00Z'))?.start.toISOString(), '2026-06-01T18:30:00.000Z');
  // Both day fields restricted: the 1st of the month OR a Monday (2026-04-27 is a Monday, 05-01 a Friday).
  const w = schedule('0 0 1 * 1', 'UTC');
  assert.equal(nextWindowStartAfter(w, d('2026-04-02T00:00:00Z'))?.start.toISOString(), '2026-04-06T00:00:00.000Z');
  assert.equal(nextWindowStartAfter(w, d('2026-04-27T00:00:00Z'))?.start.toISOString(), '2026-05-01T00:00:00.000Z');
});
