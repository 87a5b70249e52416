import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Challenge } from '../../../api/types.ts';
import { scheduleChallenges } from './scheduler.ts';
import { decideChallenge, FINALIZER } from './challenge.ts';

let n = 0;
function challenge(dnsName: string, type: 'HTTP-01' | 'DNS-01', status: Challenge['status'] = {}, extra: Partial<Challenge['metadata']> = {}): Challenge {
  n++;
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: `c${n}`, namespace: 'default', creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), ...extra },
    spec: { url: 'u', authorizationURL: 'a', dnsName, type, token: 't', key: 'k', solver: {}, issuerRef: { name: 'i' } },
    status,
  };
}
const names = (cs: Challenge[]) => cs.map((c) => c.metadata.name);

test('the oldest challenge per DNS name and type goes first; the later one waits', () => {
  const a = challenge('example.com', 'DNS-01');
  const b = challenge('example.com', 'DNS-01');
  const c = challenge('example.com', 'HTTP-01');
  assert.deepEqual(names(scheduleChallenges([b, a, c])), [a.metadata.name, c.metadata.name]);
  const running = { ...a, status: { processing: true } };
  assert.deepEqual(names(scheduleChallenges([running, b])), []);
  // once the first is done and released, the second may start
  assert.deepEqual(names(scheduleChallenges([{ ...a, status: { state: 'valid', processing: false } }, b])), [b.metadata.name]);
});

test('no more than max challenges are processing at once, and final ones are never started', () => {
  const busy = [1, 2, 3].map((i) => challenge(`busy${i}.example.com`, 'HTTP-01', { processing: true }));
  const waiting = [1, 2, 3].map((i) => challenge(`w${i}.example.com`, 'HTTP-01'));
  assert.equal(scheduleChallenges([...busy, ...waiting], 4).length, 1);
  assert.equal(scheduleChallenges([...busy, ...waiting], 3).length, 0);
  assert.equal(scheduleChallenges([challenge('x.example.com', 'HTTP-01', { state: 'invalid' })]).length, 0);
});

test('a challenge walks finalizer → state → present → self-check → accept → poll → cleanup', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const fin = { finalizers: [FINALIZER] };
  assert.equal(decideChallenge(challenge('a', 'HTTP-01'), now).kind, 'none');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true }), now).kind, 'add-finalizer');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true }, fin), now).kind, 'initial-state');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true, state: 'pending' }, fin), now).kind, 'present');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true, state: 'pending', presented: true }, fin), now).kind, 'self-check');
  const waiting = challenge('a', 'HTTP-01', { processing: true, state: 'pending', presented: true, presentedAt: '2026-01-01T00:00:00Z' }, fin);
  waiting.spec.solver = { waitInsteadOfSelfCheck: '30s' };
  const w = decideChallenge(waiting, new Date('2026-01-01T00:00:10Z'));
  assert.equal(w.kind, 'wait');
  assert.equal(w.kind === 'wait' && w.remainingMs, 20_000);
  assert.equal(decideChallenge(waiting, new Date('2026-01-01T00:00:30Z')).kind, 'accept');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true, state: 'processing', presented: true }, fin), now).kind, 'poll');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true, state: 'invalid', presented: true }, fin), now).kind, 'cleanup');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { processing: true, state: 'pending' }, { ...fin, deletionTimestamp: '2026-01-01T00:00:00Z' }), now).kind, 'cleanup');
  assert.equal(decideChallenge(challenge('a', 'HTTP-01', { state: 'valid' }), now).kind, 'none');
});
