// Issue 16 end to end: ARI (RFC 9773) with the real `certsmith server` against Pebble 2.4, which
// has no ARI, behind the fault proxy that adds renewalInfo to the directory and answers
// /renewal-info/{certID} with windows this test chooses per certificate. Real time throughout,
// so only what needs no waiting is checked here; hour-scale behaviour (renewal at a point in the
// window, Retry-After, windows and Disabled) is in the fake-clock tables of
// src/controllers/certificates/renewal/ari.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy, type RenewalInfoAnswer } from '../rig/fault-proxy.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { issuedByCertId } from './ari-issued.ts';
import { baseRenewalTime } from '../../src/shared/renewal/renewal-time.ts';
import { apply, events, issuerStatus, killAndRestart, manifest, startCertsmith, stopKeeper, type Target } from './restart-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface CertObj {
  metadata: { name: string };
  status?: {
    conditions?: { type: string; status: string }[]; renewalTime?: string; notBefore?: string; notAfter?: string; revision?: number;
    acme?: { ari?: { certID?: string; suggestedWindow?: { start: string; end: string }; explanationURL?: string; lastChecked?: string; nextCheck?: string; lastError?: string } };
  };
}

describe('ARI against Pebble behind the ARI proxy', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let proxy: FaultProxy;
  let target: Target;
  let s: RunningServer;
  let dir: string;
  /** dnsName → what renewal-info answers for the n-th certificate (0-based) issued for it */
  const policy = new Map<string, (n: number) => RenewalInfoAnswer | undefined>();

  /** The certificates Pebble handed out, by CertID: which name, and the how-manyth for that name. */
  const issued = () => issuedByCertId(proxy);

  before(async () => {
    cts = await startChallTestSrv();
    const httpPort = await freePort();
    target = { cts, httpPort };
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort });
    proxy = await startFaultProxy({ upstream: pebble.directoryUrl, upstreamCaPem: pebble.caPem });
    proxy.setProfiles({ classic: 'The same profile you have been getting', shortlived: 'Six-day certificates' });
    proxy.setRenewalInfo((certID) => {
      const c = issued().get(certID);
      const fn = c && policy.get(c.dnsName);
      return fn ? fn(c.n) : undefined;
    });
    dir = mkdtempSync(join(tmpdir(), 'certsmith-ari-'));
    s = await startCertsmith(target, dir);
  });
  after(async () => {
    s?.kill();
    await s?.stop();
    if (target) await stopKeeper(target);
    await proxy?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  async function cert(name: string): Promise<CertObj> {
    const r = await s.cli(['get', 'certificate', name, '-n', 'default', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as CertObj;
  }
  async function waitFor(name: string, what: string, ok: (c: CertObj) => boolean, timeoutMs = 45_000): Promise<CertObj> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await cert(name);
      if (ok(c)) return c;
      if (Date.now() > deadline) assert.fail(`${name}: ${what} not reached in ${timeoutMs} ms: ${JSON.stringify(c.status).slice(0, 3000)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  const ready = (c: CertObj) => !!c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
  const riGets = (certID: string) => proxy.exchanges.filter((x) => x.method === 'GET' && x.path === `/renewal-info/${certID}`).length;
  const newOrderPayloads = (dnsName: string) => proxy.exchanges
    .filter((x) => x.method === 'POST' && /\/order-plz$/.test(x.path) && x.payload?.includes(dnsName))
    .map((x) => ({ status: x.status, body: JSON.parse(x.payload!) as { replaces?: string } }));

  test('after issuance the window is fetched into status.acme.ari, the renewal time is inside it, and a restart does not fetch again', async () => {
    const dnsName = `ari-window-${uniq()}.example.test`;
    // past the minimum interval between issuances (10% of Pebble's 5-year validity, about 183 days)
    const start = Date.now() + 200 * DAY;
    policy.set(dnsName, () => ({ suggestedWindow: { start: iso(start), end: iso(start + 2 * DAY) }, explanationURL: 'https://ca.example/why', retryAfter: 3600 }));
    await apply(s, manifest('ari', proxy, [{ name: 'ari-window', dnsName }]));
    const c = await waitFor('ari-window', 'ARI window stored', (x) => ready(x) && !!x.status?.acme?.ari?.suggestedWindow);
    const ari = c.status!.acme!.ari!;
    assert.equal(ari.explanationURL, 'https://ca.example/why');
    assert.equal(Date.parse(ari.nextCheck!) - Date.parse(ari.lastChecked!), 3_600_000, 'Retry-After 1h');
    const c2 = await waitFor('ari-window', 'renewal time inside the window', (x) => Date.parse(x.status?.renewalTime ?? '') >= start - 1000 && Date.parse(x.status?.renewalTime ?? '') < start + 2 * DAY);
    const rt = Date.parse(c2.status!.renewalTime!);
    console.log(`[ARI window] certID=${ari.certID} window=${ari.suggestedWindow!.start}..${ari.suggestedWindow!.end} renewalTime=${c2.status!.renewalTime} nextCheck=${ari.nextCheck}`);
    assert.ok(rt >= Date.parse(ari.suggestedWindow!.start) && rt < Date.parse(ari.suggestedWindow!.end), 'renewalTime inside the suggested window');
    assert.equal(riGets(ari.certID!), 1);
    const out = await s.cli(['status', 'certificate', 'ari-window', '-n', 'default']);
    assert.match(out.stdout, /ARI/);
    console.log(`[ARI window] certsmith status certificate:\n${out.stdout.split('\n').filter((l) => /Renewal|ARI|Suggested|Explanation|Next check/i.test(l)).join('\n')}`);

    s = await killAndRestart(target, s);
    await new Promise((r) => setTimeout(r, 4000));
    const after = await cert('ari-window');
    assert.equal(riGets(ari.certID!), 1, 'no refetch after the restart: nextCheck is an hour away');
    assert.equal(after.status?.renewalTime, c2.status!.renewalTime, 'the same renewal time after the restart');
  });

  test('a window already in the past renews at once, with replaces on the Order and in newOrder', async () => {
    const dnsName = `ari-now-${uniq()}.example.test`;
    const future = Date.now() + 10 * DAY;
    policy.set(dnsName, (n) => n === 0
      ? { suggestedWindow: { start: iso(Date.now() - 2 * DAY), end: iso(Date.now() - DAY) }, explanationURL: 'https://ca.example/revocation', retryAfter: 3600 }
      : { suggestedWindow: { start: iso(future), end: iso(future + DAY) }, retryAfter: 3600 });
    await apply(s, manifest('ari', proxy, [{ name: 'ari-now', dnsName }]));
    const c = await waitFor('ari-now', 'second certificate with a future window', (x) => ready(x) && (x.status?.revision ?? 0) >= 2 && !!x.status?.acme?.ari?.suggestedWindow && Date.parse(x.status.acme.ari.suggestedWindow.start) > Date.now());
    const orders = newOrderPayloads(dnsName);
    const firstId = [...issued()].find(([, v]) => v.dnsName === dnsName && v.n === 0)![0];
    console.log(`[ARI window in the past] newOrders=${orders.length} replaces=${orders.map((o) => o.body.replaces ?? '-').join(',')} revision=${c.status?.revision}`);
    assert.equal(orders.length, 2);
    assert.equal(orders[0].body.replaces, undefined);
    assert.equal(orders[1].body.replaces, firstId, 'the renewal names the certificate it replaces');
    const o = await s.cli(['get', 'orders', '-n', 'default', '-o', 'json']);
    const withReplaces = (JSON.parse(o.stdout) as { items: { spec: { replaces?: string; dnsNames?: string[] } }[] }).items.filter((x) => x.spec.dnsNames?.includes(dnsName) && x.spec.replaces);
    assert.equal(withReplaces.length, 1);
    assert.equal(withReplaces[0].spec.replaces, firstId, 'Order.spec.replaces');
  });

  test('409 alreadyReplaced: the renewal orders again without replaces', async () => {
    const dnsName = `ari-replaced-${uniq()}.example.test`;
    const future = Date.now() + 10 * DAY;
    policy.set(dnsName, (n) => n === 0
      ? { suggestedWindow: { start: iso(Date.now() - 2 * DAY), end: iso(Date.now() - DAY) }, retryAfter: 3600 }
      : { suggestedWindow: { start: iso(future), end: iso(future + DAY) }, retryAfter: 3600 });
    // the first newOrder carrying replaces is refused
    const refused = proxy.answer({ method: 'POST', path: /\/order-plz$/, nth: 2 }, { status: 409, type: 'alreadyReplaced', detail: 'the certificate was already replaced by another order' });
    await apply(s, manifest('ari', proxy, [{ name: 'ari-replaced', dnsName }]));
    await refused.hit;
    await waitFor('ari-replaced', 'renewed', (x) => ready(x) && (x.status?.revision ?? 0) >= 2);
    const orders = newOrderPayloads(dnsName);
    console.log(`[alreadyReplaced] newOrders=${orders.map((o) => `${o.status}${o.body.replaces ? ' replaces' : ''}`).join(', ')}`);
    assert.deepEqual(orders.map((o) => [o.status, !!o.body.replaces]), [[201, false], [409, true], [201, false]]);
    const ev = (await events(s)).filter((e) => e.reason === 'ReplacesDropped');
    assert.equal(ev.length, 1);
  });

  test('ARI down: status.acme.ari says why, and the ordinary renewal time applies', async () => {
    const dnsName = `ari-down-${uniq()}.example.test`;
    policy.set(dnsName, () => ({ status: 503, retryAfter: 120 }));
    await apply(s, manifest('ari', proxy, [{ name: 'ari-down', dnsName }]));
    const c = await waitFor('ari-down', 'lastError stored', (x) => ready(x) && !!x.status?.acme?.ari?.lastError);
    const ari = c.status!.acme!.ari!;
    assert.equal(ari.suggestedWindow, undefined);
    assert.ok(Math.abs(Date.parse(ari.nextCheck!) - Date.now() - 120_000) < 30_000, 'Retry-After 120 s');
    const ordinary = baseRenewalTime(new Date(c.status!.notBefore!), new Date(c.status!.notAfter!));
    console.log(`[ARI down] lastError=${ari.lastError} nextCheck=${ari.nextCheck} renewalTime=${c.status!.renewalTime}`);
    assert.equal(Date.parse(c.status!.renewalTime!), ordinary.getTime());
  });

  const b64 = (x: string) => Buffer.from(x).toString('base64');
  const profileIssuer = (name: string, profile: string) =>
    `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: ${name} }\nspec:\n  acme:\n    server: ${proxy.directoryUrl}\n    caBundle: ${b64(proxy.caPem)}\n    profile: ${profile}\n    privateKeySecretRef: { name: ${name}-account }\n    solvers: [ { http01: { ingress: {} } } ]`;
  const certFor = (name: string, issuer: string, dnsName: string) =>
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default }\nspec: { secretName: ${name}-tls, dnsNames: [${dnsName}], privateKey: { algorithm: ECDSA }, issuerRef: { name: ${issuer}, kind: ClusterIssuer } }`;

  test('profiles: one the directory does not offer makes the Issuer Ready=False naming the offered ones; an offered one is sent and recorded on the Order', async () => {
    await apply(s, profileIssuer('profile-bad', 'tlsserver'));
    const deadline = Date.now() + 30_000;
    let cond;
    while (!(cond = (await issuerStatus(s, 'profile-bad'))?.conditions?.find((c) => c.type === 'Ready')) || cond.status !== 'False') {
      assert.ok(Date.now() < deadline, 'issuer not Ready=False');
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`[profiles] Ready=${cond.status} ${cond.reason}: ${cond.message}`);
    assert.equal(cond.reason, 'InvalidProfile');
    assert.match(cond.message ?? '', /classic \(The same profile.*shortlived \(Six-day/);

    const dnsName = `profile-${uniq()}.example.test`;
    await apply(s, `${profileIssuer('profile-good', 'shortlived')}\n---\n${certFor('profile-good', 'profile-good', dnsName)}`);
    await waitFor('profile-good', 'Ready', ready);
    const sent = newOrderPayloads(dnsName).map((o) => (o.body as { profile?: string }).profile);
    assert.deepEqual(sent, ['shortlived']);
    const o = await s.cli(['get', 'orders', '-n', 'default', '-o', 'json']);
    const mine = (JSON.parse(o.stdout) as { items: { spec: { profile?: string; dnsNames?: string[] } }[] }).items.filter((x) => x.spec.dnsNames?.includes(dnsName));
    assert.deepEqual(mine.map((x) => x.spec.profile), ['shortlived']);
    const ev = (await events(s)).filter((e) => e.reason === 'Profile');
    assert.ok(ev.some((e) => /with profile "shortlived"/.test(e.message ?? '')));
    // and `certsmith status certificate` shows it with the Issuer
    const st = await s.cli(['status', 'certificate', 'profile-good', '-n', 'default']);
    assert.match(st.stdout, /^Issuer:\n {2}Name: profile-good\n {2}Kind: ClusterIssuer\n {2}Type: acme\n {2}Profile: shortlived$/m, st.stdout);
  });

  test('profiles: invalidProfile from newOrder is explained on the Order with the offered profiles', async () => {
    const dnsName = `profile-refused-${uniq()}.example.test`;
    const refused = proxy.answer({ method: 'POST', path: /\/order-plz$/ }, { status: 400, type: 'invalidProfile', detail: 'profile "shortlived" is not available for this account' });
    await apply(s, certFor('profile-refused', 'profile-good', dnsName));
    await refused.hit;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const o = await s.cli(['get', 'orders', '-n', 'default', '-o', 'json']);
      const mine = (JSON.parse(o.stdout) as { items: { spec: { dnsNames?: string[] }; status?: { state?: string; reason?: string } }[] }).items.filter((x) => x.spec.dnsNames?.includes(dnsName));
      const failed = mine.find((x) => x.status?.state === 'errored');
      if (failed) {
        console.log(`[invalidProfile] Order ${failed.status!.state}: ${failed.status!.reason}`);
        assert.match(failed.status!.reason!, /invalidProfile.*it offers: classic .*shortlived .*Set spec\.acme\.profile on issuer "profile-good"/);
        break;
      }
      assert.ok(Date.now() < deadline, `Order not errored: ${JSON.stringify(mine)} ${JSON.stringify(proxy.exchanges.filter((x) => /order-plz/.test(x.path)).slice(-3))}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  });

  test('429 rateLimited: the Order, the request and an Event name the limit and the Retry-After time, and no newOrder is sent before it', async () => {
    const dnsName = `limited-${uniq()}.example.test`;
    const limited = proxy.answer({ method: 'POST', path: /\/order-plz$/ }, { status: 429, type: 'rateLimited', detail: 'too many new orders (10) from this account in the last 3 hours', retryAfter: 600 });
    await apply(s, manifest('ari', proxy, [{ name: 'limited', dnsName }]));
    const hit = await limited.hit;
    const hitAt = Date.now();
    const deadline = hitAt + 30_000;
    let ev;
    while (!(ev = (await events(s)).find((e) => e.reason === 'RateLimited' && e.message?.includes('too many new orders')))) {
      assert.ok(Date.now() < deadline, 'no RateLimited event');
      await new Promise((r) => setTimeout(r, 300));
    }
    console.log(`[429] event: ${ev.message}`);
    assert.match(ev.message ?? '', /until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: too many new orders/);
    const o = await s.cli(['get', 'orders', '-n', 'default', '-o', 'json']);
    const mine = (JSON.parse(o.stdout) as { items: { metadata: { annotations?: Record<string, string> }; spec: { dnsNames?: string[] }; status?: { reason?: string } }[] }).items.filter((x) => x.spec.dnsNames?.includes(dnsName));
    assert.equal(mine.length, 1);
    const until = Date.parse(mine[0].metadata.annotations!['acme.certsmith.io/rate-limited-until']);
    assert.ok(Math.abs(until - hitAt - 600_000) < 30_000, 'until = Retry-After');
    assert.match(mine[0].status?.reason ?? '', /Rate limited by the ACME server until .*too many new orders/);
    // the workqueue's ACME retry would have sent newOrder again within 5-10 s
    await new Promise((r) => setTimeout(r, 8000));
    const sent = newOrderPayloads(dnsName);
    assert.deepEqual(sent.map((x) => x.status), [hit.status], 'no newOrder after the 429');
    const cr = await s.cli(['get', 'certificaterequests', '-n', 'default', '-o', 'json']);
    const req = (JSON.parse(cr.stdout) as { items: { metadata: { name: string }; status?: { conditions?: { type: string; message?: string }[] } }[] }).items.find((x) => x.metadata.name.startsWith('limited-'));
    const msg = req?.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    console.log(`[429] CertificateRequest Ready: ${msg}`);
    assert.match(msg, /Rate limited by the ACME server until/);
  });
});
