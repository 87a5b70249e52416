// DNS-01 through Azure DNS: certsmith's fetch client against a loopback server that follows the
// Microsoft identity platform's token endpoint, IMDS and the Azure DNS ARM API
// (test/rig/azuredns-api.ts), which publishes TXT record sets into pebble-challtestsrv, through
// which Pebble validates for real. Public zones (dnsZones) and, with zoneType AzurePrivateZone,
// Azure Private DNS zones (privateDnsZones).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer, Issuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startAzureDNSAPI, type AzureDNSAPI } from '../rig/azuredns-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const SP = { tenantID: crypto.randomUUID(), clientID: crypto.randomUUID(), clientSecret: `azs~${crypto.randomBytes(16).toString('hex')}` };
const SUB = crypto.randomUUID();
const RG = 'dns-rg';

describe('DNS-01 through Azure DNS', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let az: AzureDNSAPI;
  let lc: Lifecycle;

  const issuer = (name: string, solvers: unknown[], kind = 'ClusterIssuer', namespace?: string) => ({
    apiVersion: 'cert-manager.io/v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: { acme: { server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers } },
  });
  const sp = (over: Record<string, unknown> = {}) => ({
    subscriptionID: SUB, resourceGroupName: RG, hostedZoneName: 'example.test',
    clientID: SP.clientID, tenantID: SP.tenantID, clientSecretSecretRef: { name: 'azuredns', key: 'client-secret' }, ...over,
  });

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    az = await startAzureDNSAPI({ ...SP, subscriptionID: SUB, resourceGroupName: RG, zones: ['example.test', 'other.test', 'internal.test'], privateZones: ['internal.test'], challtestsrv: cts });
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: { azureAuthority: az.url, azureARM: az.url, azureIMDS: az.url } },
    });
    for (const ns of ['cert-manager', 'default']) {
      await lc.apply<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'azuredns', namespace: ns }, data: { 'client-secret': b64(SP.clientSecret), wrong: b64('not-the-secret') } });
    }
    await lc.apply(issuer('pebble', [
      { dns01: { azureDNS: sp() } },
      { selector: { dnsZones: ['other.test'] }, dns01: { azureDNS: { subscriptionID: SUB, resourceGroupName: RG, hostedZoneName: 'other.test', managedIdentity: { clientID: 'mi-client' } } } },
      // the API accepts these records but they never reach DNS: Pebble's validation fails
      { selector: { dnsZones: ['unpublished.example.test'] }, dns01: { azureDNS: sp() }, waitInsteadOfSelfCheck: '0s' },
      // a public and a private zone of the same name: only the private one may be touched
      { selector: { dnsZones: ['internal.test'] }, dns01: { azureDNS: sp({ hostedZoneName: 'internal.test', zoneType: 'AzurePrivateZone' }) } },
    ]));
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), az?.stop(), cts?.stop()]);
  });

  test('client secret: issued through 429s; the value is added to and removed from the record set by etag; another value stays', async () => {
    const name = `t-${uniq()}.example.test`;
    const rel = `_acme-challenge.${name.replace('.example.test', '')}`;
    az.zones.get('example.test')!.set(rel, { etag: 'etag-theirs', TTL: 300, values: ['someone-elses-value'] });
    await cts.setTXT(`_acme-challenge.${name}`, 'someone-elses-value');
    const before = az.requests.length;
    az.throttle(2, 1);
    await lc.apply(acmeCertificate('az-sp', [name]));
    await waitForReadyCertificate(lc, 'az-sp');
    await waitFor('challenge value removed', async () => az.zones.get('example.test')!.get(rel)?.values.length === 1, async () => az.zones.get('example.test')!.get(rel));
    const set = az.zones.get('example.test')!.get(rel)!;
    assert.deepEqual([set.TTL, set.values], [300, ['someone-elses-value']]);
    const puts = az.requests.slice(before).filter((r) => r.method === 'PUT' && r.path.includes(rel));
    assert.equal(puts.length, 2, JSON.stringify(puts));
    assert.equal(puts[0].ifMatch, 'etag-theirs', 'the add is conditional on the set read');
    assert.ok(puts.every((r) => r.authorized && r.path.endsWith('api-version=2018-05-01')));
    assert.ok(az.requests.slice(before).some((r) => r.path.startsWith(`/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/dnsZones/example.test/TXT/`)));
    assert.ok(!az.requests.slice(before).some((r) => r.method === 'DELETE' && r.path.includes(rel)), 'the set with another value is never deleted');
  });

  test('managed identity (IMDS) for a ClusterIssuer: issued; a record set of its own is created and deleted', async () => {
    const name = `m-${uniq()}.other.test`;
    const rel = `_acme-challenge.${name.replace('.other.test', '')}`;
    const before = az.requests.length;
    await lc.apply(acmeCertificate('az-mi', [name]));
    await waitForReadyCertificate(lc, 'az-mi');
    await waitFor('record set deleted', async () => !az.zones.get('other.test')!.has(rel));
    assert.ok(az.tokens.some((t) => t.via === 'imds' && t.client === 'mi-client'));
    const mine = az.requests.slice(before).filter((r) => r.path.includes(rel));
    assert.equal(mine.find((r) => r.method === 'PUT')?.ifNoneMatch, '*', 'created only if absent');
    assert.ok(mine.find((r) => r.method === 'DELETE')?.ifMatch, 'deleted only if unchanged');
  });

  test('zoneType AzurePrivateZone: the value is added to and removed from the private zone record set (api 2018-09-01, ttl/txtRecords); the public zone of the same name is never touched', async () => {
    const name = `p-${uniq()}.internal.test`;
    const rel = `_acme-challenge.${name.replace('.internal.test', '')}`;
    az.privateZones.get('internal.test')!.set(rel, { etag: 'etag-private', TTL: 120, values: ['private-other-value'] });
    await cts.setTXT(`_acme-challenge.${name}`, 'private-other-value');
    const before = az.requests.length;
    await lc.apply(acmeCertificate('az-private', [name]));
    await waitForReadyCertificate(lc, 'az-private');
    await waitFor('challenge value removed', async () => az.privateZones.get('internal.test')!.get(rel)?.values.length === 1, async () => az.privateZones.get('internal.test')!.get(rel));
    const set = az.privateZones.get('internal.test')!.get(rel)!;
    assert.deepEqual([set.TTL, set.values], [120, ['private-other-value']], 'the TTL read is kept and the other value stays');
    const mine = az.requests.slice(before).filter((r) => r.path.includes(rel));
    const privatePath = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Network/privateDnsZones/internal.test/TXT/${rel}?api-version=2018-09-01`;
    assert.ok(mine.length > 0 && mine.every((r) => r.path === privatePath && r.authorized), JSON.stringify(mine));
    const puts = mine.filter((r) => r.method === 'PUT');
    assert.equal(puts.length, 2, JSON.stringify(puts));
    // presented: exactly one value added, a key authorization digest (base64url SHA-256); cleaned: exactly that one removed
    assert.equal(puts[0].ifMatch, 'etag-private');
    assert.equal(puts[0].txt?.length, 2);
    assert.equal(puts[0].txt?.[0], 'private-other-value');
    assert.match(puts[0].txt![1], /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(puts[1].txt, ['private-other-value']);
    assert.ok(!mine.some((r) => r.method === 'DELETE'), 'the set with another value is never deleted');
    assert.ok(!az.requests.slice(before).some((r) => r.path.includes('/dnsZones/internal.test')), 'no public zone request');
    assert.equal(az.zones.get('internal.test')!.size, 0, 'the public zone holds nothing');
  });

  test('validation fails: the record set created is deleted after the failure too', async () => {
    const name = `u-${uniq()}.unpublished.example.test`;
    const rel = `_acme-challenge.${name.replace('.example.test', '')}`;
    az.unpublished.add(`_acme-challenge.${name}`);
    const challengeFor = async () => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);
    const before = az.requests.length;
    await lc.apply(acmeCertificate('az-unpublished', [name]));
    await waitFor('challenge invalid and released', async () => {
      const c = await challengeFor();
      return c?.status?.state === 'invalid' && !c.status.processing && !c.metadata.finalizers?.length;
    }, async () => (await challengeFor())?.status);
    assert.ok(az.requests.slice(before).some((r) => r.method === 'PUT' && r.path.includes(rel)), 'the value was presented');
    await waitFor('record set deleted', async () => !az.zones.get('example.test')!.has(rel), async () => az.zones.get('example.test')!.get(rel));
  });

  test('wrong secret, unknown tenant, unknown zone, other subscription and an Issuer without a service principal: Ready=False at once, the secret never shown; a bad environment refused at admission', async () => {
    await lc.apply(issuer('az-wrong', [{ dns01: { azureDNS: sp({ clientSecretSecretRef: { name: 'azuredns', key: 'wrong' } }) } }]));
    await lc.apply(issuer('az-tenant', [{ dns01: { azureDNS: sp({ tenantID: 'no-such-tenant' }) } }]));
    await lc.apply(issuer('az-zone', [{ dns01: { azureDNS: sp({ hostedZoneName: 'nope.test' }) } }]));
    await lc.apply(issuer('az-private-missing', [{ dns01: { azureDNS: sp({ zoneType: 'AzurePrivateZone' }) } }]));
    await lc.apply(issuer('az-sub', [{ dns01: { azureDNS: sp({ subscriptionID: crypto.randomUUID() }) } }]));
    // environment is an enum in cert-manager's CRD: a bad one is refused at admission, as kube-apiserver refuses it
    await assert.rejects(lc.apply(issuer('az-env', [{ dns01: { azureDNS: sp({ environment: 'AzureMoonCloud' }) } }])),
      /spec\.acme\.solvers\[0\]\.dns01\.azureDNS\.environment: Unsupported value: "AzureMoonCloud": supported values: "AzurePublicCloud", "AzureChinaCloud", "AzureGermanCloud", "AzureUSGovernmentCloud"/);
    await lc.apply(issuer('az-ns', [{ dns01: { azureDNS: { subscriptionID: SUB, resourceGroupName: RG, hostedZoneName: 'example.test' } } }], 'Issuer', 'default'));

    const m = await waitForInvalidSolverConfig(lc, 'az-wrong', /solvers\[0\]\.dns01: Azure token request for client .*: HTTP 401: invalid_client: AADSTS7000215: Invalid client secret provided/);
    assert.ok(!m.includes('not-the-secret') && !m.includes('Trace ID'), m);
    await waitForInvalidSolverConfig(lc, 'az-tenant', /AADSTS90002: Tenant 'no-such-tenant' not found/);
    await waitForInvalidSolverConfig(lc, 'az-zone', /zone "nope\.test" not found in resource group "dns-rg"/);
    // example.test is a public zone only: a private zoneType looks for a private zone and never falls back
    await waitForInvalidSolverConfig(lc, 'az-private-missing', /private zone "example\.test" not found in resource group "dns-rg"/);
    await waitForInvalidSolverConfig(lc, 'az-sub', /HTTP 403: AuthorizationFailed/);
    await waitForInvalidSolverConfig(lc, 'az-ns', /an Issuer needs clientID, clientSecretSecretRef and tenantID; managed identity is used for ClusterIssuers only/, Issuer, 'default');
  });
});
