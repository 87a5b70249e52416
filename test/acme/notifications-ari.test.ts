// Issue 16 end to end: the CA's "renew now" (an ARI window already in the past, RFC 9773 §4.2)
// reaches the operator. `certsmith server --notify-webhook URL` against Pebble 2.4 behind the
// fault proxy that serves /renewal-info/{certID} (test/rig/fault-proxy.ts): the first certificate
// gets a window that ended yesterday, its replacement one ten days ahead. The loopback receiver
// gets ARIReplaceNow once, the certificate is renewed, and the resolved notice arrives once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import { startServer, waitFor, type RunningServer } from '../e2e/harness.ts';
import { startNotificationReceiver, type NotificationReceiver } from '../e2e/notification-receiver.ts';
import { apply, manifest, stopKeeper, type Target } from './restart-rig.ts';
import { issuedByCertId } from './ari-issued.ts';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface CertObj {
  status?: { conditions?: { type: string; status: string }[]; revision?: number; acme?: { ari?: { certID?: string; suggestedWindow?: { start: string; end: string } } } };
}

let cts: ChallTestSrv;
let pebble: Pebble;
let proxy: FaultProxy;
let target: Target;
let receiver: NotificationReceiver;
let s: RunningServer;
let dir: string;
/** the CertIDs renewal-info was asked about */
const asked = new Set<string>();
/** names whose first certificate the CA asks to have replaced now (a window that ended yesterday) */
const replaceFirst = new Set<string>();

before(async () => {
  cts = await startChallTestSrv();
  const httpPort = await freePort();
  target = { cts, httpPort };
  pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort });
  proxy = await startFaultProxy({ upstream: pebble.directoryUrl, upstreamCaPem: pebble.caPem });
  proxy.setRenewalInfo((certID) => {
    asked.add(certID);
    const c = issuedByCertId(proxy).get(certID);
    const now = Date.now();
    return c && c.n === 0 && replaceFirst.has(c.dnsName)
      ? { suggestedWindow: { start: iso(now - 2 * DAY), end: iso(now - DAY) }, explanationURL: 'https://ca.example/incident-42', retryAfter: 3600 }
      : { suggestedWindow: { start: iso(now + 10 * DAY), end: iso(now + 11 * DAY) }, retryAfter: 3600 };
  });
  receiver = await startNotificationReceiver();
  dir = mkdtempSync(join(tmpdir(), 'certsmith-notify-ari-'));
  // the configuration a user writes: the ACME solver's listener, and where notifications go
  s = await startServer({
    dataDir: dir,
    args: ['--acme-http01-listen', `127.0.0.1:${httpPort}`, '--acme-http01-self-check-port', String(httpPort), '--acme-http01-solver-nameservers', cts.dnsServer, '--notify-webhook', receiver.url],
  });
});

after(async () => {
  await s?.stop();
  if (target) await stopKeeper(target);
  await receiver?.stop();
  await proxy?.stop();
  await Promise.all([pebble?.stop(), cts?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function cert(name: string): Promise<CertObj> {
  const r = await s.cli(['get', 'certificate', name, '-n', 'default', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as CertObj;
}

// the two Certificates are independent (their own names, the second its own issuer): run side by side
describe('ARI notifications', { concurrency: 2 }, () => {
  test('ARI asks for replacement now: ARIReplaceNow once, the certificate renewed, resolved once', { timeout: 120_000 }, async () => {
    const dnsName = `ari-notify-${crypto.randomBytes(3).toString('hex')}.example.test`;
    replaceFirst.add(dnsName);
    await apply(s, manifest('ari', proxy, [{ name: 'ari-notify', dnsName }]));

    const firing = await waitFor('ARIReplaceNow at the receiver', () => receiver.got.find((g) => g.name === 'ari-notify' && g.kind === 'ARIReplaceNow'), 60_000, 200);
    assert.equal(firing.state, 'firing');
    assert.equal(`${firing.namespace}/${firing.name}`, 'default/ari-notify');
    assert.equal(firing.text, '[certsmith] ARIReplaceNow: Certificate default/ari-notify: the ACME server asks for this certificate to be replaced now (https://ca.example/incident-42)');

    const renewed = await waitFor('the replacement with its own, future, window', async () => {
      const c = await cert('ari-notify');
      const ready = c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
      const ari = c.status?.acme?.ari;
      return ready && (c.status?.revision ?? 0) >= 2 && issuedByCertId(proxy).get(ari?.certID ?? '')?.n === 1 && Date.parse(ari?.suggestedWindow?.start ?? '') > Date.now() && c;
    }, 60_000, 300);
    assert.equal(renewed.status?.revision, 2, 'renewed once');
    await waitFor('the resolved notice', () => receiver.seen('ari-notify').includes('resolved ARIReplaceNow'), 30_000, 200);

    // a moment for anything that would announce again (status writes after the renewal, the ARI refetch)
    await new Promise((r) => setTimeout(r, 3000));
    console.log(`[ARI notify] receiver: ${receiver.seen('ari-notify').join(', ')}; renewal-info asked for ${asked.size} certificates`);
    assert.deepEqual(receiver.seen('ari-notify'), ['firing ARIReplaceNow', 'resolved ARIReplaceNow'], 'each once, and nothing else');
    const resolved = receiver.got.find((g) => g.name === 'ari-notify' && g.state === 'resolved')!;
    assert.equal(resolved.text, '[certsmith] resolved ARIReplaceNow: Certificate default/ari-notify');
    for (const g of receiver.got) assert.doesNotMatch(g.raw, /PRIVATE KEY/);
    assert.equal((await cert('ari-notify')).status?.revision, 2, 'the replacement is not replaced again');
  });

  // status.acme.ari about the replaced certificate, when no answer about the new one will come (ARI
  // turned off for the issuer): the ARI controller drops it, so ARIReplaceNow can resolve.
  test('the certificate ARI asked to replace is replaced while ARI is off: resolved once, though no ARI answer about the new one comes', {
    timeout: 120_000,
  }, async () => {
    const dnsName = `ari-stale-${crypto.randomBytes(3).toString('hex')}.example.test`;
    const issuer = (ari: 'ARI' | 'None') =>
      `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: ari-stale }\nspec:\n  acme:\n    server: ${proxy.directoryUrl}\n    caBundle: ${Buffer.from(proxy.caPem).toString('base64')}\n    renewalInformationSource: ${ari}\n    privateKeySecretRef: { name: ari-stale-account }\n    solvers: [ { http01: { ingress: {} } } ]`;
    // Disabled: the operator renews by hand (and still hears the CA's request)
    const certificate = `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ari-stale, namespace: default }\nspec: { secretName: ari-stale-tls, dnsNames: [${dnsName}], privateKey: { algorithm: ECDSA }, renewal: { policy: Disabled }, issuerRef: { name: ari-stale, kind: ClusterIssuer } }`;
    replaceFirst.add(dnsName);
    await apply(s, `${issuer('ARI')}\n---\n${certificate}`);
    await waitFor('ARIReplaceNow at the receiver', () => receiver.seen('ari-stale').includes('firing ARIReplaceNow'), 60_000, 200);

    // the operator turns ARI off for the issuer and replaces the certificate by hand
    await apply(s, issuer('None'));
    const renew = await s.cli(['renew', 'ari-stale', '-n', 'default']);
    assert.equal(renew.code, 0, renew.stderr);
    const renewed = await waitFor('revision 2', async () => {
      const c = await cert('ari-stale');
      return c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') && (c.status?.revision ?? 0) >= 2 && c;
    }, 60_000, 300);
    console.log(`[ARI stale] status.acme.ari after the renewal: ${JSON.stringify(renewed.status?.acme?.ari)}`);
    await waitFor('the resolved notice', () => receiver.seen('ari-stale').includes('resolved ARIReplaceNow'), 5_000, 200);
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`[ARI stale] receiver: ${receiver.seen('ari-stale').join(', ')}`);
    assert.deepEqual(receiver.seen('ari-stale'), ['firing ARIReplaceNow', 'resolved ARIReplaceNow']);
  });
});
