// DNS-01 through Route 53: the AWS SDK v3 client signs with SigV4 against a loopback server that
// follows the Route 53 API reference, verifies every signature independently
// (test/rig/route53-api.ts) and publishes TXT sets into pebble-challtestsrv, through which Pebble
// validates for real.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer, Issuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startRoute53API, type Route53API } from '../rig/route53-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const KEY_ID = `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
const SECRET = crypto.randomBytes(30).toString('base64');
const AMBIENT_ID = `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
const AMBIENT_SECRET = crypto.randomBytes(30).toString('base64');

describe('DNS-01 through Route 53 (AWS SDK v3, SigV4 verified)', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let r53: Route53API;
  let lc: Lifecycle;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  before(async () => {
    // the default credential chain's first source; nothing here may reach instance metadata
    process.env.AWS_ACCESS_KEY_ID = AMBIENT_ID;
    process.env.AWS_SECRET_ACCESS_KEY = AMBIENT_SECRET;
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    // allowed: only the actions of the IAM policy cert-manager documents for its route53 solver
    // (https://cert-manager.io/docs/configuration/acme/dns01/route53/#set-up-an-iam-policy)
    r53 = await startRoute53API({
      zones: ['example.test', 'sub.example.test'], keys: { [KEY_ID]: SECRET, [AMBIENT_ID]: AMBIENT_SECRET }, challtestsrv: cts,
      allowedActions: ['GetChange', 'ChangeResourceRecordSets', 'ListResourceRecordSets', 'ListHostedZonesByName'],
    });
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: { route53: r53.url } },
    });
    for (const ns of ['cert-manager', 'default']) {
      await lc.apply<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws', namespace: ns }, data: { 'secret-access-key': b64(SECRET), wrong: b64('wrong-secret') } });
    }
    const keys = (key: string) => ({ accessKeyID: KEY_ID, secretAccessKeySecretRef: { name: 'aws', key } });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            { dns01: { route53: { region: 'us-east-1', ...keys('secret-access-key') } } },
            { selector: { dnsZones: ['ambient.example.test'] }, dns01: { route53: {} } },
          ],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), r53?.stop(), cts?.stop()]);
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = saved.id;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  });

  test('keys from the Issuer: issued through Throttling, in the closest zone; another value in the same set stays', async () => {
    const name = `s-${uniq()}.sub.example.test`;
    const fqdn = `_acme-challenge.${name}.`;
    const zone = r53.zones.find((z) => z.name === 'sub.example.test.')!;
    r53.sets.get(zone.id)!.push({ name: fqdn, type: 'TXT', ttl: 10, values: ['"someone-elses-value"'] });
    await cts.setTXT(fqdn, 'someone-elses-value');
    const before = r53.requests.length;
    r53.throttle(2);
    await lc.apply(acmeCertificate('r53-one', [name]));
    await waitForReadyCertificate(lc, 'r53-one');
    await waitFor('our value removed, theirs kept', async () => {
      const set = r53.sets.get(zone.id)!.find((s) => s.name === fqdn);
      return set?.values.length === 1 && set.values[0] === '"someone-elses-value"';
    }, async () => r53.sets.get(zone.id));
    const mine = r53.requests.slice(before);
    assert.equal(mine.filter((r) => r.code === 'Throttling').length, 2);
    assert.ok(mine.every((r) => r.status !== 403), JSON.stringify(mine));
    assert.ok(mine.some((r) => r.path.startsWith('/2013-04-01/change/')), 'waited for INSYNC');
    assert.ok(!r53.sets.get(r53.zones.find((z) => z.name === 'example.test.')!.id)!.length, 'nothing written in the parent zone');
  });

  test('ambient credentials (the default chain) for a ClusterIssuer: the set is created and deleted whole', async () => {
    const name = `a-${uniq()}.ambient.example.test`;
    const zone = r53.zones.find((z) => z.name === 'example.test.')!;
    await lc.apply(acmeCertificate('r53-ambient', [name]));
    await waitForReadyCertificate(lc, 'r53-ambient');
    await waitFor('set deleted', async () => !r53.sets.get(zone.id)!.some((s) => s.name === `_acme-challenge.${name}.`), async () => r53.sets.get(zone.id));
  });

  test('a wrong secret (SignatureDoesNotMatch), an Issuer without keys (no ambient credentials) make the Issuer Ready=False at once; secrets never shown', async () => {
    const acme = (name: string, route53: Record<string, unknown>) => ({
      server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers: [{ dns01: { route53 } }],
    });
    const keys = (key: string) => ({ accessKeyID: KEY_ID, secretAccessKeySecretRef: { name: 'aws', key } });
    await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'r53-refused' }, spec: { acme: acme('r53-refused', keys('wrong')) } });
    await lc.apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'r53-ns', namespace: 'default' }, spec: { acme: acme('r53-ns', {}) } });
    const m = await waitForInvalidSolverConfig(lc, 'r53-refused', /SignatureDoesNotMatch/);
    assert.ok(!m.includes('wrong-secret') && !m.includes(SECRET));
    await waitForInvalidSolverConfig(lc, 'r53-ns', /ambient AWS credentials are used for ClusterIssuers only/, Issuer, 'default');
  });

  test('unknown zone: a hostedZoneID Route 53 answers NoSuchHostedZone for, a selector zone in no hosted zone make the Issuer Ready=False at once; a name in no zone is reported on its Challenge, nothing written', async () => {
    const keys = { accessKeyID: KEY_ID, secretAccessKeySecretRef: { name: 'aws', key: 'secret-access-key' } };
    const issuer = (name: string, solver: Record<string, unknown>) => lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers: [solver] } },
    });
    await issuer('r53-no-such-zone', { dns01: { route53: { region: 'us-east-1', hostedZoneID: 'Z0000000000NOSUCH', ...keys } } });
    await issuer('r53-selector-zone', { selector: { dnsZones: ['nowhere.test'] }, dns01: { route53: { region: 'us-east-1', ...keys } } });
    await waitForInvalidSolverConfig(lc, 'r53-no-such-zone', /solvers\[0\]\.dns01: Route 53 .*NoSuchHostedZone: No hosted zone found with ID: Z0000000000NOSUCH/);
    await waitForInvalidSolverConfig(lc, 'r53-selector-zone', /solvers\[0\]\.dns01: Route 53: no hosted zone of this account contains nowhere\.test/);
    // a name no selector routes elsewhere, in no hosted zone of the account, through a working Issuer
    const unknown = `z-${uniq()}.nowhere.test`;
    const challenge = async () => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === unknown);
    await lc.apply(acmeCertificate('r53-unknown', [unknown]));
    await waitFor('challenge reason', async () => /Route 53: no hosted zone of this account contains z-.*\.nowhere\.test/.test((await challenge())?.status?.reason ?? ''), async () => (await challenge())?.status);
    assert.ok(![...r53.sets.values()].flat().some((s) => s.name.includes(unknown)), 'no record set written');
    assert.ok(!r53.requests.some((r) => r.method === 'POST' && r.path.includes('NOSUCH')), 'no change sent to the unknown zone');
  });
});
