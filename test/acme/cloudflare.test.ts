// DNS-01 through Cloudflare's API v4: certsmith's fetch client against a loopback server that
// follows Cloudflare's documented API (test/rig/cloudflare-api.ts) and publishes TXT records into
// pebble-challtestsrv, through which Pebble validates for real.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startCloudflareAPI, type CloudflareAPI } from '../rig/cloudflare-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const TOKEN = `cf-token-${crypto.randomBytes(12).toString('hex')}`;
const KEY = { key: crypto.randomBytes(18).toString('hex'), email: 'dns@example.test' };

describe('DNS-01 through the Cloudflare API', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let cf: CloudflareAPI;
  let lc: Lifecycle;

  const challengeFor = async (name: string) => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    cf = await startCloudflareAPI({ zones: ['example.test', 'other.test'], token: TOKEN, apiKey: KEY, challtestsrv: cts });
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: { cloudflare: cf.url } },
    });
    await lc.apply<Secret>({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cloudflare', namespace: 'cert-manager' },
      data: { 'api-token': b64(TOKEN), 'api-key': b64(KEY.key), wrong: b64('not-the-token') },
    });
    const ref = (key: string) => ({ name: 'cloudflare', key });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            { dns01: { cloudflare: { apiTokenSecretRef: ref('api-token') } } },
            { selector: { dnsZones: ['key.example.test'] }, dns01: { cloudflare: { email: KEY.email, apiKeySecretRef: ref('api-key') } } },
            { selector: { dnsZones: ['follow.example.test'] }, dns01: { cnameStrategy: 'Follow', cloudflare: { apiTokenSecretRef: ref('api-token') } } },
            // the API accepts these records but they never reach DNS: Pebble's validation fails
            { selector: { dnsZones: ['unpublished.example.test'] }, dns01: { cloudflare: { apiTokenSecretRef: ref('api-token') } }, waitInsteadOfSelfCheck: '0s' },
          ],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), cf?.stop(), cts?.stop()]);
  });

  test('cnameStrategy Follow: the record is written where the CNAME points, in another zone, and Pebble validates through the alias', async () => {
    const name = `c-${uniq()}.follow.example.test`;
    const target = `_acme-challenge.${name.replace('.follow.example.test', '')}.other.test`;
    await cts.setCNAME(`_acme-challenge.${name}`, target);
    await lc.apply(acmeCertificate('cf-follow', [name]));
    await waitForReadyCertificate(lc, 'cf-follow');
    const mine = cf.created.filter((r) => r.type === 'TXT' && (r.name === target || r.name === `_acme-challenge.${name}`));
    assert.deepEqual(mine.map((r) => `${r.zone} ${r.name}`), [`other.test ${target}`], 'one record, where the alias points, in that zone');
  });

  test('cnameStrategy Follow into a CNAME loop or a chain of more than 10: the Challenge says so and is never presented; no record is written', async () => {
    const loop = `l-${uniq()}.follow.example.test`;
    const long = `g-${uniq()}.follow.example.test`;
    await cts.setCNAME(`_acme-challenge.${loop}`, `back.${loop}`);
    await cts.setCNAME(`back.${loop}`, `_acme-challenge.${loop}`);
    for (let i = 0; i < 11; i++) await cts.setCNAME(i ? `c${i}.${long}` : `_acme-challenge.${long}`, `c${i + 1}.${long}`);
    const before = cf.requests.length;
    await lc.apply(acmeCertificate('cf-follow-loop', [loop]));
    await lc.apply(acmeCertificate('cf-follow-long', [long]));
    const reason = (name: string, re: RegExp) => waitFor(`${name}: ${re}`, async () => {
      const c = await challengeFor(name);
      return c && re.test(c.status?.reason ?? '') ? c : undefined;
    }, async () => (await challengeFor(name))?.status);
    const esc = (n: string) => n.replace(/\./g, '\\.');
    const c1 = await reason(loop, new RegExp(`^Error presenting challenge: CNAME loop: _acme-challenge\\.${esc(loop)} -> back\\.${esc(loop)} -> _acme-challenge\\.${esc(loop)}$`));
    const c2 = await reason(long, new RegExp(`^Error presenting challenge: more than 10 CNAMEs from _acme-challenge\\.${esc(long)}: .* -> c11\\.${esc(long)}$`));
    assert.ok(!c1.status?.presented && !c2.status?.presented);
    assert.ok(!cf.requests.slice(before).some((r) => r.method === 'POST' && (r.path.includes(loop) || r.path.includes(long))), 'nothing created');
    assert.ok(!cf.records.some((r) => r.name.endsWith(loop) || r.name.endsWith(long)));
  });

  test('API token: issued through 429s; only the challenge TXT is created and deleted, other records stay', async () => {
    const name = `t-${uniq()}.example.test`;
    const fqdn = `_acme-challenge.${name}`;
    // somebody else's records at the same name
    cf.addRecord('example.test', { type: 'TXT', name: fqdn, content: 'someone-elses-value' });
    await cts.setTXT(fqdn, 'someone-elses-value');
    cf.addRecord('example.test', { type: 'A', name, content: '127.0.0.1' });
    const before = cf.requests.length;
    cf.throttle(2, 1);
    await lc.apply(acmeCertificate('cf-token', [name]));
    await waitForReadyCertificate(lc, 'cf-token');
    await waitFor('challenge record deleted', async () => cf.records.filter((r) => r.name === fqdn).length === 1, async () => cf.records);
    assert.deepEqual(cf.records.filter((r) => r.name === fqdn || r.name === name).map((r) => `${r.type} ${r.content}`).sort(), ['A 127.0.0.1', 'TXT someone-elses-value']);
    // this certificate's calls (the Issuer's own credential checks may interleave)
    const mine = cf.requests.slice(before).filter((r) => r.path.includes(name) || r.method !== 'GET');
    assert.ok(mine.every((r) => r.auth === 'token'), JSON.stringify(mine));
    assert.equal(mine.filter((r) => r.method === 'POST').length, 1);
    assert.equal(mine.filter((r) => r.method === 'DELETE').length, 1);
    assert.ok(cf.requests.slice(before).some((r) => r.path.startsWith('/zones?name=example.test')), 'the zone is looked up by name');
  });

  test('API key and email: issued; the key travels as X-Auth-Key with X-Auth-Email', async () => {
    const name = `k-${uniq()}.key.example.test`;
    const before = cf.requests.length;
    await lc.apply(acmeCertificate('cf-key', [name]));
    await waitForReadyCertificate(lc, 'cf-key');
    // requests about this name (the previous test's late cleanup may interleave, with its token)
    const mine = cf.requests.slice(before).filter((r) => r.path.includes(name) || r.method !== 'GET');
    assert.ok(mine.length > 0, JSON.stringify(cf.requests.slice(before)));
    assert.ok(mine.filter((r) => r.path.includes(name)).every((r) => r.auth === 'key'), JSON.stringify(mine));
    assert.ok(mine.some((r) => r.method === 'POST' && r.auth === 'key'), JSON.stringify(mine));
    await waitFor('record deleted', async () => !cf.records.some((r) => r.name === `_acme-challenge.${name}`));
  });

  test('validation fails: the record created is deleted after the failure too', async () => {
    const name = `u-${uniq()}.unpublished.example.test`;
    cf.unpublished.add(`_acme-challenge.${name}`);
    await lc.apply(acmeCertificate('cf-unpublished', [name]));
    await waitFor('challenge invalid and released', async () => {
      const c = await challengeFor(name);
      return c?.status?.state === 'invalid' && !c.status.processing && !c.metadata.finalizers?.length;
    }, async () => (await challengeFor(name))?.status);
    assert.ok(cf.requests.some((r) => r.method === 'POST'));
    await waitFor('record deleted', async () => !cf.records.some((r) => r.name === `_acme-challenge.${name}`), async () => cf.records);
  });

  test('refused credentials, a missing Secret key and a selector zone the account lacks make the Issuer Ready=False at once; the secret is never shown', async () => {
    const ref = (key: string) => ({ name: 'cloudflare', key });
    // Issuers whose only solver cannot work: not Ready at once (priority over their first Challenge)
    for (const [name, cloudflare] of [
      ['cf-refused', { apiTokenSecretRef: ref('wrong') }],
      ['cf-missing', { apiTokenSecretRef: ref('no-such-key') }],
      ['cf-unknown-zone', { apiTokenSecretRef: ref('api-token') }],
    ] as const) {
      await lc.apply({
        apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name },
        spec: {
          acme: {
            server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` },
            solvers: [{ selector: { dnsZones: name === 'cf-unknown-zone' ? ['nowhere.test'] : [] }, dns01: { cloudflare } }],
          },
        },
      });
    }
    const m1 = await waitForInvalidSolverConfig(lc, 'cf-refused', /solvers\[0\]\.dns01: .*9109 Invalid access token/);
    assert.ok(!m1.includes('not-the-token'));
    await waitForInvalidSolverConfig(lc, 'cf-missing', /key "no-such-key" not found in secret "cert-manager\/cloudflare"/);
    await waitForInvalidSolverConfig(lc, 'cf-unknown-zone', /no zone of this account contains nowhere\.test/);
    // a name no selector routes elsewhere, in no zone of the account: reported on its Challenge
    const unknown = `z-${uniq()}.nowhere.test`;
    await lc.apply(acmeCertificate('cf-unknown', [unknown]));
    await waitFor('challenge reason', async () => /no zone of this account contains z-.*\.nowhere\.test/.test((await challengeFor(unknown))?.status?.reason ?? ''), async () => (await challengeFor(unknown))?.status);
    assert.ok(!cf.records.some((r) => r.name.endsWith(unknown)));
  });

  // last: its Challenge goes on in the background once the throttling ends
  test('throttled for longer than a client waits (Retry-After 60 s): the Challenge\'s reason names the 429 and the wait; nothing written, never presented', async () => {
    const name = `w-${uniq()}.example.test`;
    cf.throttle(1_000_000, 60);
    try {
      await lc.apply(acmeCertificate('cf-throttled', [name]));
      const c = await waitFor('throttled reason', async () => {
        const ch = await challengeFor(name);
        return ch && / HTTP 429: 971 Please wait and consider throttling your request speed \(throttled: the API asks to wait 60 s\)$/.test(ch.status?.reason ?? '') ? ch : undefined;
      }, async () => (await challengeFor(name))?.status);
      assert.match(c.status!.reason!, /^Error presenting challenge: Cloudflare zone lookup of /);
      assert.ok(!c.status?.presented);
      assert.ok(!cf.records.some((r) => r.name.endsWith(name)));
      // and the API is not asked again inside the 60 s: not on the wake-up the status write causes,
      // nor at the work queue's first retries (5 s, then 10 s)
      const lookups = () => cf.requests.filter((r) => r.path.includes(name)).length;
      const seen = lookups();
      await new Promise((r) => setTimeout(r, 6_000));
      assert.equal(lookups(), seen, 'no request to the API before the wait it asked for is over');
    } finally {
      cf.throttle(0, 1);
    }
  });
});
