// Renewal control (seed 003) end to end with a fake clock: windows, Disabled, invalid
// configuration, and the expiry safety net with its metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, condition, type Lifecycle } from './harness.ts';
import { triggerRenewal } from '../../src/cli/renew.ts';
import { certificateStatus } from '../../src/cli/status.ts';
import { parseCertificate } from '../../src/pki/parse.ts';

const HOUR = 3_600_000;

async function withLongCA(lc: Lifecycle) {
  await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
  await lc.apply(certificate('root', { secretName: 'ca-keypair', isCA: true, commonName: 'root', duration: '87600h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } }));
  await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'default' }, spec: { ca: { secretName: 'ca-keypair' } } });
  await lc.settle();
}

async function revision(lc: Lifecycle, name: string) {
  return (await lc.certificate(name)).status?.revision;
}

test('a night window: renewal moves to the last second of the window before the renewBefore time', async () => {
  const lc = await startLifecycle({ start: '2026-01-01T12:00:00Z' });
  try {
    await withLongCA(lc);
    // 72h certificate, renewBefore 24h (set: under 10 days of life the default is half, issue 16): base time 2026-01-03T12:00Z.
    // Window 01:00–03:00 UTC daily: the latest instant inside a window before the base time is
    // 2026-01-03T02:59:59Z (windows are half-open).
    await lc.apply(certificate('night', { dnsNames: ['night.example.test'], duration: '72h', renewBefore: '24h', renewal: { policy: 'RenewBefore', windows: [{ cron: ['0 1 * * *'], duration: '2h' }] } }));
    await lc.settle();
    const crt = await lc.certificate('night');
    assert.equal(crt.status?.renewalTime, '2026-01-03T02:59:59Z');
    assert.equal(condition(crt, 'RenewalWindow')?.reason, 'MovedIntoWindow');
    assert.deepEqual(crt.status?.renewal, { policy: 'RenewBefore', windows: { valid: true } });
    assert.match(await certificateStatus(lc.store, 'default', 'night'), /Renewal window: 2026-01-03T01:00:00.000Z – 2026-01-03T03:00:00.000Z/);

    await lc.advance(Date.parse('2026-01-03T02:59:58Z') - lc.clock.now().getTime());
    assert.equal(await revision(lc, 'night'), 1, 'not renewed before the window time');
    await lc.advance(2000);
    assert.equal(await revision(lc, 'night'), 2);
    const leaf = parseCertificate(Buffer.from((await lc.secret('night-tls'))!.data!['tls.crt'], 'base64').toString());
    const hour = leaf.notBefore.getUTCHours();
    assert.ok(hour >= 1 && hour < 3, `renewed inside the window (notBefore ${leaf.notBefore.toISOString()})`);
    assert.match(await lc.running.metrics.text(), /certmanager_certificate_renewal_deferred_total\{reason="outside_window"\} [1-9]/);
  } finally {
    await lc.stop();
  }
});

test('Disabled never renews automatically, but a manual renew works', async () => {
  const lc = await startLifecycle();
  try {
    await withLongCA(lc);
    await lc.apply(certificate('off', { dnsNames: ['off.example.test'], duration: '24h', renewal: { policy: 'Disabled' } }));
    await lc.settle();
    let crt = await lc.certificate('off');
    assert.equal(crt.status?.renewalTime, undefined);
    assert.equal(condition(crt, 'RenewalDisabled')?.status, 'True');
    await lc.advance(23 * HOUR);
    assert.equal(await revision(lc, 'off'), 1);
    await triggerRenewal(lc.store, 'default', 'off', lc.clock.now());
    await lc.settle();
    crt = await lc.certificate('off');
    assert.equal(crt.status?.revision, 2);
    assert.equal(condition(crt, 'Ready')?.status, 'True');
  } finally {
    await lc.stop();
  }
});

test('an invalid time zone is reported and schedules no renewal until fixed', async () => {
  // no admission, which refuses the zone: the controller's own check, as on a cluster with only the CRDs
  const lc = await startLifecycle({ admission: false });
  try {
    await withLongCA(lc);
    await lc.apply(certificate('badzone', { dnsNames: ['bz.example.test'], duration: '24h', renewal: { windows: [{ cron: '0 1 * * *', duration: '2h', timeZone: 'Mars/Olympus_Mons' }] } }));
    await lc.settle();
    let crt = await lc.certificate('badzone');
    const c = condition(crt, 'RenewalConfigInvalid') as { status: string; message?: string } | undefined;
    assert.equal(c?.status, 'True');
    assert.match(c!.message!, /spec\.renewal\.windows\[0\]\.timeZone/);
    assert.equal(crt.status?.renewalTime, undefined);
    assert.equal(crt.status?.renewal?.windows?.valid, false);
    await lc.advance(20 * HOUR);
    assert.equal(await revision(lc, 'badzone'), 1, 'no renewal while invalid');
    // Fixing the zone schedules the renewal again; it is overdue, so it happens now.
    crt = await lc.certificate('badzone');
    await lc.apply({ ...crt, spec: { ...crt.spec, renewal: { windows: [{ cron: '0 1 * * *', duration: '2h', timeZone: 'Europe/London' }] } } });
    await lc.settle();
    crt = await lc.certificate('badzone');
    assert.equal(condition(crt, 'RenewalConfigInvalid'), undefined);
    assert.ok(crt.status?.renewalTime);
  } finally {
    await lc.stop();
  }
});

test('a window only after expiry: renews at the renewBefore time anyway and counts the bypass', async () => {
  const lc = await startLifecycle({ options: { metricsListen: '127.0.0.1:0', healthListen: '127.0.0.1:0' } });
  try {
    await withLongCA(lc);
    // 24h certificate issued 2026-01-01T00:00Z; the only window opens on June 1st.
    // renewBefore 8h: base time 16:00 (the short-life default would be half, 12:00)
    await lc.apply(certificate('late', { dnsNames: ['late.example.test'], duration: '24h', renewBefore: '8h', renewal: { policy: 'EarliestWindow', windows: [{ cron: '0 0 1 6 *', duration: '1h' }] } }));
    await lc.settle();
    const crt = await lc.certificate('late');
    assert.equal(crt.status?.renewalTime, '2026-01-01T16:00:00Z');
    assert.equal(condition(crt, 'RenewalWindow')?.reason, 'ExpiryImminent');
    await lc.advance(16 * HOUR);
    assert.equal(await revision(lc, 'late'), 2);
    const res = await fetch(`http://${lc.running.servers!.metricsAddress}/metrics`);
    const text = await res.text();
    assert.match(text, /certmanager_certificate_renewal_bypassed_total\{reason="expiry_imminent"\} [1-9]/);
    assert.match(text, /certmanager_certificate_renewal_deferred_total/);
  } finally {
    await lc.stop();
  }
});
