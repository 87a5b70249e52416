// The request manager's replacement backoff (issue 12, finding 2): a request that does not match
// is replaced at once the first time, then after 5 s, 10 s, 20 s, ... up to 5 min between
// replacements, until a request matches or there is nothing to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateReplacements, type RequestAction } from './requestmanager.ts';
import { replacementDelay, defaultReplacementBackoff, type ReplacementHistory } from '../replacement-backoff.ts';

const now = new Date('2026-05-01T12:00:00Z');
const t = now.getTime();
const S = 1000;
const mismatch: RequestAction = { kind: 'delete', name: 'a-1', why: 'x', cause: 'mismatch' };
const earlier: RequestAction = { kind: 'delete', name: 'a-1', why: 'x', cause: 'earlier-attempt' };
const create: RequestAction = { kind: 'create', name: 'a-1', revision: 1, attempt: 0, keySecretName: 'a-next' };

test('replacementDelay: 5s doubling, capped at 5 minutes', () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => replacementDelay(n) / S), [0, 5, 10, 20, 40, 80, 160, 300, 300, 300]);
  assert.equal(defaultReplacementBackoff.maxMs, 5 * 60 * S);
});

test('gateReplacements table', () => {
  const rows: { name: string; actions: RequestAction[]; history?: ReplacementHistory; want: { actions: RequestAction[]; requeueAfterMs?: number; history?: ReplacementHistory } }[] = [
    { name: 'first replacement is immediate (a spec edit)', actions: [mismatch], want: { actions: [mismatch], history: { count: 1, lastAt: t } } },
    { name: 'second within 5s waits the rest', actions: [mismatch], history: { count: 1, lastAt: t - 2 * S }, want: { actions: [], requeueAfterMs: 3 * S, history: { count: 1, lastAt: t - 2 * S } } },
    { name: 'second after 5s goes ahead', actions: [mismatch], history: { count: 1, lastAt: t - 5 * S }, want: { actions: [mismatch], history: { count: 2, lastAt: t } } },
    { name: 'tenth waits the 5 minute cap', actions: [mismatch], history: { count: 9, lastAt: t - 60 * S }, want: { actions: [], requeueAfterMs: 240 * S, history: { count: 9, lastAt: t - 60 * S } } },
    { name: 'a create after a replacement keeps the history', actions: [create], history: { count: 3, lastAt: t }, want: { actions: [create], history: { count: 3, lastAt: t } } },
    { name: 'nothing to do (request matches) forgets it', actions: [], history: { count: 3, lastAt: t }, want: { actions: [], history: undefined } },
    { name: 'deleting a failed attempt is not gated (the trigger backs those off)', actions: [earlier], history: { count: 3, lastAt: t }, want: { actions: [earlier], history: { count: 3, lastAt: t } } },
  ];
  for (const r of rows) {
    const got = gateReplacements(r.actions, r.history, now);
    assert.deepEqual(got, r.want.requeueAfterMs === undefined ? { actions: r.want.actions, history: r.want.history } : r.want, r.name);
  }
});

test('a permanent mismatch makes 17 replacements in its first hour, then 12 an hour', () => {
  let history: ReplacementHistory | undefined;
  let clock = t;
  let replacements = 0;
  while (clock < t + 3_600_000) {
    const g = gateReplacements([mismatch], history, new Date(clock));
    history = g.history;
    if (g.actions.length) replacements++;
    clock += g.requeueAfterMs ?? 1; // the create and the next mismatch follow within a millisecond
  }
  // 0, 5, 15, 35, 75, 155, 315 s, then every 300 s from 615 s: 7 + 10 in the first hour
  assert.equal(replacements, 17);
});
