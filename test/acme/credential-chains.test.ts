// The credential chains of two DNS-01 providers beyond static keys (issue 14), each against
// loopback servers that check the credentials for real, issuing from Pebble through challtestsrv:
// - Route 53 `role`: the Issuer's keys sign an STS AssumeRole (SigV4 verified by
//   test/rig/sts-api.ts), and the Route 53 calls then carry the assumed temporary credentials
//   (the Route 53 rig knows only those keys, and wants their session token, signed).
// - Cloud DNS application default credentials from GOOGLE_APPLICATION_CREDENTIALS: a service
//   account key file, exchanged as an RS256 JWT bearer grant at the key's token_uri (the Cloud DNS
//   rig's token endpoint); the metadata server is a closed port, so nothing else can have worked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { realClock } from '../../src/runtime/clock.ts';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startRoute53API, type Route53API } from '../rig/route53-api.ts';
import { startSTSAPI, type STSAPI } from '../rig/sts-api.ts';
import { startCloudDNSAPI, type CloudDNSAPI } from '../rig/clouddns-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const KEY_ID = `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
const SECRET = crypto.randomBytes(30).toString('base64');
const ROLE = 'arn:aws:iam::123456789012:role/certsmith-dns01';
const PROJECT = 'certsmith-adc';

describe('credential chains: Route 53 role assumption through STS, Cloud DNS application default credentials from a key file', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let r53: Route53API;
  let sts: STSAPI;
  let gc: CloudDNSAPI;
  let lc: Lifecycle;
  let dir: string;
  // Route 53 accepts only credentials STS handed out
  const assumedKeys: Record<string, string> = {};
  const sessionTokens: Record<string, string> = {};
  const saved = process.env.GOOGLE_APPLICATION_CREDENTIALS;
  const issuer = (name: string, solvers: unknown[]) => ({
    apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name },
    spec: { acme: { server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers } },
  });

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    sts = await startSTSAPI({
      keys: { [KEY_ID]: SECRET }, roles: [ROLE],
      onAssumed: (c) => {
        assumedKeys[c.accessKeyId] = c.secretAccessKey;
        sessionTokens[c.accessKeyId] = c.sessionToken;
      },
    });
    r53 = await startRoute53API({ zones: ['r53.test'], keys: assumedKeys, sessionTokens, challtestsrv: cts });
    gc = await startCloudDNSAPI({ project: PROJECT, zones: [{ name: 'gc-test', dnsName: 'gc.test.' }], challtestsrv: cts });
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'certsmith-adc-'));
    const keyFile = path.join(dir, 'application_default_credentials.json');
    await fs.writeFile(keyFile, gc.serviceAccountKey(), { mode: 0o600 });
    process.env.GOOGLE_APPLICATION_CREDENTIALS = keyFile;
    const closed = await freePort();
    lc = await startLifecycle({
      clock: realClock,
      options: {
        dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true,
        dns01ProviderAPIs: { route53: r53.url, sts: sts.url, cloudDNS: gc.url, googleMetadata: `http://127.0.0.1:${closed}` },
      },
    });
    await lc.apply<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws', namespace: 'cert-manager' }, data: { 'secret-access-key': b64(SECRET) } });
    await lc.apply(issuer('r53-role', [{ dns01: { route53: { region: 'eu-west-1', accessKeyID: KEY_ID, secretAccessKeySecretRef: { name: 'aws', key: 'secret-access-key' }, role: ROLE } } }]));
    await lc.apply(issuer('gc-adc', [{ dns01: { cloudDNS: { project: PROJECT } } }]));
    for (const n of ['r53-role', 'gc-adc']) {
      await waitFor(`${n} Ready`, async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, n)), async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, n))?.status, 60_000);
    }
  });
  after(async () => {
    if (saved === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    else process.env.GOOGLE_APPLICATION_CREDENTIALS = saved;
    await lc?.stop();
    await Promise.all([pebble?.stop(), r53?.stop(), sts?.stop(), gc?.stop(), cts?.stop()]);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  test('Route 53 role: the Issuer keys sign AssumeRole; every Route 53 call is signed with the assumed key and its session token', async () => {
    const name = `r-${uniq()}.r53.test`;
    await lc.apply(acmeCertificate('r53-role-cert', [name], 'r53-role'));
    await waitForReadyCertificate(lc, 'r53-role-cert', 60_000);
    assert.ok(sts.assumed.length >= 1);
    assert.ok(sts.assumed.every((a) => a.callerKeyId === KEY_ID && a.roleArn === ROLE && a.sessionName === 'certsmith'), JSON.stringify(sts.assumed));
    // presented, then cleaned up: two accepted changes
    await waitFor('record set cleaned up', async () => r53.requests.filter((r) => r.method === 'POST' && r.status === 200).length >= 2, async () => r53.requests);
    // only assumed (ASIA) keys reach Route 53; the Issuer's long-term key never does
    assert.ok(r53.requests.every((r) => r.keyId && r.keyId in assumedKeys && r.keyId.startsWith('ASIA')), JSON.stringify(r53.requests));
    assert.ok(!r53.requests.some((r) => r.keyId === KEY_ID));
  });

  test('a role the keys may not assume makes the Issuer Ready=False with STS AccessDenied', async () => {
    await lc.apply(issuer('r53-denied', [{ dns01: { route53: { region: 'eu-west-1', accessKeyID: KEY_ID, secretAccessKeySecretRef: { name: 'aws', key: 'secret-access-key' }, role: 'arn:aws:iam::123456789012:role/not-mine' } } }]));
    const m = await waitForInvalidSolverConfig(lc, 'r53-denied', /not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::123456789012:role\/not-mine/);
    assert.ok(!m.includes(SECRET));
    assert.ok(sts.requests.some((r) => r.code === 'AccessDenied'));
  });

  test('Cloud DNS application default credentials: the key file named by GOOGLE_APPLICATION_CREDENTIALS is exchanged at its token_uri', async () => {
    const tokensBefore = gc.tokenRequests;
    const name = `g-${uniq()}.gc.test`;
    await lc.apply(acmeCertificate('gc-adc-cert', [name], 'gc-adc'));
    await waitForReadyCertificate(lc, 'gc-adc-cert', 60_000);
    assert.ok(gc.tokenRequests >= 1 && gc.tokenRequests >= tokensBefore, `token exchanges: ${gc.tokenRequests}`);
    const writes = () => gc.requests.filter((r) => r.method === 'POST' && r.path.includes('/managedZones/gc-test/changes'));
    await waitFor('rrset cleaned up', async () => writes().length >= 2, async () => gc.requests);
    assert.ok(gc.requests.every((r) => r.authorized), JSON.stringify(gc.requests));
  });
});
