// The notification decision: one row per kind, firing and not; once per condition, resolved once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { activeNotifications, decideNotifications, formatAnnounced, nextNotificationChange, parseAnnounced, type Announced, type NotificationPolicy } from './conditions.ts';

const NOW = new Date('2026-06-10T00:00:00Z');
const policy: NotificationPolicy = { failures: 3, renewalGraceMs: 3_600_000 };
// a 30-day certificate: a tenth of its lifetime is 3 days
const issued = { notBefore: '2026-06-01T00:00:00Z', notAfter: '2026-07-01T00:00:00Z', renewalTime: '2026-06-21T00:00:00Z' };

test('which notifications hold (table: one row per kind, with the boundary that matters)', () => {
  const rows: { why: string; status: Record<string, unknown>; hook?: { failed: boolean; message: string }; p?: Partial<NotificationPolicy>; expect: string[] }[] = [
    { why: 'a healthy certificate: nothing', status: { ...issued }, expect: [] },
    { why: 'two failures in a row: not yet', status: { ...issued, issuanceAttempts: 2 }, expect: [] },
    { why: 'three failures in a row (the seed field)', status: { ...issued, issuanceAttempts: 3 }, expect: ['IssuanceFailing'] },
    { why: "cert-manager's failedIssuanceAttempts counts too", status: { ...issued, failedIssuanceAttempts: 5 }, expect: ['IssuanceFailing'] },
    { why: 'a lower threshold from the configuration', status: { ...issued, issuanceAttempts: 1 }, p: { failures: 1 }, expect: ['IssuanceFailing'] },
    { why: 'past the renewal time, within the grace period: not yet', status: { ...issued, renewalTime: '2026-06-09T23:30:00Z' }, expect: [] },
    { why: 'past the renewal time by the grace period', status: { ...issued, renewalTime: '2026-06-09T23:00:00Z' }, expect: ['RenewalOverdue'] },
    { why: 'more than a tenth of the lifetime left: not expiring', status: { ...issued, notAfter: '2026-06-13T00:00:01Z', notBefore: '2026-05-14T00:00:01Z' }, expect: [] },
    { why: 'a tenth of the lifetime left', status: { ...issued, notBefore: '2026-05-13T00:00:00Z', notAfter: '2026-06-12T00:00:00Z', renewalTime: '2026-07-01T00:00:00Z' }, expect: ['ExpiringSoon'] },
    { why: 'a configured threshold instead of a tenth', status: { ...issued }, p: { expiryThresholdMs: 30 * 86_400_000 }, expect: ['ExpiringSoon'] },
    { why: 'expired', status: { ...issued, notAfter: '2026-06-09T00:00:00Z', renewalTime: '2026-07-01T00:00:00Z' }, expect: ['ExpiringSoon'] },
    {
      why: "the CA's window had ended when fetched: replace now",
      status: { ...issued, acme: { ari: { suggestedWindow: { start: '2026-06-01T00:00:00Z', end: '2026-06-02T00:00:00Z' }, lastChecked: '2026-06-03T00:00:00Z' } } }, expect: ['ARIReplaceNow'],
    },
    {
      why: "the CA's \"replace now\" sets the renewal time to its window's start, days ago: replace now, not overdue (failed before: RenewalOverdue at once)",
      status: { ...issued, renewalTime: '2026-06-01T00:00:00Z', acme: { ari: { suggestedWindow: { start: '2026-06-01T00:00:00Z', end: '2026-06-02T00:00:00Z' }, lastChecked: '2026-06-09T23:59:00Z' } } },
      expect: ['ARIReplaceNow'],
    },
    {
      why: 'an ordinary ARI window whose renewal time passed without renewal: overdue as ever',
      status: { ...issued, renewalTime: '2026-06-08T00:00:00Z', acme: { ari: { suggestedWindow: { start: '2026-06-08T00:00:00Z', end: '2026-06-12T00:00:00Z' }, lastChecked: '2026-06-09T23:00:00Z' } } },
      expect: ['RenewalOverdue'],
    },
    {
      why: 'an ordinary ARI window: nothing',
      status: { ...issued, acme: { ari: { suggestedWindow: { start: '2026-06-20T00:00:00Z', end: '2026-06-22T00:00:00Z' }, lastChecked: '2026-06-03T00:00:00Z' } } }, expect: [],
    },
    { why: 'the last deploy hook failed', status: { ...issued }, hook: { failed: true, message: 'exit 1' }, expect: ['DeployHookFailed'] },
    { why: 'the last deploy hook succeeded', status: { ...issued }, hook: { failed: false, message: 'ok' }, expect: [] },
    { why: 'several at once', status: { ...issued, issuanceAttempts: 4, renewalTime: '2026-06-01T00:00:00Z' }, expect: ['IssuanceFailing', 'RenewalOverdue'] },
  ];
  for (const r of rows) {
    const got = activeNotifications({ status: r.status as never }, r.hook, NOW, { ...policy, ...r.p });
    assert.deepEqual([...got.keys()], r.expect, r.why);
  }
  const msg = activeNotifications({ status: { ...issued, issuanceAttempts: 3, conditions: [{ type: 'Ready', status: 'False', reason: 'Failed', message: 'issuer refused' }] } as never }, undefined, NOW, policy);
  assert.equal(msg.get('IssuanceFailing'), 'issuance failed 3 times in a row: issuer refused');
  // the cause is in the failed Issuing condition; Ready only says the Secret is not there yet
  const cause = activeNotifications({ status: { ...issued, issuanceAttempts: 3, conditions: [
    { type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
    { type: 'Issuing', status: 'False', reason: 'Failed', message: 'The certificate request has failed to complete and will be retried: rejectedIdentifier: forbidden by policy' },
  ] } as never }, undefined, NOW, policy);
  assert.equal(cause.get('IssuanceFailing'), 'issuance failed 3 times in a row: The certificate request has failed to complete and will be retried: rejectedIdentifier: forbidden by policy');
});

test('each condition is announced once and resolved once, to each target', () => {
  const both = ['webhook', 'exec'] as const;
  const active = new Map([['IssuanceFailing', 'failed 3 times'], ['ExpiringSoon', 'expires in 2d']] as const);
  const sent = (d: ReturnType<typeof decideNotifications>) => d.map((x) => `${x.state} ${x.kind} ${x.target}`);
  assert.deepEqual(sent(decideNotifications(new Map(active), new Map(), both)),
    ['firing IssuanceFailing webhook', 'firing IssuanceFailing exec', 'firing ExpiringSoon webhook', 'firing ExpiringSoon exec']);
  const all = parseAnnounced(formatAnnounced(new Map([['ExpiringSoon', new Set(both)], ['IssuanceFailing', new Set(both)]]) as Announced, both), both);
  assert.deepEqual(sent(decideNotifications(new Map(active), all, both)), [], 'nothing twice');
  assert.deepEqual(sent(decideNotifications(new Map([['ExpiringSoon', 'x']] as const), parseAnnounced('IssuanceFailing,ExpiringSoon', both), both)),
    ['resolved IssuanceFailing webhook', 'resolved IssuanceFailing exec'], 'a kind written without targets was announced to every target');
  assert.deepEqual([...parseAnnounced('Bogus,RenewalOverdue,', both).keys()], ['RenewalOverdue'], 'unknown kinds in the annotation are ignored');
  // one target failed: the other's notice is recorded, so a retry sends only what is missing
  const partial: Announced = new Map([['IssuanceFailing', new Set(['webhook'] as const)]]);
  assert.equal(formatAnnounced(partial, both), 'IssuanceFailing@webhook');
  const reread = parseAnnounced('IssuanceFailing@webhook', both);
  assert.deepEqual(sent(decideNotifications(new Map(active), reread, both)), ['firing IssuanceFailing exec', 'firing ExpiringSoon webhook', 'firing ExpiringSoon exec']);
  assert.deepEqual(sent(decideNotifications(new Map(), reread, both)), ['resolved IssuanceFailing webhook'], 'resolved only where it was announced');
  // only one target configured: the short form
  assert.equal(formatAnnounced(new Map([['ExpiringSoon', new Set(['exec'] as const)]]) as Announced, ['exec']), 'ExpiringSoon');
  assert.equal(formatAnnounced(new Map([['ExpiringSoon', new Set()]]) as Announced, both), '', 'a kind announced nowhere is not listed');
});

test('the next time a time-based condition starts', () => {
  assert.equal(nextNotificationChange({ status: issued as never }, NOW, policy)?.toISOString(), '2026-06-21T01:00:00.000Z', 'renewal time + grace comes before the last tenth (06-28)');
  assert.equal(nextNotificationChange({ status: { ...issued, renewalTime: undefined } as never }, NOW, policy)?.toISOString(), '2026-06-28T00:00:00.000Z');
  assert.equal(nextNotificationChange({ status: {} as never }, NOW, policy), undefined);
});
