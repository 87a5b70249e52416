// DNS-01 through acme-dns: certsmith posts the value to a loopback acme-dns update API
// (test/rig/acme-dns-api.ts) that publishes it at the account's fulldomain in pebble-challtestsrv;
// `_acme-challenge.NAME` is a CNAME there, as acme-dns users set up once, and Pebble follows it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startAcmeDNSAPI, type AcmeDNSAPI } from '../rig/acme-dns-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

describe('DNS-01 through acme-dns', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let api: AcmeDNSAPI;
  let lc: Lifecycle;
  const good = `a-${uniq()}.example.test`;
  const refused = `r-${uniq()}.example.test`;
  const unregistered = `n-${uniq()}.example.test`;
  const challengeFor = async (name: string) => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);

  const setCNAME = async (host: string, target: string) => {
    const res = await fetch(`${cts.managementUrl}/set-cname`, { method: 'POST', body: JSON.stringify({ host: `${host}.`, target: `${target}.` }) });
    assert.equal(res.status, 200);
  };

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    api = await startAcmeDNSAPI({ authDomain: 'auth.acme-dns.test', challtestsrv: cts });
    const account = api.register();
    const wrong = { ...api.register(), password: 'not-the-password' };
    await setCNAME(`_acme-challenge.${good}`, account.fulldomain);
    await setCNAME(`_acme-challenge.${refused}`, wrong.fulldomain);
    lc = await startLifecycle({ clock: realClock, options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true } });
    await lc.apply<Secret>({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'acme-dns', namespace: 'cert-manager' },
      data: { 'acmedns.json': b64(JSON.stringify({ [good]: account, [refused]: wrong })) },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [{ dns01: { acmeDNS: { host: api.url, accountSecretRef: { name: 'acme-dns', key: 'acmedns.json' } } } }],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), api?.stop(), cts?.stop()]);
  });

  test('issued through the CNAME to the account\'s fulldomain', async () => {
    await lc.apply(acmeCertificate('acmedns-one', [good]));
    await waitForReadyCertificate(lc, 'acmedns-one');
    assert.equal([...api.values.values()].flat().length, 1);
    assert.deepEqual(api.requests.map((r) => r.status), [200]);
  });

  test('issued through a 429 (its Retry-After waited out), with two values of earlier challenges already at the fulldomain: the older is replaced, the newer stays', async () => {
    const name = `t-${uniq()}.example.test`;
    const account = api.register();
    await setCNAME(`_acme-challenge.${name}`, account.fulldomain);
    await lc.apply<Secret>({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'acme-dns-throttled', namespace: 'cert-manager' },
      data: { 'acmedns.json': b64(JSON.stringify({ [name]: account })) },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'acmedns-throttled' },
      spec: {
        acme: {
          server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'acmedns-throttled-account' },
          solvers: [{ dns01: { acmeDNS: { host: api.url, accountSecretRef: { name: 'acme-dns-throttled', key: 'acmedns.json' } } } }],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'acmedns-throttled')));
    const earlier = [crypto.randomBytes(32).toString('base64url'), crypto.randomBytes(32).toString('base64url')];
    for (const txt of earlier) {
      const res = await fetch(`${api.url}/update`, { method: 'POST', headers: { 'x-api-user': account.username, 'x-api-key': account.password }, body: JSON.stringify({ subdomain: account.subdomain, txt }) });
      assert.equal(res.status, 200);
    }
    const before = api.requests.length;
    api.throttle(1, 1);
    await lc.apply(acmeCertificate('acmedns-throttled', [name], 'acmedns-throttled'));
    await waitForReadyCertificate(lc, 'acmedns-throttled');
    const mine = api.requests.slice(before);
    assert.deepEqual(mine.map((r) => r.status), [429, 200]);
    assert.ok(mine[1].at - mine[0].at >= 950, `retried ${mine[1].at - mine[0].at} ms after the 429, Retry-After 1 s`);
    // the Challenge is gone once the Order is valid: the value Pebble validated is the one that is not earlier's
    const held = api.values.get(account.subdomain) ?? [];
    assert.equal(held.length, 2);
    assert.equal(held[0], earlier[1]);
    assert.ok(!earlier.includes(held[1]), JSON.stringify(held));
  });

  test('a refused key and a domain without an account are reported on the Challenge; the password is never shown', async () => {
    await lc.apply(acmeCertificate('acmedns-refused', [refused]));
    await lc.apply(acmeCertificate('acmedns-none', [unregistered]));
    const reason = (name: string, re: RegExp) => waitFor(`${name}: ${re}`, async () => {
      const r = (await challengeFor(name))?.status?.reason;
      return r && re.test(r) ? r : undefined;
    }, async () => (await challengeFor(name))?.status);
    const r1 = await reason(refused, /acme-dns update at http:\/\/127\.0\.0\.1:\d+: HTTP 401 forbidden/);
    assert.ok(!r1.includes('not-the-password'));
    await reason(unregistered, new RegExp(`has no account for ${unregistered.replace(/\./g, '\\.')}`));
  });
});
