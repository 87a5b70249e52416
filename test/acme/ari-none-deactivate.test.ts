// Issue 16: an ACME Issuer with `renewalInformationSource: None` never asks the CA for renewal
// information (cert-manager's field; ARI is on by default), and `certsmith acme
// deactivate-account` deactivates the Issuer's account at the CA (RFC 8555 §7.3.6), so the CA
// refuses its key afterwards. Real certsmith server, Pebble behind the fault proxy (which serves
// renewalInfo and counts its requests).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Pebble } from '../rig/index.ts';
import type { FaultProxy } from '../rig/fault-proxy.ts';
import { waitFor, type RunningServer } from '../e2e/harness.ts';
import { AcmeClient } from '../../src/acme/client.ts';
import { apply, startProxiedRig, waitAllReady, type ProxiedRig } from './restart-rig.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
let rig: ProxiedRig;
let pebble: Pebble;
let proxy: FaultProxy;
let s: RunningServer;

before(async () => {
  rig = await startProxiedRig('ari-none', (p) => p.setRenewalInfo(() => ({
    suggestedWindow: { start: new Date(Date.now() + 200 * 86400e3).toISOString(), end: new Date(Date.now() + 201 * 86400e3).toISOString() }, retryAfter: 3600,
  })));
  ({ pebble, proxy, server: s } = rig);
});
after(() => rig?.stop());

const issuer = (name: string, extra = '') => `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: ${name} }\nspec:\n  acme:\n    server: ${proxy.directoryUrl}\n    caBundle: ${b64(proxy.caPem)}\n${extra}    privateKeySecretRef: { name: ${name}-account }\n    solvers: [ { http01: { ingress: {} } } ]`;
const cert = (name: string, iss: string) => `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default }\nspec: { secretName: ${name}-tls, dnsNames: [${name}-${crypto.randomBytes(3).toString('hex')}.example.test], privateKey: { algorithm: ECDSA }, issuerRef: { name: ${iss}, kind: ClusterIssuer } }`;
const getJSON = async (args: string[]) => JSON.parse((await s.cli([...args, '-o', 'json'])).stdout);

test('renewalInformationSource None: no renewal-info request and no status.acme.ari; the default fetches the window', async () => {
  await apply(s, [issuer('none', '    renewalInformationSource: None\n'), issuer('dflt'), cert('c-none', 'none'), cert('c-dflt', 'dflt')].join('\n---\n'));
  await waitAllReady(s, ['c-none', 'c-dflt'], 60_000);
  await waitFor('the default Issuer\'s certificate has its ARI window', async () => ((await getJSON(['get', 'certificate', 'c-dflt', '-n', 'default'])).status.acme?.ari?.suggestedWindow ? true : undefined));
  // both were issued together: a fetch for the None one would come now; give it a moment to show
  await new Promise((r) => setTimeout(r, 2000));
  const none = await getJSON(['get', 'certificate', 'c-none', '-n', 'default']);
  assert.equal(none.status.acme?.ari, undefined);
  assert.equal(proxy.exchanges.filter((x) => x.path.startsWith('/renewal-info/')).length, 1, 'one renewal-info request, for the default Issuer\'s certificate');
});

test('certsmith acme deactivate-account: the account is deactivated at the CA, which refuses its key afterwards', async () => {
  const r = await s.cli(['acme', 'deactivate-account', 'dflt', '--cluster']);
  assert.equal(r.code, 0, r.stderr);
  // what happens next, as it does: the controller replaces the key and registers again by itself
  assert.match(r.stdout, /^Deactivated ACME account \S+ of ClusterIssuer dflt; certsmith registers a new account with a new key in Secret cert-manager\/dflt-account when the issuer next uses it/);
  const secret = await getJSON(['get', 'secret', '-n', 'cert-manager', 'dflt-account']);
  const key = Buffer.from(secret.data['tls.key'], 'base64').toString();
  const c = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: key, caPem: pebble.caPem });
  try {
    await assert.rejects(c.findAccount(), /deactivated/);
  } finally {
    c.close();
  }
});

test('renewalInformationSource switched to None: the stored ARI answer goes, and the ordinary renewal time applies again', async () => {
  await apply(s, [issuer('switch'), cert('c-switch', 'switch')].join('\n---\n'));
  await waitAllReady(s, ['c-switch'], 60_000);
  const before = await waitFor('the ARI window', async () => {
    const c = await getJSON(['get', 'certificate', 'c-switch', '-n', 'default']);
    return c.status.acme?.ari?.suggestedWindow ? c : undefined;
  });
  const inWindow = (t: string) => Date.parse(t) > Date.now() + 199 * 86400e3 && Date.parse(t) < Date.now() + 202 * 86400e3;
  assert.ok(inWindow(before.status.renewalTime), `renewal in the CA's window 200 days out: ${before.status.renewalTime}`);
  await apply(s, issuer('switch', '    renewalInformationSource: None\n'));
  const after = await waitFor('status.acme.ari dropped', async () => {
    const c = await getJSON(['get', 'certificate', 'c-switch', '-n', 'default']);
    return c.status.acme?.ari === undefined ? c : undefined;
  }, 30_000);
  // Pebble's leaf lives 5 years: the ordinary time, two thirds of that, is years after the CA's window
  await waitFor('the ordinary renewal time', async () => {
    const c = await getJSON(['get', 'certificate', 'c-switch', '-n', 'default']);
    return Date.parse(c.status.renewalTime) > Date.now() + 1000 * 86400e3 ? true : undefined;
  }, 30_000);
  assert.equal(after.status.revision, 1, 'nothing re-issued');
});

test('a 429 on newAccount with a long Retry-After (more than the client waits itself) holds the Issuer: not asked again before it, and says until when', async () => {
  // 15 minutes, as Let's Encrypt asks for new registrations from one address
  const limited = proxy.answer({ method: 'POST', path: /\/sign-me-up$/ }, { status: 429, type: 'rateLimited', detail: 'too many new registrations (10) from this IP address', retryAfter: 900 });
  const since = proxy.exchanges.length;
  await apply(s, issuer('limited'));
  await limited.hit;
  const limitedAt = Date.now();
  const notReady = await waitFor('Ready=False naming the wait', async () => {
    const c = (await getJSON(['get', 'clusterissuer', 'limited'])).status?.conditions?.find((x: { type: string }) => x.type === 'Ready');
    return c?.status === 'False' && /not asked again before/.test(c.message) ? c : undefined;
  });
  assert.match(notReady.message, /^Failed to register ACME account: .*rateLimited: too many new registrations .*; not asked again before (\S+) \(its Retry-After\)$/);
  const until = Date.parse(/not asked again before (\S+)/.exec(notReady.message)![1]);
  assert.ok(Math.abs(until - limitedAt - 900_000) < 10_000, `about 15 minutes after the 429: ${notReady.message}`);
  // the Issuer's retry (5 s, then 10 s) and its own status writes would each have asked again
  await new Promise((r) => setTimeout(r, 8_000));
  const signUps = proxy.exchanges.slice(since).filter((x) => /\/sign-me-up$/.test(x.path));
  assert.deepEqual(signUps.map((x) => x.status), [429], 'nothing sent after the 429');
  await s.cli(['delete', 'clusterissuer', 'limited']);
});
