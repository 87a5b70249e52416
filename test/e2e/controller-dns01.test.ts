// The DNS-01 providers with the controllers out of the server (issue 14: every provider works in
// both modes): `certsmith server --no-controllers` as the API server and `certsmith controller` as
// its own process, which reads each Issuer's credential Secrets through the Kubernetes API and its
// ambient credentials from its environment, as a Deployment's container would. Every vendor's
// loopback API (test/rig/*-api.ts) publishes into one pebble-challtestsrv, through which one Pebble
// validates for real; all Certificates are applied together and issued side by side.
//
// The controller process cannot be handed the loopback URLs as an option (dns01ProviderAPIs is
// never a flag): the AWS SDK takes AWS_ENDPOINT_URL_ROUTE_53 and _STS from the environment, and the fetch
// clients' built-in endpoints are redirected to the rigs below the product's code
// (test/rig/fetch-redirect.ts). Akamai's client signs for https://<serviceConsumerDomain>, so its
// rig checks the EdgeGrid signature for that origin rather than its own loopback one.
// RFC 2136 and the webhook solver are in controller-dns01-bind.test.ts: they need bind9
// (challtestsrv takes no updates and answers SOA queries NOTIMP), and the self-check wants the
// value on every configured resolver, so they cannot share this controller's challtestsrv.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterIssuer, Issuer } from '../../src/api/resources.ts';
import type { Issuer as IssuerObj } from '../../src/api/types.ts';
import { loadClientConfig } from '../../src/server/kubeconfig.ts';
import { HttpStore } from '../../src/store/http/http-store.ts';
import { CLOUDFLARE_API } from '../../src/controllers/acme/solvers/dns01/cloudflare.ts';
import { DIGITALOCEAN_API } from '../../src/controllers/acme/solvers/dns01/digitalocean.ts';
import { CLOUDDNS_API } from '../../src/controllers/acme/solvers/dns01/clouddns.ts';
import { AZURE_ENVIRONMENTS, AZURE_IMDS } from '../../src/controllers/acme/solvers/dns01/azuredns.ts';
import { startChallTestSrv, startPebble, freePort, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startCloudflareAPI, type CloudflareAPI } from '../rig/cloudflare-api.ts';
import { startRoute53API, type Route53API } from '../rig/route53-api.ts';
import { startSTSAPI, type STSAPI } from '../rig/sts-api.ts';
import { startCloudDNSAPI, type CloudDNSAPI } from '../rig/clouddns-api.ts';
import { startAzureDNSAPI, type AzureDNSAPI } from '../rig/azuredns-api.ts';
import { startDigitalOceanAPI, type DigitalOceanAPI } from '../rig/digitalocean-api.ts';
import { startAcmeDNSAPI, type AcmeDNSAPI } from '../rig/acme-dns-api.ts';
import { startAkamaiAPI, type AkamaiAPI } from '../rig/akamai-api.ts';
import { fetchRedirectEnv } from '../rig/fetch-redirect.ts';
import { acmeCertificate, b64 } from '../acme/acme-rig.ts';
import { startServer, waitFor, type RunningServer } from './harness.ts';
import { startController, waitIssuedBy, type RunningController } from './controller-harness.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
/** not cert-manager's default: proves the controller reads ClusterIssuer Secrets where its flag says */
const CLUSTER_RESOURCE_NS = 'dns-credentials';
const CF_TOKEN = `cf-token-${crypto.randomBytes(12).toString('hex')}`;
const AWS_KEYS = { id: `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`, secret: crypto.randomBytes(30).toString('base64') };
const AWS_ROLE = 'arn:aws:iam::123456789012:role/certsmith-dns01';
const AWS_AMBIENT = { id: `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`, secret: crypto.randomBytes(30).toString('base64') };
const GCP_PROJECT = 'certsmith-e2e';
const AZ = { tenantID: crypto.randomUUID(), clientID: crypto.randomUUID(), clientSecret: `azs~${crypto.randomBytes(16).toString('hex')}`, subscriptionID: crypto.randomUUID(), resourceGroupName: 'dns-rg' };
const DO_TOKEN = `dop_v1_${crypto.randomBytes(32).toString('hex')}`;
const AKAMAI = {
  clientToken: `akab-${crypto.randomBytes(8).toString('hex')}-${crypto.randomBytes(8).toString('hex')}`,
  clientSecret: crypto.randomBytes(32).toString('base64'),
  accessToken: `akab-${crypto.randomBytes(8).toString('hex')}-${crypto.randomBytes(8).toString('hex')}`,
};
/** the API client's host: the controller signs for https://<it>, which is redirected to the rig */
const AKAMAI_SCD = 'akab-test.luna.akamaiapis.net';

/** What a vendor's API published into challtestsrv: every name it ever set a TXT value at, and the values there now. */
interface Published {
  everSet: Set<string>;
  now: Map<string, string[]>;
}

/** challtestsrv as the rigs see it, recording what each one publishes (names without the trailing dot). */
function recording(cts: ChallTestSrv): { cts: ChallTestSrv; published: Published } {
  const published: Published = { everSet: new Set(), now: new Map() };
  const host = (fqdn: string) => fqdn.replace(/\.$/, '').toLowerCase();
  return {
    published,
    cts: {
      ...cts,
      async setTXT(fqdn, value) {
        await cts.setTXT(fqdn, value);
        published.everSet.add(host(fqdn));
        published.now.set(host(fqdn), [...(published.now.get(host(fqdn)) ?? []), value]);
      },
      async clearTXT(fqdn) {
        await cts.clearTXT(fqdn);
        published.now.delete(host(fqdn));
      },
    },
  };
}

const yaml = (docs: unknown[]) => docs.map((d) => JSON.stringify(d)).join('\n---\n');

describe('DNS-01 providers in certsmith controller mode (a separate process, Secrets through the API)', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let cf: CloudflareAPI;
  let r53: Route53API;
  let sts: STSAPI;
  /** Route 53 takes the long-term keys and whatever STS hands out (with its session token) */
  const awsKeys: Record<string, string> = { [AWS_KEYS.id]: AWS_KEYS.secret, [AWS_AMBIENT.id]: AWS_AMBIENT.secret };
  const sessionTokens: Record<string, string> = {};
  let gc: CloudDNSAPI;
  let az: AzureDNSAPI;
  let dos: DigitalOceanAPI;
  let acmeDNS: AcmeDNSAPI;
  let akamai: AkamaiAPI;
  let server: RunningServer | undefined;
  let controller: RunningController | undefined;
  let store: HttpStore;
  const published: Record<string, Published> = {};
  const tmp = mkdtempSync(join(tmpdir(), 'certsmith-dns01-ctl-'));

  /** provider → the Certificate's dnsName; zones are one per provider so each rig's traffic is its own */
  const names = {
    cloudflare: `cf-${uniq()}.cf.test`,
    route53Keys: `k-${uniq()}.r53.test`,
    route53Role: `r-${uniq()}.r53-role.test`,
    route53Ambient: `a-${uniq()}.r53-ambient.test`,
    cloudDNSKey: `k-${uniq()}.gc.test`,
    cloudDNSAmbient: `a-${uniq()}.gc-ambient.test`,
    azureSecret: `s-${uniq()}.az.test`,
    azureManagedIdentity: `m-${uniq()}.az-mi.test`,
    digitalocean: `d-${uniq()}.do.test`,
    acmeDNS: `n-${uniq()}.acme-dns-client.test`,
    akamai: `e-${uniq()}.ak.test`,
  };
  type Provider = keyof typeof names;
  const certName = (p: Provider) => `dns01-${p.toLowerCase()}`;

  before(async () => {
    cts = await startChallTestSrv();
    const rec = (p: string) => {
      const r = recording(cts);
      published[p] = r.published;
      return r.cts;
    };
    // each handle is kept as soon as it exists, so that `after` stops it even when another one failed to start
    const started = await Promise.allSettled([
      (async () => (pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() })))(),
      startCloudflareAPI({ zones: ['cf.test'], token: CF_TOKEN, challtestsrv: rec('cloudflare') }).then((v) => (cf = v)),
      startRoute53API({ zones: ['r53.test', 'r53-role.test', 'r53-ambient.test'], keys: awsKeys, sessionTokens, challtestsrv: rec('route53') }).then((v) => (r53 = v)),
      startSTSAPI({
        keys: { [AWS_KEYS.id]: AWS_KEYS.secret }, roles: [AWS_ROLE],
        onAssumed: (c) => {
          awsKeys[c.accessKeyId] = c.secretAccessKey;
          sessionTokens[c.accessKeyId] = c.sessionToken;
        },
      }).then((v) => (sts = v)),
      startCloudDNSAPI({ project: GCP_PROJECT, zones: [{ name: 'gc-zone', dnsName: 'gc.test.' }, { name: 'gc-ambient-zone', dnsName: 'gc-ambient.test.' }], challtestsrv: rec('cloudDNS') }).then((v) => (gc = v)),
      startAzureDNSAPI({ ...AZ, zones: ['az.test', 'az-mi.test'], challtestsrv: rec('azureDNS') }).then((v) => (az = v)),
      startDigitalOceanAPI({ domains: ['do.test'], token: DO_TOKEN, challtestsrv: rec('digitalocean') }).then((v) => (dos = v)),
      startAcmeDNSAPI({ authDomain: 'auth.acme-dns.test', challtestsrv: rec('acmeDNS') }).then((v) => (acmeDNS = v)),
      startAkamaiAPI({ zones: ['ak.test'], credentials: AKAMAI, challtestsrv: rec('akamai'), signedFor: `https://${AKAMAI_SCD}` }).then((v) => (akamai = v)),
      startServer({ args: ['--no-controllers'] }).then((v) => (server = v)),
    ]);
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    const cfg = loadClientConfig({ kubeconfig: server!.kubeconfig });
    store = new HttpStore({ server: cfg.server, caPem: cfg.caPem, token: cfg.token, qps: 0 });

    // acme-dns: the user points _acme-challenge at the account's fulldomain once, by hand
    const account = acmeDNS.register();
    await cts.setCNAME(`_acme-challenge.${names.acmeDNS}`, account.fulldomain);
    // application default credentials: a key file named by GOOGLE_APPLICATION_CREDENTIALS (its token_uri is the rig's)
    const adcKey = join(tmp, 'adc.json');
    writeFileSync(adcKey, gc.serviceAccountKey(`ambient@${GCP_PROJECT}.iam.gserviceaccount.com`), { mode: 0o600 });

    const secret = (namespace: string, name: string, data: Record<string, string>) => ({
      apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque',
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    });
    const acme = (issuer: string, dns01: Record<string, unknown>) => ({
      acme: {
        server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
        privateKeySecretRef: { name: `${issuer}-account` }, solvers: [{ dns01 }],
      },
    });
    const clusterIssuer = (p: Provider, dns01: Record<string, unknown>) => ({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: certName(p) }, spec: acme(certName(p), dns01),
    });
    const azure = { subscriptionID: AZ.subscriptionID, resourceGroupName: AZ.resourceGroupName };
    const applied = await server!.cli(['apply', '-f', '-'], {
      input: yaml([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CLUSTER_RESOURCE_NS } },
        secret(CLUSTER_RESOURCE_NS, 'cloudflare', { 'api-token': CF_TOKEN }),
        secret(CLUSTER_RESOURCE_NS, 'route53', { 'access-key-id': AWS_KEYS.id, 'secret-access-key': AWS_KEYS.secret }),
        secret(CLUSTER_RESOURCE_NS, 'clouddns', { 'key.json': gc.serviceAccountKey() }),
        secret(CLUSTER_RESOURCE_NS, 'azuredns', { 'client-secret': AZ.clientSecret }),
        secret(CLUSTER_RESOURCE_NS, 'acme-dns', { 'acmedns.json': JSON.stringify({ [names.acmeDNS]: account }) }),
        secret(CLUSTER_RESOURCE_NS, 'akamai', { 'client-token': AKAMAI.clientToken, 'client-secret': AKAMAI.clientSecret, 'access-token': AKAMAI.accessToken }),
        // a namespaced Issuer reads its Secret from its own namespace
        secret('default', 'digitalocean', { 'access-token': DO_TOKEN }),
        clusterIssuer('cloudflare', { cloudflare: { apiTokenSecretRef: { name: 'cloudflare', key: 'api-token' } } }),
        clusterIssuer('route53Keys', { route53: { region: 'us-east-1', accessKeyIDSecretRef: { name: 'route53', key: 'access-key-id' }, secretAccessKeySecretRef: { name: 'route53', key: 'secret-access-key' } } }),
        clusterIssuer('route53Role', { route53: { region: 'eu-west-1', accessKeyIDSecretRef: { name: 'route53', key: 'access-key-id' }, secretAccessKeySecretRef: { name: 'route53', key: 'secret-access-key' }, role: AWS_ROLE } }),
        clusterIssuer('route53Ambient', { route53: { region: 'us-east-1' } }),
        clusterIssuer('cloudDNSKey', { cloudDNS: { project: GCP_PROJECT, serviceAccountSecretRef: { name: 'clouddns', key: 'key.json' } } }),
        clusterIssuer('cloudDNSAmbient', { cloudDNS: { project: GCP_PROJECT } }),
        clusterIssuer('azureSecret', { azureDNS: { ...azure, hostedZoneName: 'az.test', clientID: AZ.clientID, tenantID: AZ.tenantID, clientSecretSecretRef: { name: 'azuredns', key: 'client-secret' } } }),
        clusterIssuer('azureManagedIdentity', { azureDNS: { ...azure, hostedZoneName: 'az-mi.test', managedIdentity: { clientID: 'mi-client' } } }),
        clusterIssuer('acmeDNS', { acmeDNS: { host: acmeDNS.url, accountSecretRef: { name: 'acme-dns', key: 'acmedns.json' } } }),
        clusterIssuer('akamai', {
          akamai: {
            serviceConsumerDomain: AKAMAI_SCD,
            clientTokenSecretRef: { name: 'akamai', key: 'client-token' },
            clientSecretSecretRef: { name: 'akamai', key: 'client-secret' },
            accessTokenSecretRef: { name: 'akamai', key: 'access-token' },
          },
        }),
        {
          apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: certName('digitalocean'), namespace: 'default' },
          spec: acme(certName('digitalocean'), { digitalocean: { tokenSecretRef: { name: 'digitalocean', key: 'access-token' } } }),
        },
        ...(Object.keys(names) as Provider[]).map((p) => acmeCertificate(certName(p), [names[p]], certName(p),
          p === 'digitalocean' ? { issuerRef: { name: certName(p), kind: 'Issuer', group: 'cert-manager.io' } } : {})),
      ]),
    });
    assert.equal(applied.code, 0, applied.stderr);

    controller = startController({
      kubeconfig: server!.kubeconfig,
      args: ['--cluster-resource-namespace', CLUSTER_RESOURCE_NS, '--dns01-recursive-nameservers', cts.dnsServer, '--dns01-recursive-nameservers-only'],
      env: {
        // the Deployment's ambient credentials: AWS keys (the default chain's first source), a Google key file
        AWS_ACCESS_KEY_ID: AWS_AMBIENT.id, AWS_SECRET_ACCESS_KEY: AWS_AMBIENT.secret,
        AWS_EC2_METADATA_DISABLED: 'true', AWS_CONFIG_FILE: join(tmp, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(tmp, 'none'),
        GOOGLE_APPLICATION_CREDENTIALS: adcKey,
        // the AWS SDK's own endpoint setting; the fetch clients' vendor endpoints go to their rigs
        AWS_ENDPOINT_URL_ROUTE_53: r53.url, AWS_ENDPOINT_URL_STS: sts.url,
        ...fetchRedirectEnv({
          [CLOUDFLARE_API]: cf.url,
          [DIGITALOCEAN_API]: dos.url,
          [CLOUDDNS_API]: gc.url,
          [AZURE_ENVIRONMENTS.AzurePublicCloud.authority]: az.url,
          [AZURE_ENVIRONMENTS.AzurePublicCloud.arm]: az.url,
          [AZURE_IMDS]: az.url,
          [`https://${AKAMAI_SCD}`]: akamai.url,
        }),
      },
    });
    await controller.waitForOutput(/certsmith controller running against https:\/\/127\.0\.0\.1:\d+/, 60_000);
  });

  after(async () => {
    const code = await controller?.stop();
    await server?.stop();
    server?.cleanup();
    await store?.close();
    await Promise.all([pebble?.stop(), cf?.stop(), r53?.stop(), sts?.stop(), gc?.stop(), az?.stop(), dos?.stop(), acmeDNS?.stop(), akamai?.stop()]);
    await cts?.stop();
    rmSync(tmp, { recursive: true, force: true });
    if (code !== undefined && code !== 0) assert.fail(`certsmith controller exited with ${code} on SIGTERM:\n${controller!.output()}`);
  });

  /** Waits for the Certificate to be Ready and checks its TLS Secret covers the name; what the controller printed is in the failure. */
  async function issued(p: Provider) {
    const name = certName(p);
    await waitIssuedBy(controller!, store, {
      name, dnsName: names[p], issuer: () => (p === 'digitalocean' ? store.get<IssuerObj>(Issuer, 'default', name) : store.get<IssuerObj>(ClusterIssuer, undefined, name)),
    });
  }

  /** The vendor's API published a TXT value at _acme-challenge.NAME and, after validation, removed it. */
  async function presentedAndCleanedUp(provider: string, p: Provider) {
    const fqdn = `_acme-challenge.${names[p]}`;
    const pub = published[provider];
    assert.ok(pub.everSet.has(fqdn), `${provider} published a TXT value at ${fqdn}: ${JSON.stringify([...pub.everSet])}`);
    await waitFor(`${provider}: TXT at ${fqdn} removed`, () => !pub.now.has(fqdn), 15_000);
  }

  test('cloudflare: API token from a Secret in the cluster resource namespace', async () => {
    await issued('cloudflare');
    await presentedAndCleanedUp('cloudflare', 'cloudflare');
    const fqdn = `_acme-challenge.${names.cloudflare}`;
    assert.deepEqual(cf.created.filter((r) => r.name === fqdn).map((r) => r.type), ['TXT']);
    assert.ok(!cf.records.some((r) => r.name === fqdn), 'the record is deleted');
    assert.ok(cf.requests.length && cf.requests.every((r) => r.auth === 'token'));
  });

  test('route53: access key id and secret from a Secret (SigV4 verified)', async () => {
    await issued('route53Keys');
    await presentedAndCleanedUp('route53', 'route53Keys');
    const zone = r53.zones.find((z) => z.name === 'r53.test.')!;
    const changes = r53.requests.filter((r) => r.method === 'POST' && r.path.includes(`/hostedzone/${zone.id}/rrset`) && r.status === 200);
    assert.ok(changes.length >= 2, `an UPSERT and a DELETE: ${JSON.stringify(changes)}`);
    assert.ok(changes.every((r) => r.keyId === AWS_KEYS.id), 'signed with the keys of the Secret');
    assert.deepEqual(r53.sets.get(zone.id), [], 'the set is deleted');
  });

  test('route53: role assumed through STS with the Secret\'s keys; Route 53 sees only the temporary credentials', async () => {
    await issued('route53Role');
    await presentedAndCleanedUp('route53', 'route53Role');
    assert.ok(sts.assumed.length >= 1);
    assert.ok(sts.assumed.every((a) => a.callerKeyId === AWS_KEYS.id && a.roleArn === AWS_ROLE), JSON.stringify(sts.assumed));
    const zone = r53.zones.find((z) => z.name === 'r53-role.test.')!;
    const mine = r53.requests.filter((r) => r.path.includes(zone.id));
    assert.ok(mine.filter((r) => r.method === 'POST' && r.status === 200).length >= 2, `an UPSERT and a DELETE: ${JSON.stringify(mine)}`);
    assert.ok(mine.every((r) => r.keyId?.startsWith('ASIA') && r.keyId in sessionTokens), JSON.stringify(mine));
    assert.deepEqual(r53.sets.get(zone.id), []);
  });

  test('route53: ambient credentials from the controller\'s environment (ClusterIssuer)', async () => {
    await issued('route53Ambient');
    await presentedAndCleanedUp('route53', 'route53Ambient');
    const zone = r53.zones.find((z) => z.name === 'r53-ambient.test.')!;
    const changes = r53.requests.filter((r) => r.method === 'POST' && r.path.includes(`/hostedzone/${zone.id}/rrset`) && r.status === 200);
    assert.ok(changes.length >= 2, `an UPSERT and a DELETE: ${JSON.stringify(changes)}`);
    assert.ok(changes.every((r) => r.keyId === AWS_AMBIENT.id), 'signed with the environment\'s keys');
    assert.deepEqual(r53.sets.get(zone.id), []);
  });

  test('cloudDNS: service account key from a Secret', async () => {
    await issued('cloudDNSKey');
    await presentedAndCleanedUp('cloudDNS', 'cloudDNSKey');
    const name = `_acme-challenge.${names.cloudDNSKey}.`;
    const mine = gc.changes.filter((c) => c.zone === 'gc-zone');
    assert.ok(mine.some((c) => c.additions.some((r) => r.name === name)) && mine.some((c) => c.deletions.some((r) => r.name === name)), JSON.stringify(mine));
    assert.ok(gc.requests.every((r) => r.authorized));
  });

  test('cloudDNS: application default credentials from GOOGLE_APPLICATION_CREDENTIALS (ClusterIssuer)', async () => {
    await issued('cloudDNSAmbient');
    await presentedAndCleanedUp('cloudDNS', 'cloudDNSAmbient');
    const name = `_acme-challenge.${names.cloudDNSAmbient}.`;
    const mine = gc.changes.filter((c) => c.zone === 'gc-ambient-zone');
    assert.ok(mine.some((c) => c.additions.some((r) => r.name === name)) && mine.some((c) => c.deletions.some((r) => r.name === name)), JSON.stringify(mine));
  });

  test('azureDNS: service principal with its client secret from a Secret', async () => {
    await issued('azureSecret');
    await presentedAndCleanedUp('azureDNS', 'azureSecret');
    const rel = `_acme-challenge.${names.azureSecret.replace(/\.az\.test$/, '')}`;
    const mine = az.requests.filter((r) => r.path.includes(`/dnsZones/az.test/TXT/${rel}`));
    assert.ok(mine.some((r) => r.method === 'PUT') && mine.some((r) => r.method === 'DELETE'), JSON.stringify(mine));
    assert.ok(mine.every((r) => r.authorized));
    assert.ok(az.tokens.some((t) => t.via === 'client_credentials' && t.client === AZ.clientID));
    assert.ok(!az.zones.get('az.test')!.has(rel));
  });

  test('azureDNS: managed identity from the host\'s IMDS (ClusterIssuer)', async () => {
    await issued('azureManagedIdentity');
    await presentedAndCleanedUp('azureDNS', 'azureManagedIdentity');
    const rel = `_acme-challenge.${names.azureManagedIdentity.replace(/\.az-mi\.test$/, '')}`;
    const mine = az.requests.filter((r) => r.path.includes(`/dnsZones/az-mi.test/TXT/${rel}`));
    assert.ok(mine.some((r) => r.method === 'PUT') && mine.some((r) => r.method === 'DELETE'), JSON.stringify(mine));
    assert.ok(az.tokens.some((t) => t.via === 'imds' && t.client === 'mi-client'));
    assert.ok(!az.zones.get('az-mi.test')!.has(rel));
  });

  test('digitalocean: a namespaced Issuer, its token from a Secret in its own namespace', async () => {
    await issued('digitalocean');
    await presentedAndCleanedUp('digitalocean', 'digitalocean');
    assert.ok(dos.requests.some((r) => r.method === 'POST' && r.path === '/v2/domains/do.test/records'));
    assert.ok(dos.requests.some((r) => r.method === 'DELETE' && r.path.startsWith('/v2/domains/do.test/records/')));
    assert.ok(dos.requests.every((r) => r.authorized));
    assert.ok(!dos.records.some((r) => r.type === 'TXT'));
  });

  test('acmeDNS: the account JSON from a Secret; the value goes to the account\'s fulldomain (acme-dns has no delete)', async () => {
    await issued('acmeDNS');
    const account = [...published.acmeDNS.everSet];
    assert.equal(account.length, 1, JSON.stringify(account));
    assert.match(account[0], /\.auth\.acme-dns\.test$/);
    assert.deepEqual(acmeDNS.requests.map((r) => r.status), [200]);
  });

  test('akamai: EdgeGrid credentials from Secrets, signed for https://<serviceConsumerDomain> (signature checked)', async () => {
    await issued('akamai');
    await presentedAndCleanedUp('akamai', 'akamai');
    const rr = `_acme-challenge.${names.akamai}`;
    assert.ok(akamai.requests.length && akamai.requests.every((r) => r.authorized), JSON.stringify(akamai.requests.filter((r) => !r.authorized)));
    const writes = akamai.requests.filter((r) => r.method !== 'GET' && r.path.includes(rr));
    assert.deepEqual(writes.map((r) => r.method), ['POST', 'DELETE']);
    assert.ok(!akamai.recordSets.has(`ak.test/${rr}/TXT`), 'the record set is deleted');
  });
});
