// The Challenge controller's timing as decisions over the object: when a self-check or a poll is
// due (decideChallenge), and what a failed self-check or a pending authorization leads to. The
// state lives in the Challenge's status and annotations, so a restart resumes the same pace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Challenge } from '../../../api/types.ts';
import { afterCleanUp, afterFailedSelfCheck, afterPendingAuthorization, decideChallenge, FINALIZER, LEGACY_FINALIZERS, POLL_TIMEOUT_MS } from './challenge.ts';
import { ANN_ACCEPTED_AT, ANN_NEXT_LOOK, RETRY_AFTER_CAP_MS } from '../look-schedule.ts';

const NOW = new Date('2026-06-01T00:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

function challenge(status: Challenge['status'], annotations: Record<string, string> = {}, waitInsteadOfSelfCheck?: string): Challenge {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', uid: 'u', finalizers: [FINALIZER], annotations },
    spec: {
      url: 'https://ca.test/chall/1', authorizationURL: 'https://ca.test/authz/1', dnsName: 'a.example.test', type: 'DNS-01', token: 't', key: 'k',
      solver: { dns01: { rfc2136: { nameserver: '127.0.0.1' } }, ...(waitInsteadOfSelfCheck ? { waitInsteadOfSelfCheck } : {}) } as never,
      issuerRef: { name: 'le' },
    },
    status,
  };
}

const notPresented = { processing: true, presented: false, state: 'pending' as const };
const presented = { processing: true, presented: true, presentedAt: at(-1_000), state: 'pending' as const };
const accepted = { processing: true, presented: true, presentedAt: at(-5_000), state: 'processing' as const };

test('decideChallenge: self-checks and polls are due from the marks on the Challenge', () => {
  const rows: { name: string; c: Challenge; want: ReturnType<typeof decideChallenge> }[] = [
    { name: 'not presented: present now', c: challenge(notPresented), want: { kind: 'present' } },
    { name: 'not presented, the provider\'s wait over: present now', c: challenge(notPresented, { [ANN_NEXT_LOOK]: at(-10) }), want: { kind: 'present' } },
    { name: 'not presented, the provider asked to wait: look later', c: challenge(notPresented, { [ANN_NEXT_LOOK]: at(60_000) }), want: { kind: 'look-later', afterMs: 60_000 } },
    { name: 'presented, never checked: self-check now', c: challenge(presented), want: { kind: 'self-check' } },
    { name: 'presented, next check passed: self-check', c: challenge(presented, { [ANN_NEXT_LOOK]: at(-10) }), want: { kind: 'self-check' } },
    { name: 'presented, next check ahead: look later', c: challenge(presented, { [ANN_NEXT_LOOK]: at(800) }), want: { kind: 'look-later', afterMs: 800 } },
    { name: 'accepted without marks (older certsmith): poll now', c: challenge(accepted), want: { kind: 'poll' } },
    { name: 'accepted 10 ms ago: the first poll 50 ms after accepting', c: challenge(accepted, { [ANN_ACCEPTED_AT]: at(-10) }), want: { kind: 'look-later', afterMs: 40 } },
    {
      name: 'accepted, a stale self-check mark is ignored', c: challenge(accepted, { [ANN_ACCEPTED_AT]: at(-10), [ANN_NEXT_LOOK]: at(-3_000) }),
      want: { kind: 'look-later', afterMs: 40 },
    },
    { name: 'accepted, next poll ahead: look later', c: challenge(accepted, { [ANN_ACCEPTED_AT]: at(-400), [ANN_NEXT_LOOK]: at(300) }), want: { kind: 'look-later', afterMs: 300 } },
    { name: 'accepted, next poll due: poll', c: challenge(accepted, { [ANN_ACCEPTED_AT]: at(-400), [ANN_NEXT_LOOK]: at(0) }), want: { kind: 'poll' } },
  ];
  for (const r of rows) assert.deepEqual(decideChallenge(r.c, NOW), r.want, r.name);
});

test('afterFailedSelfCheck: the wait doubles with the time since presentation, 200 ms to 10 s', () => {
  const rows: { name: string; presentedAt?: string; mark?: string; want: number }[] = [
    { name: 'just presented: 200 ms', presentedAt: at(0), want: 200 },
    { name: 'no presentedAt: 200 ms', want: 200 },
    { name: 'presented 1.5 s ago: 1.5 s', presentedAt: at(-1_500), want: 1_500 },
    { name: 'presented a minute ago: 10 s (cert-manager\'s DNS01CheckRetryPeriod)', presentedAt: at(-60_000), want: 10_000 },
    { name: 'the check due 400 ms after presentation made at 900 ms: 400 ms', presentedAt: at(-900), mark: at(-500), want: 400 },
  ];
  for (const r of rows) {
    const c = challenge({ ...presented, presentedAt: r.presentedAt }, r.mark ? { [ANN_NEXT_LOOK]: r.mark } : {});
    assert.deepEqual(afterFailedSelfCheck(c, NOW), { kind: 'look-later', afterMs: r.want, annotations: { [ANN_NEXT_LOOK]: at(r.want) } }, r.name);
  }
});

test('afterPendingAuthorization: one row per outcome', () => {
  const rows: { name: string; annotations: Record<string, string>; retryAfterMs?: number; want: ReturnType<typeof afterPendingAuthorization> }[] = [
    {
      name: 'accepted 50 ms ago: look again in 50 ms', annotations: { [ANN_ACCEPTED_AT]: at(-50) },
      want: { kind: 'look-later', afterMs: 50, annotations: { [ANN_NEXT_LOOK]: at(50) } },
    },
    {
      name: 'the look due at 100 ms made late at 180 ms: wait 100 (the pace does not stretch)', annotations: { [ANN_ACCEPTED_AT]: at(-180), [ANN_NEXT_LOOK]: at(-80) },
      want: { kind: 'look-later', afterMs: 100, annotations: { [ANN_NEXT_LOOK]: at(100) } },
    },
    {
      name: 'a self-check mark older than the acceptance does not count', annotations: { [ANN_ACCEPTED_AT]: at(-180), [ANN_NEXT_LOOK]: at(-5_000) },
      want: { kind: 'look-later', afterMs: 180, annotations: { [ANN_NEXT_LOOK]: at(180) } },
    },
    {
      name: 'accepted 30 s ago: at most 2 s', annotations: { [ANN_ACCEPTED_AT]: at(-30_000) },
      want: { kind: 'look-later', afterMs: 2_000, annotations: { [ANN_NEXT_LOOK]: at(2_000) } },
    },
    {
      name: 'the server asked for 4 s (Retry-After): not before then', annotations: { [ANN_ACCEPTED_AT]: at(-50) }, retryAfterMs: 4_000,
      want: { kind: 'look-later', afterMs: 4_000, annotations: { [ANN_NEXT_LOOK]: at(4_000) } },
    },
    {
      name: 'a Retry-After of days is capped', annotations: { [ANN_ACCEPTED_AT]: at(-50) }, retryAfterMs: 3 * 86_400_000,
      want: { kind: 'look-later', afterMs: RETRY_AFTER_CAP_MS, annotations: { [ANN_NEXT_LOOK]: at(RETRY_AFTER_CAP_MS) } },
    },
    {
      name: 'accepted without the mark (older certsmith): the mark starts now', annotations: {},
      want: { kind: 'look-later', afterMs: 50, annotations: { [ANN_ACCEPTED_AT]: at(0), [ANN_NEXT_LOOK]: at(50) } },
    },
    {
      name: 'still pending two minutes after accepting: given up', annotations: { [ANN_ACCEPTED_AT]: at(-POLL_TIMEOUT_MS - 1) },
      want: { kind: 'give-up', reason: 'Error accepting authorization: still pending 120s after the challenge was accepted' },
    },
    {
      name: 'exactly at the timeout: one more look', annotations: { [ANN_ACCEPTED_AT]: at(-POLL_TIMEOUT_MS) },
      want: { kind: 'look-later', afterMs: 2_000, annotations: { [ANN_NEXT_LOOK]: at(2_000) } },
    },
  ];
  for (const r of rows) assert.deepEqual(afterPendingAuthorization(challenge(accepted, r.annotations), NOW, r.retryAfterMs), r.want, r.name);
});

test('afterCleanUp: presented=false records a finished cleanup; a Challenge being deleted only loses the finalizer', () => {
  const valid = { ...presented, state: 'valid' as const };
  const withMeta = (meta: Partial<Challenge['metadata']>, status: Challenge['status'] = valid) => {
    const c = challenge(status);
    return { ...c, metadata: { ...c.metadata, ...meta } };
  };
  const rows: { name: string; c: Challenge; want: ReturnType<typeof afterCleanUp> }[] = [
    { name: 'final: presented=false, then the finalizer goes', c: challenge(valid), want: { status: { presented: false, processing: false }, finalizers: [] } },
    {
      name: 'deleted meanwhile (the fresh object after a conflict): the finalizer only',
      c: withMeta({ deletionTimestamp: at(0) }), want: { finalizers: [] },
    },
    {
      name: "the legacy finalizer goes too; others' stay", c: withMeta({ finalizers: ['other.example/keep', ...LEGACY_FINALIZERS, FINALIZER] }),
      want: { status: { presented: false, processing: false }, finalizers: ['other.example/keep'] },
    },
    { name: 'already recorded and let go: the same status (setStatus skips an unchanged one), no finalizer write', c: withMeta({ finalizers: [] }, { ...valid, presented: false, processing: false }), want: { status: { presented: false, processing: false } } },
  ];
  for (const r of rows) assert.deepEqual(afterCleanUp(r.c), r.want, r.name);
});
