// Notifications (issue 16) on the embedded store with a fake clock: a loopback receiver gets each
// condition once when it starts and once when it clears; a receiver that is down delays nothing
// and gets the notices once it is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startLifecycle, certificate, condition, type Lifecycle } from './harness.ts';
import { setApproval } from '../../src/cli/approve.ts';
import { freePort } from '../rig/ports.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../src/api/types.ts';

const HOUR = 3_600_000;

interface Received { kind: string; state: string; name: string; text: string }

async function receiver(port = 0): Promise<{ url: string; port: number; got: Received[]; stop(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const b = JSON.parse(body) as { text: string; certsmith: { kind: string; state: string; certificate: { name: string } } };
      got.push({ kind: b.certsmith.kind, state: b.certsmith.state, name: b.certsmith.certificate.name, text: b.text });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const actual = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${actual}/hook`, port: actual, got, stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

async function pendingRequest(lc: Lifecycle, crtName: string): Promise<CertificateRequestObj | undefined> {
  return (await lc.requests()).find((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === crtName && !r.status?.conditions?.some((c) => c.type === 'Approved' || c.type === 'Denied'));
}

async function decide(lc: Lifecycle, crtName: string, verb: 'approve' | 'deny') {
  const cr = await pendingRequest(lc, crtName);
  assert.ok(cr, `a pending request for ${crtName} at ${lc.clock.now().toISOString()}`);
  await setApproval(lc.store, 'default', cr.metadata.name!, verb, 'Test', `${verb} by test`, lc.clock.now());
  await lc.settle();
}

async function setup(webhookUrl: string): Promise<Lifecycle> {
  const lc = await startLifecycle({
    options: { noAutoApprove: true, notifications: { webhookUrl, failures: 3, renewalGraceMs: HOUR, expiryThresholdMs: 6 * HOUR } },
  });
  await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
  await lc.apply(certificate('app', { dnsNames: ['app.example.test'], duration: '24h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } }));
  await lc.settle();
  await decide(lc, 'app', 'approve');
  assert.equal(condition(await lc.certificate('app'), 'Ready')?.status, 'True');
  return lc;
}

/** Renewal at 12 h (half of a short-lived certificate's life) is denied at 12 h, 13 h and 15 h, approved at 19 h. */
async function failThreeTimesThenRenew(lc: Lifecycle, during: (hour: number) => Promise<void> = async () => {}) {
  await lc.advance(12 * HOUR);
  await decide(lc, 'app', 'deny');
  await during(12);
  await lc.advance(1 * HOUR);
  await decide(lc, 'app', 'deny');
  await during(13);
  await lc.advance(2 * HOUR);
  await decide(lc, 'app', 'deny');
  await during(15);
  await lc.advance(3 * HOUR);
  await during(18);
  await lc.advance(1 * HOUR);
  await decide(lc, 'app', 'approve');
  await during(19);
}

test('each condition reaches the receiver once when it starts and once when it clears', async () => {
  const r = await receiver();
  const lc = await setup(r.url);
  try {
    const seen: Record<number, string[]> = {};
    await failThreeTimesThenRenew(lc, async (hour) => {
      seen[hour] = r.got.map((g) => `${g.state} ${g.kind}`);
    });
    assert.deepEqual(seen[12], [], 'one failure, within the grace period: nothing');
    assert.deepEqual(seen[13], ['firing RenewalOverdue'], 'an hour past the renewal time');
    assert.deepEqual(seen[15].slice(1), ['firing IssuanceFailing'], 'the third failure in a row');
    assert.deepEqual(seen[18].slice(2), ['firing ExpiringSoon'], '6 h before expiry');
    assert.deepEqual(seen[19].slice(3), ['resolved IssuanceFailing', 'resolved RenewalOverdue', 'resolved ExpiringSoon'], 'all clear once renewed');
    assert.equal(condition(await lc.certificate('app'), 'Ready')?.status, 'True');
    assert.ok(r.got.every((g) => g.name === 'app'));
    assert.match(r.got[1].text, /^\[certsmith\] IssuanceFailing: Certificate default\/app: issuance failed 3 times in a row/);
    // a day later, nothing new: each notice was sent once
    await lc.advance(5 * HOUR);
    assert.equal(r.got.length, 6);
  } finally {
    await lc.stop();
    await r.stop();
  }
});

test('a receiver that is down delays no issuance; what is firing arrives once it is back, each notice once', async () => {
  const port = await freePort();
  const lc = await setup(`http://127.0.0.1:${port}/hook`);
  let r: Awaited<ReturnType<typeof receiver>> | undefined;
  try {
    await failThreeTimesThenRenew(lc, async (hour) => {
      if (hour !== 15) return;
      // down since the first notice was due (13 h); back now, with two conditions firing
      assert.equal(r, undefined);
      r = await receiver(port);
      await lc.advance(15 * 60_000); // within the retry backoff's 10-minute cap
      assert.deepEqual(r.got.map((g) => `${g.state} ${g.kind}`).sort(), ['firing IssuanceFailing', 'firing RenewalOverdue']);
    });
    // issuance went on at the same times as with a receiver: the renewal at 19 h is Ready
    const crt = await lc.certificate('app');
    assert.equal(condition(crt, 'Ready')?.status, 'True');
    assert.equal(crt.status?.revision, 2);
    assert.deepEqual(r!.got.map((g) => `${g.state} ${g.kind}`).slice(2), ['firing ExpiringSoon', 'resolved IssuanceFailing', 'resolved RenewalOverdue', 'resolved ExpiringSoon']);
  } finally {
    await lc.stop();
    await r?.stop();
  }
});
