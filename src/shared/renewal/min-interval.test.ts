// The minimum interval between issuances (issue 12, finding 12): table tests of the rule and of
// the trigger decision it changes. Times are passed in; nothing reads a clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdForMinimumInterval, issuanceTimeOf, lastIssuanceTime, minimumIssuanceIntervalMs } from './min-interval.ts';
import { parseCertificate } from '../../pki/parse.ts';
import type { RenewalDecision } from './renewal-time.ts';
import { decideTrigger } from '../../controllers/certificates/trigger/trigger.ts';
import { defaultBackoff } from '../backoff.ts';
import { renewalFor } from './renewal-decision.ts';
import { generatePrivateKey } from '../../pki/keys.ts';
import { createCSR } from '../../pki/csr.ts';
import { signCertificate } from '../../pki/sign.ts';

const S = 1000;
const MIN = 60 * S;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const t0 = new Date('2026-05-01T12:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

test('minimumIssuanceIntervalMs = max(5m, 10% of the validity)', () => {
  const rows: [string, number, number][] = [
    ['1h', HOUR, 6 * MIN],
    ['50m (floor)', 50 * MIN, 5 * MIN],
    ['1m (clipped by an expiring CA: the floor)', MIN, 5 * MIN],
    ['zero or negative', 0, 5 * MIN],
    ['24h', DAY, 144 * MIN],
    ['90d', 90 * DAY, 9 * DAY],
  ];
  for (const [name, validity, want] of rows) assert.equal(minimumIssuanceIntervalMs(t0, at(validity)), want, name);
});

test('lastIssuanceTime: the later of notBefore and the request creation', () => {
  const rows: [string, string | undefined, Date][] = [
    ['no request', undefined, t0],
    ['request after a backdated notBefore', at(HOUR).toISOString(), at(HOUR)],
    ['request before notBefore', at(-MIN).toISOString(), t0],
    ['unparsable timestamp', 'yesterday', t0],
  ];
  for (const [name, created, want] of rows) assert.deepEqual(lastIssuanceTime(t0, created), want, name);
});

test('issuanceTimeOf: the request\'s creation only when that request issued this very certificate', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const csrPem = await createCSR({ dnsNames: ['a.example.test'] }, key);
  const ours = await signCertificate({ csrPem, notBefore: t0, durationMs: 30 * DAY, selfSignKeyPem: key });
  const other = await signCertificate({ csrPem, notBefore: at(-29 * DAY), durationMs: 30 * DAY, selfSignKeyPem: key });
  const request = (certificatePem: string | undefined, created: Date) => ({
    metadata: { creationTimestamp: created.toISOString() },
    status: certificatePem ? { certificate: Buffer.from(certificatePem).toString('base64') } : {},
  });
  const leaf = parseCertificate(ours);
  const rows: [string, ReturnType<typeof request> | undefined, Date][] = [
    ['no request', undefined, t0],
    ['the request that issued it, an hour after a backdated notBefore', request(ours, at(HOUR)), at(HOUR)],
    // a Secret put back by hand with an older certificate: the request issued another one, days later
    ['a request that issued another certificate', request(other, at(2 * DAY)), t0],
    ['a request not issued yet', request(undefined, at(2 * DAY)), t0],
  ];
  for (const [name, cr, want] of rows) assert.deepEqual(issuanceTimeOf(leaf, cr), want, name);
});

test('holdForMinimumInterval table', () => {
  const scheduled = (ms: number): RenewalDecision => ({ kind: 'scheduled', renewalTime: at(ms), baseTime: at(ms), reason: 'RenewBefore', message: 'renewing' });
  const leaf1h = { notBefore: t0, notAfter: at(HOUR) };
  const rows: { name: string; d: RenewalDecision; leaf?: { notBefore: Date; notAfter: Date }; issuedAt?: Date; want: Date | 'same' }[] = [
    { name: '1h, renewBefore 59m59s: renewal at +1s held to +6m', d: scheduled(S), want: at(6 * MIN) },
    { name: 'renewal exactly at the interval is kept', d: scheduled(6 * MIN), want: 'same' },
    { name: 'default 2/3 renewal is far past the interval', d: scheduled(40 * MIN), want: 'same' },
    { name: 'a backdated notBefore: measured from the request instead', d: scheduled(S), issuedAt: at(HOUR / 2), want: at(HOUR / 2 + 6 * MIN) },
    { name: 'clipped 2m validity: held to the 5m floor (past notAfter)', d: scheduled(0), leaf: { notBefore: t0, notAfter: at(2 * MIN) }, want: at(5 * MIN) },
    { name: 'disabled renewal untouched', d: { kind: 'disabled', message: 'x' }, want: 'same' },
    { name: 'invalid renewal untouched', d: { kind: 'invalid', message: 'x' }, want: 'same' },
  ];
  for (const r of rows) {
    const got = holdForMinimumInterval(r.d, r.leaf ?? leaf1h, r.issuedAt);
    if (r.want === 'same') {
      assert.deepEqual(got, r.d, r.name);
      continue;
    }
    assert.equal(got.kind, 'scheduled', r.name);
    if (got.kind !== 'scheduled' || r.d.kind !== 'scheduled') continue;
    assert.deepEqual(got.renewalTime, r.want, r.name);
    assert.deepEqual(got.baseTime, r.d.baseTime, `${r.name}: baseTime is still the renewBefore time`);
    assert.match(got.message, /held until .* by the minimum interval between issuances/, r.name);
  }
});

test('a renewal held past the end of its window moves to the start of the next window before expiry, not outside every window', () => {
  // 48h with renewBefore 24h, windows 02:00-03:00Z daily: the window before the renewBefore time
  // ends 7 minutes before the 4.8h hold does
  const notBefore = new Date('2026-11-27T22:23:32Z');
  const notAfter = new Date('2026-11-29T22:23:32Z');
  const windows = [{ cron: '0 3 * * *', duration: '1h', timeZone: 'Europe/Berlin' }];
  const d = renewalFor({ spec: { renewBefore: '24h', renewal: { windows } } } as never, { notBefore, notAfter } as never);
  assert.equal(d.kind, 'scheduled');
  if (d.kind !== 'scheduled') return;
  assert.equal(d.renewalTime.toISOString(), '2026-11-29T02:00:00.000Z', d.message);
  assert.equal(d.window?.start.toISOString(), '2026-11-29T02:00:00.000Z');
  assert.match(d.message, /held until 2026-11-28T03:11:32Z by the minimum interval/);
  assert.match(d.message, /the start of the next renewal window/);
  // EarliestWindow: a weekly window that opens within the first tenth of a 90-day life is skipped for the next one
  const weekly = renewalFor({ spec: { renewal: { policy: 'EarliestWindow', windows: [{ cron: '0 2 * * 0', duration: '4h' }] } } } as never,
    { notBefore: new Date('2026-11-30T08:04:26Z'), notAfter: new Date('2027-02-28T08:04:26Z') } as never);
  assert.equal(weekly.kind === 'scheduled' && weekly.renewalTime.toISOString(), '2026-12-13T02:00:00.000Z', weekly.kind === 'scheduled' ? weekly.message : weekly.kind);
  // no window left before expiry: the held time stands
  const late = renewalFor({ spec: { renewBefore: '24h', renewal: { windows: [{ cron: '0 3 28 11 *', duration: '1h', timeZone: 'Europe/Berlin' }] } } } as never, { notBefore, notAfter } as never);
  assert.equal(late.kind === 'scheduled' && late.renewalTime.toISOString(), '2026-11-28T03:11:32.000Z');
});

test('trigger: the minimum interval holds time-driven renewal only, never what a user caused', async () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const leaf = await signCertificate({ csrPem: await createCSR({ dnsNames: ['a.example.test'] }, key), notBefore: t0, durationMs: HOUR, selfSignKeyPem: key });
  const spec = { secretName: 'a-tls', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' }, duration: '1h', renewBefore: '59m59s', privateKey: { algorithm: 'ECDSA' as const } };
  const input = (o: { dnsNames?: string[]; data?: Record<string, string>; conditions?: { type: string; status: 'True' | 'False'; reason: string; message: string }[] } = {}) => ({
    certificate: {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default', uid: 'u', generation: 1 },
      spec: { ...spec, dnsNames: o.dnsNames ?? spec.dnsNames }, status: { revision: 1, conditions: o.conditions ?? [] },
    },
    secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-tls', namespace: 'default' }, data: o.data ?? { 'tls.crt': b64(leaf), 'tls.key': b64(key) } },
    isSecretOwner: true,
    failuresInSameMinute: 0,
  });
  const rows: { name: string; in: ReturnType<typeof input>; now: Date; reason?: string; requeueAfterMs?: number }[] = [
    { name: 'renewal due at +1s is held: look again at +6m', in: input(), now: at(S), requeueAfterMs: 6 * MIN - S },
    { name: 'held until the last second', in: input(), now: at(6 * MIN - S), requeueAfterMs: S },
    { name: 'at +6m the renewal starts', in: input(), now: at(6 * MIN), reason: 'Renewing' },
    { name: 'a spec change is not held', in: input({ dnsNames: ['a.example.test', 'b.example.test'] }), now: at(S), reason: 'SecretMismatch' },
    { name: 'a Secret without its certificate is not held', in: input({ data: { 'tls.key': b64(key) } }), now: at(S), reason: 'MissingData' },
    { name: 'an Issuing=True set by hand (certsmith renew) is left alone', in: input({ conditions: [{ type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'x' }] }), now: at(S) },
  ];
  for (const r of rows) {
    const d = decideTrigger(r.in, r.now, defaultBackoff);
    assert.equal(d.violation?.reason, r.reason, r.name);
    assert.equal(d.conditions?.find((c) => c.type === 'Issuing')?.status, r.reason ? 'True' : undefined, r.name);
    assert.equal(d.requeueAfterMs, r.requeueAfterMs, r.name);
  }
});
