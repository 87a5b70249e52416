// DNS-01 through DigitalOcean's API v2: certsmith's fetch client against a loopback server that
// follows DigitalOcean's documented API (test/rig/digitalocean-api.ts) and publishes TXT records
// into pebble-challtestsrv, through which Pebble validates for real.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startDigitalOceanAPI, type DigitalOceanAPI } from '../rig/digitalocean-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const TOKEN = `dop_v1_${crypto.randomBytes(32).toString('hex')}`;

describe('DNS-01 through the DigitalOcean API', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let dos: DigitalOceanAPI;
  let lc: Lifecycle;
  const challengeFor = async (name: string) => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    dos = await startDigitalOceanAPI({ domains: ['example.test'], token: TOKEN, challtestsrv: cts });
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: { digitalocean: dos.url } },
    });
    await lc.apply<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'digitalocean', namespace: 'cert-manager' }, data: { 'access-token': b64(TOKEN), wrong: b64('dop_v1_wrong') } });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            { dns01: { digitalocean: { tokenSecretRef: { name: 'digitalocean', key: 'access-token' } } } },
          ],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), dos?.stop(), cts?.stop()]);
  });

  test('issued through a 429; only the challenge TXT is created and deleted, other records stay', async () => {
    const name = `d-${uniq()}.example.test`;
    const rel = `_acme-challenge.${name.replace(/\.example\.test$/, '')}`;
    dos.addRecord('example.test', { type: 'TXT', name: rel, data: 'someone-elses-value' });
    await cts.setTXT(`_acme-challenge.${name}`, 'someone-elses-value');
    const before = dos.requests.length;
    dos.throttle(1, 1);
    await lc.apply(acmeCertificate('do-one', [name]));
    await waitForReadyCertificate(lc, 'do-one');
    await waitFor('challenge record deleted', async () => dos.records.filter((r) => r.name === rel).length === 1, async () => dos.records);
    assert.deepEqual(dos.records.filter((r) => r.name === rel).map((r) => r.data), ['someone-elses-value']);
    const mine = dos.requests.slice(before).filter((r) => r.path.includes(name.split('.')[0]) || r.method !== 'GET');
    assert.ok(mine.every((r) => r.authorized), JSON.stringify(mine));
    assert.equal(mine.filter((r) => r.method === 'POST').length, 1);
    assert.equal(mine.filter((r) => r.method === 'DELETE').length, 1);
  });

  test('a refused token makes the Issuer Ready=False at once; an unknown domain is reported on the Challenge; the token is never shown', async () => {
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'do-refused' },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'do-refused-account' }, solvers: [{ dns01: { digitalocean: { tokenSecretRef: { name: 'digitalocean', key: 'wrong' } } } }] } },
    });
    const m = await waitForInvalidSolverConfig(lc, 'do-refused', /solvers\[0\]\.dns01: DigitalOcean .*HTTP 401 Unauthorized: Unable to authenticate you/);
    assert.ok(!m.includes('dop_v1_wrong'));
    const unknown = `z-${uniq()}.nowhere.test`;
    await lc.apply(acmeCertificate('do-unknown', [unknown]));
    const reason = (name: string, re: RegExp) => waitFor(`${name}: ${re}`, async () => {
      const r = (await challengeFor(name))?.status?.reason;
      return r && re.test(r) ? r : undefined;
    }, async () => (await challengeFor(name))?.status);
    await reason(unknown, /no domain of this account contains z-.*\.nowhere\.test/);
    assert.ok(!dos.requests.some((r) => r.method === 'POST' && r.path.includes('nowhere')), 'nothing written');
  });

  test('a selector zone the account has no domain for makes the Issuer Ready=False at once', async () => {
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'do-unknown-zone' },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'do-unknown-zone-account' }, solvers: [{ selector: { dnsZones: ['nowhere.test'] }, dns01: { digitalocean: { tokenSecretRef: { name: 'digitalocean', key: 'access-token' } } } }] } },
    });
    await waitForInvalidSolverConfig(lc, 'do-unknown-zone', /^solvers\[0\]\.dns01: DigitalOcean: no domain of this account contains nowhere\.test$/);
  });
});
