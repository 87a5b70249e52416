// The Events index the notifications controller reads deploy-hook outcomes from: only hook
// outcomes about a Certificate, keyed by its uid; and the latest of them wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hookOutcomeIndexKeys, lastHookOutcome } from './controller.ts';

const ev = (reason: string, o: { kind?: string; uid?: string; at?: string; message?: string } = {}) => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name: `e-${reason}-${o.at ?? ''}`, namespace: 'default' },
  involvedObject: { kind: o.kind ?? 'Certificate', name: 'a', namespace: 'default', ...(o.uid === '' ? {} : { uid: o.uid ?? 'u1' }) },
  reason, message: o.message, lastTimestamp: o.at ?? '2026-01-01T00:00:00Z',
});

test('hookOutcomeIndexKeys: deploy-hook outcomes of Certificates only', () => {
  const rows: [string, ReturnType<typeof ev>, string[]][] = [
    ['hook failed', ev('DeployHookFailed'), ['u1']],
    ['hook succeeded', ev('DeployHookSucceeded', { uid: 'u2' }), ['u2']],
    ['another reason', ev('Issuing'), []],
    ['not a Certificate', ev('DeployHookFailed', { kind: 'Secret' }), []],
    ['no uid', ev('DeployHookFailed', { uid: '' }), []],
  ];
  for (const [name, e, want] of rows) assert.deepEqual(hookOutcomeIndexKeys(e), want, name);
});

test('lastHookOutcome: the latest outcome for this Certificate', () => {
  const crt = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default', uid: 'u1' }, spec: { secretName: 's', issuerRef: { name: 'ca' } } };
  const events = [
    ev('DeployHookFailed', { at: '2026-01-01T00:00:00Z', message: 'exit 1' }),
    ev('DeployHookSucceeded', { at: '2026-01-01T00:01:00Z' }),
    ev('DeployHookFailed', { at: '2026-01-01T00:05:00Z', uid: 'other' }),
  ];
  assert.deepEqual(lastHookOutcome(events, crt), { failed: false, message: 'the deploy hook failed' });
  assert.deepEqual(lastHookOutcome(events.slice(0, 1), crt), { failed: true, message: 'exit 1' });
  assert.equal(lastHookOutcome([], crt), undefined);
});
