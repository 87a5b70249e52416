// Admission and the renewal controller read spec.renewal.windows through one parser: whatever
// admission lets in, the controller can schedule, and what the controller would call
// RenewalConfigInvalid is refused at admission with a field error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Certificate } from './resources.ts';
import { validate } from './validation.ts';
import { checkRenewalWindows, parseWindows } from './renewal-windows.ts';
import type { KubeObject } from './meta.ts';

function certWithWindows(windows: unknown[]): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'default' },
    spec: { secretName: 'c-tls', issuerRef: { name: 'ca' }, dnsNames: ['a.example.com'], renewal: { windows } },
  };
}

const windowErrors = (windows: unknown[]) => validate(Certificate, certWithWindows(windows)).filter((e) => e.field.startsWith('spec.renewal'));

test('an upper-case cron descriptor, once admitted and then RenewalConfigInvalid, is refused at admission', () => {
  const windows = [{ cron: '@DAILY', duration: '1h' }];
  const controller = parseWindows(windows);
  assert.ok('error' in controller, 'the controller refuses "@DAILY" (cron-parser and robfig/cron know only lower-case descriptors)');
  assert.match(controller.error, /^spec\.renewal\.windows\[0\]\.cron: unknown descriptor "@DAILY"/);
  const errs = windowErrors(windows);
  assert.equal(errs.length, 1, JSON.stringify(errs));
  assert.equal(errs[0].field, 'spec.renewal.windows[0].cron');
  assert.equal(errs[0].reason, 'FieldValueInvalid');
  assert.match(errs[0].message, /^invalid cron syntax: unrecognized descriptor "@DAILY"/);
});

test('a time zone with surrounding space, once admitted by the controller, is refused by both', () => {
  const windows = [{ cron: '0 1 * * *', duration: '1h', timeZone: ' Europe/Paris' }];
  assert.deepEqual(parseWindows(windows), { error: 'spec.renewal.windows[0].timeZone: unknown time zone " Europe/Paris"' });
  assert.deepEqual(windowErrors(windows).map((e) => [e.field, e.message]), [['spec.renewal.windows[0].timeZone', 'invalid value for timezone. timezone must be IANA compliant']]);
});

test('admission and the controller agree on every window, good or bad', () => {
  const cases: unknown[] = [
    { cron: '@daily', duration: '1h' },
    { cron: ['0 1 * * *', '30 2 * * 1-5'], duration: '6h', timeZone: 'America/Denver' },
    { cron: '0 10 * * 6,0', windowDuration: '8h', timezone: 'Asia/Kolkata' },
    { cron: '0 0 31 2 *', duration: '1h' }, // parses, never opens (cron and cert-manager accept it)
    { cron: '0 0 L * *', duration: '1h' },
    { cron: '@reboot', duration: '1h' },
    { cron: '@Hourly', duration: '1h' },
    { cron: '61 1 * * *', duration: '1h' },
    { cron: '*/0 * * * *', duration: '1h' },
    { cron: '0 0 1 * * *', duration: '1h' },
    { cron: 'every day', duration: '1h' },
    { cron: [], duration: '1h' },
    { cron: ['0 1 * * *', ' '], duration: '1h' },
    { cron: '0 1 * * *', duration: '0s' },
    { cron: '0 1 * * *', duration: '-1h' },
    { cron: '0 1 * * *', duration: 'six hours' },
    { cron: '0 1 * * *' },
    { cron: '0 1 * * *', duration: '1h', timeZone: 'Mars/Olympus' },
    { cron: '0 1 * * *', duration: '1h', timezone: 'utc ' },
    { cron: '0 1 * * *', duration: '1h', timeZone: '' },
  ];
  for (const w of cases) {
    const admitted = windowErrors([w]).length === 0;
    const scheduled = !('error' in parseWindows([w]));
    assert.equal(admitted, scheduled, `${JSON.stringify(w)}: admission ${admitted ? 'accepts' : 'refuses'}, the controller ${scheduled ? 'accepts' : 'refuses'}`);
  }
});

test('every problem of every window is reported, at its field', () => {
  const { problems } = checkRenewalWindows([
    { cron: ['0 1 * * *', 'bad'], duration: 'x', timeZone: 'Nowhere' },
    { cron: '@weekly', duration: '1h' },
    { cron: '@never', windowDuration: '0s' },
  ]);
  assert.deepEqual(problems.map((p) => [p.field, p.code]), [
    ['spec.renewal.windows[0].timeZone', 'unknownTimeZone'],
    ['spec.renewal.windows[0].duration', 'durationInvalid'],
    ['spec.renewal.windows[0].cron[1]', 'cronFields'],
    ['spec.renewal.windows[2].windowDuration', 'durationNotPositive'],
    ['spec.renewal.windows[2].cron', 'cronDescriptor'],
  ]);
});

test('a CRON_TZ= or TZ= prefix names the zone of its expression, as robfig/cron (cert-manager\'s parser) reads it', () => {
  const { windows, problems } = checkRenewalWindows([
    { cron: 'CRON_TZ=America/Denver 0 2 * * 1-5', windowDuration: '2h' },
    { cron: ['TZ=Asia/Kolkata @daily', '0 3 * * *'], duration: '1h' },
  ]);
  assert.deepEqual(problems, []);
  assert.deepEqual(windows.map((w) => [w.index, w.cron, w.timeZone]), [
    [0, '0 2 * * 1-5', 'America/Denver'],
    [1, '@daily', 'Asia/Kolkata'],
    [1, '0 3 * * *', 'UTC'],
  ]);
  assert.deepEqual(windowErrors([{ cron: 'CRON_TZ=UTC 0 2 * * *', windowDuration: '2h' }]), []);
});

test('a CRON_TZ= prefix naming no zone, or beside a timeZone (upstream then reads six fields), is refused by both', () => {
  for (const [windows, message] of [
    [[{ cron: 'CRON_TZ=Mars/Olympus 0 2 * * *', windowDuration: '2h' }], /unknown time zone "Mars\/Olympus"/],
    [[{ cron: 'CRON_TZ=UTC', windowDuration: '2h' }], /5 fields, (got|found) 0/],
    [[{ cron: 'CRON_TZ=UTC 0 2 * * *', windowDuration: '2h', timezone: 'Europe/Paris' }], /CRON_TZ/],
  ] as const) {
    const controller = parseWindows(windows);
    assert.ok('error' in controller, JSON.stringify(windows));
    assert.match(controller.error, /^spec\.renewal\.windows\[0\]\.cron: /);
    const errs = windowErrors([...windows]);
    assert.equal(errs.length, 1, JSON.stringify(errs));
    assert.equal(errs[0].field, 'spec.renewal.windows[0].cron');
    assert.match(errs[0].message, message);
  }
});
