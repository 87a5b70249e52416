// DNS-01 through Google Cloud DNS: certsmith's fetch client against a loopback server that follows
// Google's documented token endpoint and Cloud DNS API v1 (test/rig/clouddns-api.ts), which
// publishes TXT rrsets into pebble-challtestsrv, through which Pebble validates for real.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer, Issuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startCloudDNSAPI, type CloudDNSAPI } from '../rig/clouddns-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const PROJECT = 'certsmith-test';

describe('DNS-01 through Google Cloud DNS', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let gc: CloudDNSAPI;
  let lc: Lifecycle;
  let key: string;
  let strangerKey: string;

  const challengeFor = async (name: string) => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);
  const txt = (zone: string, name: string) => gc.rrsets.get(zone)!.find((r) => r.name === name && r.type === 'TXT');
  const issuer = (name: string, solvers: unknown[], kind = 'ClusterIssuer', namespace?: string) => ({
    apiVersion: 'cert-manager.io/v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: { acme: { server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers } },
  });

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    gc = await startCloudDNSAPI({
      project: PROJECT,
      zones: [{ name: 'example-test', dnsName: 'example.test.' }, { name: 'sub-zone', dnsName: 'sub.example.test.' }],
      challtestsrv: cts,
    });
    key = gc.serviceAccountKey();
    // a well-formed key of an account Google does not know: its assertion's signature fails
    const k = JSON.parse(key) as { private_key: string };
    k.private_key = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    strangerKey = JSON.stringify(k);
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: { cloudDNS: gc.url, googleMetadata: gc.url } },
    });
    for (const ns of ['cert-manager', 'default']) {
      await lc.apply<Secret>({
        apiVersion: 'v1', kind: 'Secret', metadata: { name: 'clouddns', namespace: ns },
        data: { 'key.json': b64(key), stranger: b64(strangerKey), garbage: b64('not json') },
      });
    }
    const ref = { name: 'clouddns', key: 'key.json' };
    await lc.apply(issuer('pebble', [
      { dns01: { cloudDNS: { project: PROJECT, serviceAccountSecretRef: ref } } },
      { selector: { dnsZones: ['named.sub.example.test'] }, dns01: { cloudDNS: { project: PROJECT, hostedZoneName: 'sub-zone', serviceAccountSecretRef: ref } } },
      // application default credentials: the metadata server (ClusterIssuers only)
      { selector: { dnsZones: ['ambient.example.test'] }, dns01: { cloudDNS: { project: PROJECT } } },
      // the API accepts these records but they never reach DNS: Pebble's validation fails
      { selector: { dnsZones: ['unpublished.example.test'] }, dns01: { cloudDNS: { project: PROJECT, serviceAccountSecretRef: ref } }, waitInsteadOfSelfCheck: '0s' },
    ]));
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), gc?.stop(), cts?.stop()]);
  });

  test('service account key: issued through 429s; the zone is found by dnsName; another TXT value at the name stays', async () => {
    const name = `t-${uniq()}.example.test`;
    const fqdn = `_acme-challenge.${name}.`;
    // somebody else's value in the same rrset
    gc.rrsets.get('example-test')!.push({ name: fqdn, type: 'TXT', ttl: 300, rrdatas: ['"someone-elses-value"'] });
    await cts.setTXT(fqdn, 'someone-elses-value');
    const before = gc.requests.length;
    const changesBefore = gc.changes.length;
    gc.throttle(2, 1);
    await lc.apply(acmeCertificate('gc-key', [name]));
    await waitForReadyCertificate(lc, 'gc-key');
    await waitFor('challenge value removed', async () => txt('example-test', fqdn)?.rrdatas.length === 1, async () => txt('example-test', fqdn));
    assert.deepEqual(txt('example-test', fqdn), { name: fqdn, type: 'TXT', ttl: 300, rrdatas: ['"someone-elses-value"'] });
    const mine = gc.changes.slice(changesBefore).filter((c) => [...c.additions, ...c.deletions].some((r) => r.name === fqdn));
    assert.equal(mine.length, 2, 'one change adds the value, one removes it');
    assert.equal(mine[0].additions[0].rrdatas.length, 2, 'added to the existing set');
    assert.deepEqual(mine[1].additions[0].rrdatas, ['"someone-elses-value"'], 'only this value removed');
    const calls = gc.requests.slice(before);
    assert.ok(calls.some((r) => r.path.includes('managedZones?dnsName=example.test.')), 'the zone is looked up by dnsName');
    assert.ok(calls.some((r) => /\/changes\/\d+$/.test(r.path)), 'the change is waited on until done');
    assert.ok(calls.filter((r) => r.path.includes(name)).every((r) => r.authorized), JSON.stringify(calls));
  });

  test('one token exchange serves many API calls (cached until it expires)', async () => {
    const tokensBefore = gc.tokenRequests;
    const before = gc.requests.length;
    const name = `c-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('gc-cached', [name]));
    await waitForReadyCertificate(lc, 'gc-cached');
    await waitFor('rrset deleted', async () => !txt('example-test', `_acme-challenge.${name}.`));
    assert.ok(gc.requests.length - before >= 6, 'lookups, reads, changes and their polls');
    assert.equal(gc.tokenRequests - tokensBefore, 0, 'the key\'s token from earlier is reused');
  });

  test('validation fails: the value presented is removed after the failure too', async () => {
    const name = `u-${uniq()}.unpublished.example.test`;
    const fqdn = `_acme-challenge.${name}.`;
    gc.unpublished.add(fqdn);
    await lc.apply(acmeCertificate('gc-unpublished', [name]));
    await waitFor('challenge invalid and released', async () => {
      const c = await challengeFor(name);
      return c?.status?.state === 'invalid' && !c.status.processing && !c.metadata.finalizers?.length;
    }, async () => (await challengeFor(name))?.status);
    assert.ok(gc.changes.some((c) => c.additions.some((r) => r.name === fqdn)), 'the value was presented');
    await waitFor('rrset deleted', async () => !txt('example-test', fqdn), async () => txt('example-test', fqdn));
  });

  test('hostedZoneName: the named managed zone is changed, without a zone lookup', async () => {
    const name = `h-${uniq()}.named.sub.example.test`;
    const before = gc.requests.length;
    await lc.apply(acmeCertificate('gc-named', [name]));
    await waitForReadyCertificate(lc, 'gc-named');
    const calls = gc.requests.slice(before);
    assert.ok(calls.some((r) => r.method === 'POST' && r.path.endsWith('/managedZones/sub-zone/changes')), JSON.stringify(calls));
    assert.ok(!calls.some((r) => r.path.includes(`dnsName=${name}`)), 'no lookup by name');
    await waitFor('rrset deleted', async () => !txt('sub-zone', `_acme-challenge.${name}.`));
  });

  test('application default credentials from the metadata server issue for a ClusterIssuer', async () => {
    const name = `a-${uniq()}.ambient.example.test`;
    await lc.apply(acmeCertificate('gc-ambient', [name]));
    await waitForReadyCertificate(lc, 'gc-ambient');
    await waitFor('rrset deleted', async () => !txt('example-test', `_acme-challenge.${name}.`));
  });

  test('refused key, unreadable key, unknown zone, other project and an Issuer without a key: Ready=False at once, the key never shown; no project refused at admission', async () => {
    const ref = (k: string) => ({ name: 'clouddns', key: k });
    await lc.apply(issuer('gc-refused', [{ dns01: { cloudDNS: { project: PROJECT, serviceAccountSecretRef: ref('stranger') } } }]));
    await lc.apply(issuer('gc-garbage', [{ dns01: { cloudDNS: { project: PROJECT, serviceAccountSecretRef: ref('garbage') } } }]));
    await lc.apply(issuer('gc-no-zone', [{ dns01: { cloudDNS: { project: PROJECT, hostedZoneName: 'nope', serviceAccountSecretRef: ref('key.json') } } }]));
    await lc.apply(issuer('gc-selector', [{ selector: { dnsZones: ['nowhere.test'] }, dns01: { cloudDNS: { project: PROJECT, serviceAccountSecretRef: ref('key.json') } } }]));
    await lc.apply(issuer('gc-project', [{ dns01: { cloudDNS: { project: 'someone-else', serviceAccountSecretRef: ref('key.json') } } }]));
    // project is required in cert-manager's CRD: refused at admission, as kube-apiserver refuses it
    await assert.rejects(lc.apply(issuer('gc-no-project', [{ dns01: { cloudDNS: { serviceAccountSecretRef: ref('key.json') } } }])),
      /"gc-no-project" is invalid: spec\.acme\.solvers\[0\]\.dns01\.cloudDNS\.project: Required value/);
    await lc.apply(issuer('gc-ns', [{ dns01: { cloudDNS: { project: PROJECT } } }], 'Issuer', 'default'));

    const m = await waitForInvalidSolverConfig(lc, 'gc-refused', /solvers\[0\]\.dns01: Google token exchange for certsmith@.*: HTTP 400: invalid_grant: Invalid JWT Signature/);
    assert.ok(!m.includes('PRIVATE KEY') && !m.includes(JSON.parse(strangerKey).private_key.slice(40, 80)), m);
    const g = await waitForInvalidSolverConfig(lc, 'gc-garbage', /secret "clouddns" key "garbage": not a JSON service account key/);
    assert.ok(!g.includes('not json'));
    await waitForInvalidSolverConfig(lc, 'gc-no-zone', /managed zone "nope" not found in project "certsmith-test"/);
    await waitForInvalidSolverConfig(lc, 'gc-selector', /no managed zone of project "certsmith-test" contains nowhere\.test/);
    await waitForInvalidSolverConfig(lc, 'gc-project', /HTTP 403: Forbidden/);
    await waitForInvalidSolverConfig(lc, 'gc-ns', /an Issuer needs serviceAccountSecretRef; application default credentials are used for ClusterIssuers only/, Issuer, 'default');

    // a name in no zone of the project, through a working Issuer: reported on its Challenge
    const unknown = `z-${uniq()}.nowhere.test`;
    await lc.apply(acmeCertificate('gc-unknown', [unknown]));
    await waitFor('challenge reason', async () => /no managed zone of project "certsmith-test" contains z-.*\.nowhere\.test/.test((await challengeFor(unknown))?.status?.reason ?? ''), async () => (await challengeFor(unknown))?.status);
  });
});
