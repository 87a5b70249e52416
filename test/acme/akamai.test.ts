// DNS-01 through Akamai Edge DNS: certsmith's EdgeGrid-signing fetch client against a loopback
// server that follows the Config DNS API v2 and checks every EdgeGrid signature for real
// (test/rig/akamai-api.ts), publishing TXT records into pebble-challtestsrv, through which Pebble
// validates.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { AkamaiDNSClient, edgeGridAuthorization, edgeGridTimestamp } from '../../src/controllers/acme/solvers/dns01/akamai.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startAkamaiAPI, type AkamaiAPI } from '../rig/akamai-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const CREDS = {
  clientToken: `akab-${crypto.randomBytes(8).toString('hex')}-${crypto.randomBytes(8).toString('hex')}`,
  clientSecret: crypto.randomBytes(32).toString('base64'),
  accessToken: `akab-${crypto.randomBytes(8).toString('hex')}-${crypto.randomBytes(8).toString('hex')}`,
};
const SCD = 'akab-test.luna.akamaiapis.net';
const refs = (secretKey: string) => ({
  serviceConsumerDomain: SCD,
  clientTokenSecretRef: { name: 'akamai', key: 'client-token' },
  clientSecretSecretRef: { name: 'akamai', key: secretKey },
  accessTokenSecretRef: { name: 'akamai', key: 'access-token' },
});

describe('DNS-01 through Akamai Edge DNS (EdgeGrid)', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let api: AkamaiAPI;
  let lc: Lifecycle;
  const challengeFor = async (name: string) => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    api = await startAkamaiAPI({ zones: ['example.test'], credentials: CREDS, challtestsrv: cts });
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: { akamai: api.url } },
    });
    await lc.apply<Secret>({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'akamai', namespace: 'cert-manager' },
      data: { 'client-token': b64(CREDS.clientToken), 'client-secret': b64(CREDS.clientSecret), 'access-token': b64(CREDS.accessToken), wrong: b64('not-the-client-secret') },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [{ dns01: { akamai: refs('client-secret') } }],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')), async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status, 60_000);
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), api?.stop(), cts?.stop()]);
  });

  test('issued through a 429; the challenge value is added to the existing TXT record set and removed again, the other value stays', async () => {
    const name = `a-${uniq()}.example.test`;
    const rr = `_acme-challenge.${name}`;
    await api.putRecordSet('example.test', { name: rr, type: 'TXT', ttl: 300, rdata: ['"someone-elses-value"'] });
    const before = api.requests.length;
    api.throttle(1, 1);
    await lc.apply(acmeCertificate('ak-one', [name]));
    await waitForReadyCertificate(lc, 'ak-one', 60_000);
    await waitFor('challenge value removed', async () => api.recordSets.get(`example.test/${rr}/TXT`)?.rdata.length === 1, async () => [...api.recordSets.values()]);
    assert.deepEqual(api.recordSets.get(`example.test/${rr}/TXT`), { name: rr, type: 'TXT', ttl: 300, rdata: ['"someone-elses-value"'] });
    const mine = api.requests.slice(before);
    assert.ok(mine.every((r) => r.authorized), JSON.stringify(mine.filter((r) => !r.authorized)));
    const writes = mine.filter((r) => r.method !== 'GET' && r.path.includes(rr));
    // the set existed: two PUTs (value added, then only the other value), nothing created or deleted
    assert.deepEqual(writes.map((r) => r.method), ['PUT', 'PUT']);
  });

  test('a new record set is created with exactly the value (a POST, its body hash signed) and deleted when it is the only value', async () => {
    const name = `b-${uniq()}.example.test`;
    const rr = `_acme-challenge.${name}`;
    const before = api.requests.length;
    await lc.apply(acmeCertificate('ak-two', [name]));
    await waitForReadyCertificate(lc, 'ak-two', 60_000);
    await waitFor('record set deleted', async () => !api.recordSets.has(`example.test/${rr}/TXT`), async () => [...api.recordSets.values()]);
    const writes = api.requests.slice(before).filter((r) => r.method !== 'GET' && r.path.includes(rr));
    assert.deepEqual(writes.map((r) => [r.method, r.authorized]), [['POST', true], ['DELETE', true]]);
  });

  test('the rig refuses a wrong signature, a stale timestamp and a replayed nonce', async () => {
    const wrong = new AkamaiDNSClient({ ...CREDS, clientSecret: 'not-the-client-secret' }, SCD, api.url);
    await assert.rejects(wrong.zoneFor('_acme-challenge.x.example.test'), /HTTP 401: Not authorized: The signature does not match: signature does not match/);
    const stale = new AkamaiDNSClient(CREDS, SCD, api.url, () => Date.now() - 120_000);
    await assert.rejects(stale.zoneFor('_acme-challenge.x.example.test'), /timestamp out of the allowed window/);
    const good = new AkamaiDNSClient(CREDS, SCD, api.url);
    assert.equal(await good.zoneFor('_acme-challenge.x.example.test'), 'example.test');
    // the same signed request twice: the second is a replay
    const url = new URL(`${api.url}/config-dns/v2/zones/example.test`);
    const authorization = edgeGridAuthorization(CREDS, { method: 'GET', url }, edgeGridTimestamp(new Date()), crypto.randomUUID());
    assert.equal((await fetch(url, { headers: { authorization } })).status, 200);
    const replay = await fetch(url, { headers: { authorization } });
    assert.equal(replay.status, 401);
    assert.match(((await replay.json()) as { detail: string }).detail, /nonce reused/);
  });

  test('a refused client secret makes the Issuer Ready=False at once; an unknown zone is reported on the Challenge; no secret is shown', async () => {
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'ak-refused' },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'ak-refused-account' }, solvers: [{ dns01: { akamai: refs('wrong') } }] } },
    });
    const m = await waitForInvalidSolverConfig(lc, 'ak-refused', /solvers\[0\]\.dns01: Akamai Edge DNS zone lookup of .*: HTTP 401: Not authorized/);
    assert.ok(!m.includes('not-the-client-secret') && !m.includes(CREDS.clientSecret));
    const unknown = `z-${uniq()}.nowhere.test`;
    await lc.apply(acmeCertificate('ak-unknown', [unknown]));
    await waitFor('unknown zone reported', async () => {
      const r = (await challengeFor(unknown))?.status?.reason;
      return r && /no zone of this API client contains z-.*\.nowhere\.test/.test(r) ? r : undefined;
    }, async () => (await challengeFor(unknown))?.status);
    assert.ok(![...api.recordSets.keys()].some((k) => k.includes(unknown)), 'nothing written');
  });

  test('a selector zone the API client has no zone for makes the Issuer Ready=False at once', async () => {
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'ak-unknown-zone' },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'ak-unknown-zone-account' }, solvers: [{ selector: { dnsZones: ['nowhere.test'] }, dns01: { akamai: refs('client-secret') } }] } },
    });
    await waitForInvalidSolverConfig(lc, 'ak-unknown-zone', /^solvers\[0\]\.dns01: Akamai Edge DNS: no zone of this API client contains nowhere\.test$/);
  });
});
