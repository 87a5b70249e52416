// Route53Solver against the loopback Route 53 API (test/rig/route53-api.ts, SigV4 verified): how a
// hostedZoneID is proven, and what an unknown zone does to present.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { route53Region, Route53Solver } from './route53.ts';
import { ProviderConfigError, ProviderThrottledError } from './secret-ref.ts';
import { startRoute53API, type Route53API } from '../../../../../test/rig/route53-api.ts';
import type { ChallTestSrv } from '../../../../../test/rig/index.ts';

const KEY_ID = `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
const SECRET = crypto.randomBytes(30).toString('base64');
/** https://cert-manager.io/docs/configuration/acme/dns01/route53/#set-up-an-iam-policy */
const CERT_MANAGER_POLICY = ['GetChange', 'ChangeResourceRecordSets', 'ListResourceRecordSets', 'ListHostedZonesByName'];
/** the record sets are read back from the rig; nothing here needs them in DNS */
const noDNS = { setTXT: async () => {}, clearTXT: async () => {}, setCNAME: async () => {} } as unknown as ChallTestSrv;

describe('Route53Solver: hosted zones', () => {
  let api: Route53API;
  const solver = (hostedZoneID?: string) => new Route53Solver({ credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET }, region: 'us-east-1', hostedZoneID, endpoint: api.url });
  before(async () => {
    // the policy cert-manager documents for its route53 solver: nothing else may be needed
    api = await startRoute53API({ zones: ['example.test'], keys: { [KEY_ID]: SECRET }, allowedActions: CERT_MANAGER_POLICY, challtestsrv: noDNS });
  });
  after(() => api?.stop());

  test('a hostedZoneID is proven by listing one record set (the Issuer check), an action cert-manager\'s IAM policy allows; present and cleanup skip that call', async () => {
    const id = api.zones[0].id;
    const before = api.requests.length;
    assert.equal(await solver(`/hostedzone/${id}`).zoneFor('_acme-challenge.www.example.test'), id);
    assert.deepEqual(api.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`), [`GET /2013-04-01/hostedzone/${id}/rrset?maxitems=1 200`]);
    const mid = api.requests.length;
    assert.equal(await solver(id).zoneFor('_acme-challenge.www.example.test', false), id);
    assert.equal(api.requests.length, mid, 'no call without verify');
  });

  test('a hostedZoneID Route 53 does not have: NoSuchHostedZone, a configuration error, for the check and for present; nothing written', async () => {
    const s = solver('Z0000000000NOSUCH');
    await assert.rejects(s.zoneFor('_acme-challenge.www.example.test'), (e: Error) => e instanceof ProviderConfigError && /NoSuchHostedZone: No hosted zone found with ID: Z0000000000NOSUCH/.test(e.message));
    await assert.rejects(s.present('_acme-challenge.www.example.test', 'v'), (e: Error) => e instanceof ProviderConfigError && /NoSuchHostedZone/.test(e.message));
    assert.ok(!api.requests.some((r) => r.method === 'POST'), 'no change sent');
  });

  test('throttled past the SDK\'s retries: a throttled error naming Throttling (Route 53 asks for no wait), not a configuration error; nothing written', async () => {
    const before = api.requests.length;
    api.throttle(100);
    try {
      await assert.rejects(solver(api.zones[0].id).present('_acme-challenge.t.example.test', 'v'), (e: Error) =>
        e instanceof ProviderThrottledError && e.retryAfterMs === 0 && /^Route 53 reading TXT _acme-challenge\.t\.example\.test\.: Throttling: Rate exceeded \(throttled\)$/.test(e.message));
    } finally {
      api.throttle(0);
    }
    const mine = api.requests.slice(before);
    assert.ok(mine.length > 1 && mine.every((r) => r.code === 'Throttling'), JSON.stringify(mine));
  });

  test('two challenges presenting on one name at once (a wildcard and its apex through CNAMEs, or two processes) keep both values; cleanups at once remove only their own', async () => {
    const id = api.zones[0].id;
    const s = solver(id);
    const fqdn = '_acme-challenge.shared.example.test';
    await Promise.all([s.present(fqdn, 'value-a'), s.present(fqdn, 'value-b'), s.present(fqdn, 'value-c')]);
    assert.deepEqual(api.sets.get(id)!.find((x) => x.name === `${fqdn}.`)?.values.sort(), ['"value-a"', '"value-b"', '"value-c"']);
    await Promise.all([s.cleanUp(fqdn, 'value-a'), s.cleanUp(fqdn, 'value-c')]);
    assert.deepEqual(api.sets.get(id)!.find((x) => x.name === `${fqdn}.`)?.values, ['"value-b"']);
    await s.cleanUp(fqdn, 'value-b');
    assert.equal(api.sets.get(id)!.find((x) => x.name === `${fqdn}.`), undefined);
  });

  test('a private hosted zone (a VPC\'s: the CA cannot see it) is never chosen: the public parent is, and with none the zone is not found', async () => {
    const split = await startRoute53API({ zones: ['example.test', { name: 'sub.example.test', private: true }, { name: 'inside.test', private: true }], keys: { [KEY_ID]: SECRET }, challtestsrv: noDNS });
    try {
      const s = new Route53Solver({ credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET }, region: 'us-east-1', endpoint: split.url });
      assert.equal(await s.zoneFor('_acme-challenge.www.sub.example.test'), split.zones[0].id);
      await assert.rejects(s.zoneFor('_acme-challenge.www.inside.test'), (e: Error) => e instanceof ProviderConfigError && /no hosted zone of this account contains www\.inside\.test/.test(e.message));
    } finally {
      await split.stop();
    }
  });

  test('with hostedZoneID, cert-manager\'s policy without ListHostedZonesByName (as its docs allow) is enough for the check, present and cleanup', async () => {
    const narrow = await startRoute53API({ zones: ['example.test'], keys: { [KEY_ID]: SECRET }, allowedActions: CERT_MANAGER_POLICY.filter((a) => a !== 'ListHostedZonesByName'), challtestsrv: noDNS });
    try {
      const id = narrow.zones[0].id;
      const s = new Route53Solver({ credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET }, region: 'us-east-1', hostedZoneID: id, endpoint: narrow.url });
      await s.zoneFor('_acme-challenge.www.example.test');
      await s.present('_acme-challenge.www.example.test', 'v');
      assert.deepEqual(narrow.sets.get(id)!.map((x) => x.values), [['"v"']]);
      await s.cleanUp('_acme-challenge.www.example.test', 'v');
      assert.deepEqual(narrow.sets.get(id), []);
      assert.ok(narrow.requests.every((r) => r.status < 400), JSON.stringify(narrow.requests));
    } finally {
      await narrow.stop();
    }
  });

  test('no hosted zone contains the name: a configuration error naming it, after one lookup per enclosing name', async () => {
    const before = api.requests.length;
    await assert.rejects(solver().present('_acme-challenge.www.nowhere.test', 'v'), (e: Error) => e instanceof ProviderConfigError && e.message === 'Route 53: no hosted zone of this account contains www.nowhere.test');
    assert.deepEqual(api.requests.slice(before).map((r) => r.path), ['/2013-04-01/hostedzonesbyname?dnsname=www.nowhere.test.&maxitems=10', '/2013-04-01/hostedzonesbyname?dnsname=nowhere.test.&maxitems=10']);
  });
});

test('route53Region: the spec\'s region, else AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1 (cert-manager\'s field documentation)', () => {
  assert.equal(route53Region('eu-west-1', { AWS_REGION: 'cn-north-1' }), 'eu-west-1');
  assert.equal(route53Region(undefined, { AWS_REGION: 'cn-north-1', AWS_DEFAULT_REGION: 'us-gov-west-1' }), 'cn-north-1');
  assert.equal(route53Region('', { AWS_DEFAULT_REGION: 'us-gov-west-1' }), 'us-gov-west-1');
  assert.equal(route53Region(undefined, {}), 'us-east-1');
});
