// The Events index the notifications controller reads deploy-hook outcomes from: only hook
// outcomes about a Certificate, keyed by its uid; and the latest of them wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hookOutcomeIndexKeys } from './controller.ts';
import { lastHookOutcome } from '../../shared/deploy-hook-events.ts';

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

test('lastHookOutcome: within one second (Event times are whole seconds) the later revision wins, whichever the index lists first', () => {
  const crt = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default', uid: 'u1' }, spec: { secretName: 's', issuerRef: { name: 'ca' } } };
  const failed1 = ev('DeployHookFailed', { at: '2026-01-01T00:00:00Z', message: 'Deploy hook for revision 1 exited with status 1 (attempt 1, retrying in 1m): no' });
  const ok2 = ev('DeployHookSucceeded', { at: '2026-01-01T00:00:00Z', message: 'Deploy hook for revision 2 exited with status 0' });
  const ok9 = ev('DeployHookSucceeded', { at: '2026-01-01T00:00:00Z', message: 'Deploy hook for revision 9 exited with status 0' });
  const failed10 = ev('DeployHookFailed', { at: '2026-01-01T00:00:00Z', message: 'Deploy hook for revision 10 exited with status 1 (attempt 1, retrying in 1m): no' });
  assert.equal(lastHookOutcome([failed1, ok2], crt)?.failed, false);
  assert.equal(lastHookOutcome([ok2, failed1], crt)?.failed, false);
  assert.equal(lastHookOutcome([failed10, ok9], crt)?.failed, true, 'revisions compare as numbers');
  assert.equal(lastHookOutcome([ok9, failed10], crt)?.failed, true);
});
