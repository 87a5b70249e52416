// Seed 000's example flows, step by step, on the embedded store with a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, condition, type Lifecycle } from './harness.ts';
import { setApproval } from '../../src/cli/approve.ts';
import { triggerRenewal } from '../../src/cli/renew.ts';
import { certificateStatus } from '../../src/cli/status.ts';
import { startControllers } from '../../src/controllers/manager.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { Certificate, CertificateRequest, EventType } from '../../src/api/resources.ts';
import type { CoreEvent } from '../../src/runtime/events.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../src/api/types.ts';

const HOUR = 3_600_000;
const S = 1000;

async function pendingRequest(lc: Lifecycle, crtName: string): Promise<CertificateRequestObj | undefined> {
  const crs = await lc.requests();
  return crs.find((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === crtName && !r.status?.conditions?.some((c) => c.type === 'Approved' || c.type === 'Denied'));
}

async function decideNext(lc: Lifecycle, crtName: string, verb: 'approve' | 'deny') {
  const cr = await pendingRequest(lc, crtName);
  assert.ok(cr, `a pending request for ${crtName} exists`);
  await setApproval(lc.store, 'default', cr.metadata.name!, verb, 'Test', `${verb} by test`, lc.clock.now());
  await lc.settle();
  return cr;
}

async function status(lc: Lifecycle, name: string) {
  return (await lc.certificate(name)).status ?? {};
}

async function setup(): Promise<Lifecycle> {
  const lc = await startLifecycle({ options: { noAutoApprove: true } });
  // the CA chain needs approvals too
  await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
  await lc.apply(certificate('root', { secretName: 'ca-keypair', isCA: true, commonName: 'root', duration: '8760h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } }));
  await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'default' }, spec: { ca: { secretName: 'ca-keypair' } } });
  await lc.settle();
  await decideNext(lc, 'root', 'approve');
  assert.equal(condition(await lc.certificate('root'), 'Ready')?.status, 'True');
  await lc.apply(certificate('app', { dnsNames: ['app.example.test'], duration: '2160h' }));
  await lc.settle();
  return lc;
}

test('fails three times with 1h, 2h, 4h between attempts, then succeeds and clears the fields', async () => {
  const lc = await setup();
  try {
    const t0 = lc.clock.now().getTime();
    await decideNext(lc, 'app', 'deny');
    let s = await status(lc, 'app');
    assert.equal(s.issuanceAttempts, 1);
    assert.equal(s.lastFailureTime, new Date(t0).toISOString().replace('.000Z', 'Z'));
    assert.equal(condition(await lc.certificate('app'), 'Issuing')?.status, 'False');

    for (const [attempts, delay] of [[1, 1 * HOUR], [2, 2 * HOUR], [3, 4 * HOUR]] as const) {
      await lc.advance(delay - S);
      assert.equal(await pendingRequest(lc, 'app'), undefined, `no retry one second before ${delay / HOUR}h (attempt ${attempts})`);
      await lc.advance(S);
      if (attempts < 3) {
        await decideNext(lc, 'app', 'deny');
        s = await status(lc, 'app');
        assert.equal(s.issuanceAttempts, attempts + 1);
      }
    }
    await decideNext(lc, 'app', 'approve');
    const crt = await lc.certificate('app');
    assert.equal(condition(crt, 'Ready')?.status, 'True');
    assert.equal(crt.status?.issuanceAttempts, undefined);
    assert.equal(crt.status?.lastFailureTime, undefined);
    // renewal scheduled from the certificate: 2/3 of 90 days after issuance
    const issuedAt = t0 + 7 * HOUR;
    assert.equal(crt.status?.renewalTime, new Date(issuedAt + 60 * 24 * HOUR).toISOString().replace('.000Z', 'Z'));
    // each retry used a new request; the failed ones are gone
    const crs = (await lc.requests()).filter((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === 'app');
    assert.equal(crs.length, 1);
  } finally {
    await lc.stop();
  }
});

test('manual renew after failures succeeds at once and clears the fields', async () => {
  const lc = await setup();
  try {
    await decideNext(lc, 'app', 'deny');
    await lc.advance(HOUR);
    await decideNext(lc, 'app', 'deny');
    assert.equal((await status(lc, 'app')).issuanceAttempts, 2);
    await triggerRenewal(lc.store, 'default', 'app', lc.clock.now());
    await lc.settle();
    await decideNext(lc, 'app', 'approve');
    const s = await status(lc, 'app');
    assert.equal(s.issuanceAttempts, undefined);
    assert.equal(s.lastFailureTime, undefined);
    assert.equal(s.revision, 1);
  } finally {
    await lc.stop();
  }
});

test('manual renew that fails counts attempt 4 and waits 8h; status shows the next attempt', async () => {
  const lc = await setup();
  try {
    await decideNext(lc, 'app', 'deny');
    await lc.advance(HOUR);
    await decideNext(lc, 'app', 'deny');
    await lc.advance(2 * HOUR);
    await decideNext(lc, 'app', 'deny');
    assert.equal((await status(lc, 'app')).issuanceAttempts, 3);
    await triggerRenewal(lc.store, 'default', 'app', lc.clock.now());
    await lc.settle();
    await decideNext(lc, 'app', 'deny');
    const s = await status(lc, 'app');
    assert.equal(s.issuanceAttempts, 4);
    const failedAt = Date.parse(s.lastFailureTime!);
    const text = await certificateStatus(lc.store, 'default', 'app');
    assert.match(text, /Failed Issuance Attempts: 4/);
    assert.match(text, new RegExp(`Next Attempt: ${new Date(failedAt + 8 * HOUR).toISOString().replace('.000Z', 'Z')}`));
    await lc.advance(8 * HOUR - S);
    assert.equal(await pendingRequest(lc, 'app'), undefined);
    await lc.advance(S);
    assert.ok(await pendingRequest(lc, 'app'));
  } finally {
    await lc.stop();
  }
});

test('a restart resumes each failing Certificate\'s own schedule: none retried early', async () => {
  const lc = await setup();
  try {
    // 100 Certificates fail at different times over ten minutes.
    for (let i = 0; i < 100; i++) await lc.apply(certificate(`fail-${i}`, { dnsNames: [`f${i}.example.test`] }));
    await lc.settle();
    for (let i = 0; i < 100; i++) {
      if (i % 10 === 0) await lc.advance(60 * S);
      await decideNext(lc, `fail-${i}`, 'deny');
    }
    const before = (await lc.store.list<CertificateObj>(Certificate, { namespace: 'default' })).items.filter((c) => c.metadata.name!.startsWith('fail-'));
    assert.equal(before.filter((c) => c.status?.issuanceAttempts === 1).length, 100);

    // Restart: stop every controller, start new ones with empty caches on the same store.
    await lc.running.stop();
    lc.running = await startControllers({ store: lc.store, clock: lc.clock, logger: silentLogger, options: { noAutoApprove: true, metricsListen: '', healthListen: '' } });
    await lc.settle();
    const pendingNow = async () => (await lc.store.list<CertificateRequestObj>(CertificateRequest, { namespace: 'default' })).items
      .filter((r) => r.metadata.name!.startsWith('fail-') && !r.status?.conditions?.some((c) => c.type === 'Denied')).map((r) => r.metadata.annotations!['cert-manager.io/certificate-name']);
    assert.deepEqual(await pendingNow(), [], 'nothing retried at restart');
    // Step through the next hour minute by minute: each Certificate retries only once its own hour passed.
    for (let m = 0; m < 70; m++) {
      await lc.advance(60 * S);
      const now = lc.clock.now().getTime();
      for (const name of await pendingNow()) {
        const crt = before.find((c) => c.metadata.name === name)!;
        assert.ok(now >= Date.parse(crt.status!.lastFailureTime!) + HOUR, `${name} retried early`);
      }
    }
    assert.equal((await pendingNow()).length, 100, 'every Certificate retried after its hour');
  } finally {
    await lc.stop();
  }
});

test('upgrade: a failure recorded by a version without the counter waits 1h, after a restart too', async () => {
  const lc = await setup();
  try {
    await decideNext(lc, 'app', 'deny');
    await lc.advance(30 * 60 * S);
    // What an older controller left behind: lastFailureTime, no counter.
    const crt = await lc.certificate('app');
    const legacy = { ...crt.status };
    delete legacy.issuanceAttempts;
    await lc.store.updateStatus(Certificate, { ...crt, status: legacy });
    await lc.running.stop();
    lc.running = await startControllers({ store: lc.store, clock: lc.clock, logger: silentLogger, options: { noAutoApprove: true, metricsListen: '', healthListen: '' } });
    await lc.settle();
    assert.equal(await pendingRequest(lc, 'app'), undefined, 'no retry at restart');
    await lc.advance(30 * 60 * S - S);
    assert.equal(await pendingRequest(lc, 'app'), undefined, 'no retry before lastFailureTime + 1h');
    await lc.advance(S);
    assert.ok(await pendingRequest(lc, 'app'), 'retried at lastFailureTime + 1h');
    await decideNext(lc, 'app', 'deny');
    assert.equal((await status(lc, 'app')).issuanceAttempts, 1, 'counting starts again at 1');
  } finally {
    await lc.stop();
  }
});

test('a failure is announced by one Backoff Event with count 1, however often the trigger looks at it', async () => {
  const lc = await setup();
  try {
    await decideNext(lc, 'app', 'deny');
    // later looks during the same wait (a status write, a resync) decide the same backoff again
    await lc.advance(10 * 60_000);
    await lc.advance(10 * 60_000);
    const backoffs = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items
      .filter((e) => e.involvedObject.name === 'app' && e.reason === 'Backoff');
    assert.equal(backoffs.length, 1, backoffs.map((e) => e.message).join('\n'));
    assert.equal(backoffs[0].count, 1, `${backoffs[0].message} recorded ${backoffs[0].count} times`);
  } finally {
    await lc.stop();
  }
});

test('a restart during the wait does not announce the same failure again (the record of what was announced is in memory)', async () => {
  const lc = await setup();
  try {
    await decideNext(lc, 'app', 'deny');
    await lc.advance(10 * 60_000);
    for (let i = 0; i < 3; i++) {
      await lc.running.stop();
      lc.running = await startControllers({ store: lc.store, clock: lc.clock, logger: silentLogger, options: { noAutoApprove: true, metricsListen: '', healthListen: '' } });
      await lc.settle();
    }
    const backoffs = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items
      .filter((e) => e.involvedObject.name === 'app' && e.reason === 'Backoff');
    assert.equal(backoffs.length, 1, backoffs.map((e) => `${e.metadata.name} ${e.message}`).join('\n'));
    // the next failure is announced
    await lc.advance(HOUR);
    await decideNext(lc, 'app', 'deny');
    const after = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items
      .filter((e) => e.involvedObject.name === 'app' && e.reason === 'Backoff');
    // (the first one's Event has expired by now: Events live an hour)
    assert.deepEqual(after.map((e) => [e.count, /after 2 failed attempt/.test(e.message ?? '')]), [[1, true]], after.map((e) => e.message).join('\n'));
  } finally {
    await lc.stop();
  }
});
