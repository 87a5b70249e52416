// Issue 20 end to end: the real `certsmith server`, SIGKILLed at the worst moments of an ACME
// issuance, and a Pebble that forgets everything, behind the fault proxy (killed while the CA
// validates: restart-validation.test.ts). Every certificate must
// end Ready with no issuance attempt counted and no backoff; each case prints newOrders per
// certificate and the orders left at the CA by state.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { accountClient, apply, assertNoAttemptCounted, events, issuerStatus, killAndRestart, manifest, report, startCertsmith, stopKeeper, waitAllReady, type Target } from './restart-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const ACCEPT = { method: 'POST', path: /\/chalZ\//, withPayload: true };
const NEW_ORDER = { method: 'POST', path: /\/order-plz$/ };

describe('ACME issuance across certsmith SIGKILLs and CA faults', () => {
  let cts: ChallTestSrv;
  let fast: Pebble;
  let fastProxy: FaultProxy;
  let target: Target;
  const dirs: string[] = [];
  const servers: RunningServer[] = [];
  const extraPebbles: Pebble[] = [];

  before(async () => {
    cts = await startChallTestSrv();
    const httpPort = await freePort();
    target = { cts, httpPort };
    fast = await startPebble({ dnsServer: cts.dnsServer, httpPort });
    fastProxy = await startFaultProxy({ upstream: fast.directoryUrl, upstreamCaPem: fast.caPem });
  });
  after(async () => {
    for (const s of servers) s.kill();
    await Promise.all(servers.map((s) => s.stop()));
    if (target) await stopKeeper(target);
    await fastProxy?.stop();
    await Promise.all([fast?.stop(), ...extraPebbles.map((p) => p.stop()), cts?.stop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function server(): Promise<RunningServer> {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-restart-'));
    dirs.push(dir);
    const s = await startCertsmith(target, dir);
    servers.push(s);
    return s;
  }
  /** Each case's server holds the one HTTP-01 port Pebble validates against: stopped before the next case starts. */
  async function done(s: RunningServer): Promise<void> {
    servers.splice(servers.indexOf(s), 1);
    if (process.env.CERTSMITH_TEST_DEBUG) console.log(s.output());
    await s.stop();
  }
  async function restart(s: RunningServer): Promise<RunningServer> {
    servers.splice(servers.indexOf(s), 1);
    const next = await killAndRestart(target, s);
    servers.push(next);
    return next;
  }

  test('(2) the answer to a challenge POST is lost and certsmith is killed: the restart reads the challenge instead of failing it', async () => {
    let s = await server();
    const dnsName = `lost-accept-${uniq()}.example.test`;
    const fault = fastProxy.hold(ACCEPT);
    await apply(s, manifest('lost-accept', fastProxy, [{ name: 'lost-accept', dnsName }]));
    await fault.hit;
    // The CA validates (Pebble without VA sleep: at once) against the responder, still up; the answer never arrives, then the kill.
    await new Promise((r) => setTimeout(r, 500));
    s = await restart(s);
    fault.release();
    const certs = await waitAllReady(s, ['lost-accept'], 30_000);
    assertNoAttemptCounted(certs);
    const r = await report('challenge answer lost + kill', s, fastProxy, 'lost-accept', [dnsName]);
    assert.equal(r.mean, 1, 'one newOrder');
    assert.equal(r.atCA.invalid ?? 0, 0, 'no order left invalid');
    const refused = fastProxy.exchanges.filter((x) => ACCEPT.path.test(x.path) && x.payload && x.status === 400);
    console.log(`[challenge answer lost + kill] challenge POSTs refused by the CA after the restart: ${refused.map((x) => (JSON.parse(x.body) as { detail?: string }).detail).join(' | ') || 'none'}`);
    await done(s);
  });

  test('(3) the answer to newOrder is lost and certsmith is killed: the restart finds the order in the account\'s orders list', async () => {
    let s = await server();
    const dnsName = `lost-order-${uniq()}.example.test`;
    const fault = fastProxy.hold(NEW_ORDER);
    await apply(s, manifest('lost-order', fastProxy, [{ name: 'lost-order', dnsName }]));
    await fault.hit;
    s = await restart(s);
    fault.release();
    const certs = await waitAllReady(s, ['lost-order'], 30_000);
    assertNoAttemptCounted(certs);
    const r = await report('newOrder answer lost + kill', s, fastProxy, 'lost-order', [dnsName]);
    const ev = await events(s);
    // Pebble lists an account's orders: the lost one is normally found and used (OrderFound). When
    // the list does not show it (a CA without the list, such as Let's Encrypt; Pebble's paging now
    // and then) it costs one wasted order, said in an OrderLost Event.
    const found = ev.filter((e) => e.reason === 'OrderFound').length;
    const lost = ev.filter((e) => e.reason === 'OrderLost').length;
    console.log(`[newOrder answer lost + kill] OrderFound=${found} OrderLost=${lost}`);
    assert.equal(found + lost, 1, 'one Event says what became of the lost order');
    assert.equal(r.mean, found ? 1 : 2, found ? 'no second newOrder' : 'the lost order and its replacement');
    assert.equal(r.atCA.invalid ?? 0, 0);
    assert.equal(r.atCA.pending ?? 0, found ? 0 : 1, 'only an order not found is left unused at the CA');
    await done(s);
  });

  // Pebble answers 404 (about:blank) for an order, authorization or challenge URL it does not know:
  // what a CA that restarted and lost its state says when the account URL happens to be the same.
  for (const [what, match] of [
    ['an order', { method: 'POST', path: /\/my-order\// }],
    ['a challenge', ACCEPT],
  ] as const) {
    test(`the CA no longer knows ${what} (404): a new Order follows, and the certificate is Ready with no attempt counted`, async () => {
      const s = await server();
      const name = `gone-${what.split(' ')[1]}`;
      const dnsName = `${name}-${uniq()}.example.test`;
      const fault = fastProxy.answer(match, { status: 404, type: 'about:blank', detail: '' });
      await apply(s, manifest(name, fastProxy, [{ name, dnsName }]));
      await fault.hit;
      assertNoAttemptCounted(await waitAllReady(s, [name], 30_000));
      const r = await report(`${what} unknown to the CA`, s, fastProxy, name, [dnsName]);
      assert.equal(r.mean, 2, 'the forgotten order and its replacement');
      const ev = (await events(s)).filter((e) => e.reason === 'NotFoundAtCA');
      assert.ok(ev.length >= 1, 'an Event says the CA did not know it');
      console.log(`[${what} unknown to the CA] ${ev[0].involvedObject?.kind}: ${ev[0].message}`);
      await done(s);
    });
  }

  test('ACME server unreachable: the Order says so in an Event, and issuance resumes when it is back', async () => {
    const s = await server();
    const dnsName = `unreachable-${uniq()}.example.test`;
    await apply(s, manifest('unreachable', fastProxy, []));
    // the account first, then the CA goes away
    const deadline = Date.now() + 30_000;
    while (!fastProxy.exchanges.some((x) => /\/sign-me-up$/.test(x.path) && x.status < 300 && x.body.includes('valid'))) {
      assert.ok(Date.now() < deadline, 'account registered');
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    fastProxy.setUpstream(`https://127.0.0.1:${await freePort()}`, fast.caPem);
    await apply(s, manifest('unreachable', fastProxy, [{ name: 'unreachable', dnsName }]));
    const seen = await (async () => {
      for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 300))) {
        const ev = (await events(s)).filter((e) => e.reason === 'ACMEServerUnreachable');
        if (ev.length) return ev;
      }
      return [];
    })();
    fastProxy.setUpstream(fast.directoryUrl, fast.caPem);
    assert.ok(seen.length >= 1, 'an ACMEServerUnreachable Event');
    console.log(`[ACME server unreachable] ${seen[0].involvedObject?.kind} ${seen[0].involvedObject?.name}: ${seen[0].message}`);
    // the workqueue's ACME backoff starts at 5 s
    assertNoAttemptCounted(await waitAllReady(s, ['unreachable'], 60_000));
    await done(s);
  });

  test('a deactivated account: the Issuer says so, gets a new key and account, and the certificate is issued without counting an attempt', async () => {
    const s = await server();
    const dnsName = `deactivated-${uniq()}.example.test`;
    await apply(s, manifest('deactivated', fastProxy, []));
    const deadline = Date.now() + 30_000;
    let first: string | undefined;
    while (!(first = (await issuerStatus(s, 'deactivated'))?.acme?.uri)) {
      assert.ok(Date.now() < deadline, 'issuer registered');
      await new Promise((r) => setTimeout(r, 200));
    }
    const client = await accountClient(s, fastProxy, 'deactivated');
    assert.equal((await client.deactivateAccount()).status, 'deactivated');
    client.close();
    await apply(s, manifest('deactivated', fastProxy, [{ name: 'deactivated', dnsName }]));
    assertNoAttemptCounted(await waitAllReady(s, ['deactivated'], 60_000));
    const now = (await issuerStatus(s, 'deactivated'))?.acme?.uri;
    assert.ok(now && now !== first, `a new account (${first} → ${now})`);
    const ev = (await events(s)).filter((e) => e.involvedObject?.name === 'deactivated' && e.involvedObject.kind === 'ClusterIssuer');
    console.log(`[deactivated account] Issuer events: ${ev.map((e) => e.reason).join(', ')}`);
    assert.ok(ev.some((e) => e.reason === 'AccountDeactivated'), 'the Issuer said why');
    assert.ok(ev.some((e) => e.reason === 'AccountKeyReplaced'), 'and that it replaced the key');
    await done(s);
  });

  test('Pebble restarted mid-batch (accounts and orders forgotten): the Issuer says so, registers again, and every certificate is Ready within 60 s', async () => {
    const s = await server();
    const certs = Array.from({ length: 8 }, (_, i) => ({ name: `forget-${i}`, dnsName: `forget-${i}-${uniq()}.example.test` }));
    // The third newOrder is where the CA "restarts": its answer comes from the old Pebble, every later request meets the new one.
    const fault = fastProxy.hold({ ...NEW_ORDER, nth: 3 });
    await apply(s, manifest('forget', fastProxy, certs));
    await fault.hit;
    const replacement = await startPebble({ dnsServer: cts.dnsServer, httpPort: target.httpPort });
    extraPebbles.push(replacement);
    fastProxy.setUpstream(replacement.directoryUrl, replacement.caPem);
    const backAt = Date.now();
    fault.release();
    const ready = await waitAllReady(s, certs.map((c) => c.name), 60_000);
    console.log(`[Pebble restarted mid-batch] all ${certs.length} Ready ${Date.now() - backAt} ms after the new Pebble was up`);
    assertNoAttemptCounted(ready);
    const ev = await events(s);
    const onIssuer = ev.filter((e) => e.involvedObject?.kind === 'ClusterIssuer' && e.involvedObject.name === 'forget' && e.reason === 'AccountDoesNotExist');
    assert.ok(onIssuer.length >= 1, `the Issuer said why it was not Ready: ${JSON.stringify(ev.filter((e) => e.involvedObject?.name === 'forget').map((e) => e.reason))}`);
    await report('Pebble restarted mid-batch', s, fastProxy, 'forget', certs.map((c) => c.dnsName));
    await done(s);
  });
});
