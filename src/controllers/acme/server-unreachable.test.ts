import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unreachableStatus } from './server-unreachable.ts';

const now = new Date('2026-01-01T00:00:00Z');
const issuer = (ready: 'True' | 'False', reason = 'ACMEAccountRegistered') => ({
  kind: 'ClusterIssuer', metadata: { name: 'le', generation: 2 },
  spec: { acme: { server: 'https://acme.test/dir', privateKeySecretRef: { name: 'k' } } },
  status: { acme: { uri: 'https://acme.test/acct/1' }, conditions: [{ type: 'Ready', status: ready, reason, message: '', lastTransitionTime: '2025-01-01T00:00:00Z' }] },
}) as Parameters<typeof unreachableStatus>[0];

test('a Ready ACME issuer whose server cannot be reached becomes Ready=False with the reason and the error; its account stays', () => {
  const st = unreachableStatus(issuer('True'), 'GET https://acme.test/dir: connect ECONNREFUSED 127.0.0.1:443', now)!;
  const ready = st.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'ErrVerifyACMEAccount');
  assert.equal(ready.message, 'Failed to verify ACME account: the ACME server https://acme.test/dir cannot be reached: GET https://acme.test/dir: connect ECONNREFUSED 127.0.0.1:443');
  assert.equal(ready.lastTransitionTime, now.toISOString().replace(/\.\d{3}Z$/, 'Z'));
  assert.equal(ready.observedGeneration, 2);
  assert.equal(st.acme?.uri, 'https://acme.test/acct/1', 'the same account is asked for again');
});

test('an issuer already not Ready keeps its own reason', () => {
  assert.equal(unreachableStatus(issuer('False', 'ErrRegisterACMEAccount'), 'x', now), undefined);
});
