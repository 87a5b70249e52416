// Route 53 `auth.kubernetes.serviceAccountRef` (issues 14/15: accepted and silently ignored until
// now). The cluster path: the controllers' TokenRequest calls go through a real HttpStore (as in
// `certsmith controller`) to a loopback kube-apiserver TokenRequest endpoint (test/rig/kube-token-api.ts)
// that mints RS256 ServiceAccount tokens; STS (test/rig/sts-api.ts) verifies each token's signature,
// issuer, expiry and the role's sub/aud trust condition in AssumeRoleWithWebIdentity; Route 53
// (test/rig/route53-api.ts) accepts only the credentials STS handed out, and Pebble validates the
// record through challtestsrv. The embedded path: no ServiceAccount tokens, so the Issuer is
// Ready=False naming route53.auth.kubernetes as unsupported there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { HttpStore } from '../../src/store/http/http-store.ts';
import { serviceAccountTokenRequester } from '../../src/store/kube/token-request.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startRoute53API, type Route53API } from '../rig/route53-api.ts';
import { startSTSAPI, type STSAPI } from '../rig/sts-api.ts';
import { startKubeTokenAPI, type KubeTokenAPI } from '../rig/kube-token-api.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate, waitForInvalidSolverConfig } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const ROLE = 'arn:aws:iam::123456789012:role/certsmith-irsa';
const CALLER = crypto.randomBytes(16).toString('hex');

describe('Route 53 auth.kubernetes: a ServiceAccount token from TokenRequest exchanged at STS AssumeRoleWithWebIdentity', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let kube: KubeTokenAPI;
  let sts: STSAPI;
  let r53: Route53API;
  // the embedded server's own rigs: what the cluster tests' retries and clean-ups send cannot be counted as its calls
  let embeddedSts: STSAPI;
  let embeddedR53: Route53API;
  let lc: Lifecycle;
  let embedded: Lifecycle;
  const assumedKeys: Record<string, string> = {};
  const sessionTokens: Record<string, string> = {};
  const issuer = (name: string, route53: Record<string, unknown>) => ({
    apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name },
    spec: { acme: { server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers: [{ dns01: { route53: { region: 'eu-west-1', ...route53 } } }] } },
  });
  const sa = (name: string, audiences?: string[]) => ({ auth: { kubernetes: { serviceAccountRef: { name, ...(audiences ? { audiences } : {}) } } } });

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    kube = await startKubeTokenAPI({
      callerToken: CALLER,
      serviceAccounts: ['cert-manager/route53-dns', 'cert-manager/other'],
      grants: ['cert-manager/route53-dns', 'cert-manager/other', 'cert-manager/missing'],
    });
    sts = await startSTSAPI({
      keys: {}, roles: [],
      webIdentity: { issuer: kube.issuer, publicKey: kube.publicKey, roles: { [ROLE]: { sub: 'system:serviceaccount:cert-manager:route53-dns', aud: 'sts.amazonaws.com' } } },
      onAssumed: (c) => {
        assumedKeys[c.accessKeyId] = c.secretAccessKey;
        sessionTokens[c.accessKeyId] = c.sessionToken;
      },
    });
    r53 = await startRoute53API({ zones: ['irsa.test'], keys: assumedKeys, sessionTokens, challtestsrv: cts });
    const apis = { route53: r53.url, sts: sts.url };
    const common = { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01ProviderAPIs: apis };
    // the cluster path: TokenRequest through the same HttpStore `certsmith controller` talks to its API server with
    const cluster = new HttpStore({ server: kube.url, token: CALLER, qps: 0, burst: 0 });
    lc = await startLifecycle({ clock: realClock, options: { ...common, serviceAccountToken: serviceAccountTokenRequester(cluster) } });
    embeddedSts = await startSTSAPI({ keys: {}, roles: [] });
    embeddedR53 = await startRoute53API({ zones: ['irsa.test'], keys: {}, challtestsrv: cts });
    embedded = await startLifecycle({ clock: realClock, options: { ...common, dns01ProviderAPIs: { route53: embeddedR53.url, sts: embeddedSts.url } } });
  });
  after(async () => {
    await lc?.stop();
    await embedded?.stop();
    await Promise.all([pebble?.stop(), r53?.stop(), sts?.stop(), embeddedR53?.stop(), embeddedSts?.stop(), kube?.stop(), cts?.stop()]);
  });

  test('cluster: a token for the ServiceAccount (audience sts.amazonaws.com, 600 s) is exchanged for the role; only its credentials reach Route 53; a certificate is issued', async () => {
    await lc.apply(issuer('irsa', { role: ROLE, ...sa('route53-dns') }));
    await waitFor('irsa Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'irsa')), async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'irsa'))?.status, 60_000);
    const name = `w-${uniq()}.irsa.test`;
    await lc.apply(acmeCertificate('irsa-cert', [name], 'irsa'));
    await waitForReadyCertificate(lc, 'irsa-cert', 60_000);
    await waitFor('record set cleaned up', async () => r53.requests.filter((r) => r.method === 'POST' && r.status === 200).length >= 2, async () => r53.requests);
    const mine = kube.requests.filter((r) => r.name === 'route53-dns');
    assert.ok(mine.length >= 1);
    assert.ok(mine.every((r) => r.namespace === 'cert-manager' && r.status === 201 && r.expirationSeconds === 600 && JSON.stringify(r.audiences) === '["sts.amazonaws.com"]'), JSON.stringify(mine));
    assert.ok(sts.assumed.length >= 1);
    assert.ok(sts.assumed.every((a) => a.roleArn === ROLE && a.subject === 'system:serviceaccount:cert-manager:route53-dns' && a.callerKeyId === '' && a.sessionName === 'certsmith'), JSON.stringify(sts.assumed));
    assert.ok(r53.requests.length > 0 && r53.requests.every((r) => r.keyId && r.keyId in assumedKeys && r.keyId.startsWith('ASIA')), JSON.stringify(r53.requests));
  });

  test('cluster: a ServiceAccount the role does not trust, a wrong audience, a missing ServiceAccount, no role: Ready=False with the reason', async () => {
    await lc.apply(issuer('irsa-other', { role: ROLE, ...sa('other') }));
    await lc.apply(issuer('irsa-aud', { role: ROLE, ...sa('route53-dns', ['not-sts']) }));
    await lc.apply(issuer('irsa-missing', { role: ROLE, ...sa('missing') }));
    await lc.apply(issuer('irsa-norole', sa('route53-dns')));
    await waitForInvalidSolverConfig(lc, 'irsa-other', /AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity/);
    await waitForInvalidSolverConfig(lc, 'irsa-aud', /AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity/);
    await waitForInvalidSolverConfig(lc, 'irsa-missing', /route53\.auth\.kubernetes: token for serviceaccount "cert-manager\/missing": .*not found/);
    await waitForInvalidSolverConfig(lc, 'irsa-norole', /route53\.role is required with route53\.auth\.kubernetes/);
    assert.ok(kube.requests.some((r) => r.name === 'route53-dns' && JSON.stringify(r.audiences) === '["not-sts"]'), 'the audiences given replace the default');
  });

  test('embedded server: no ServiceAccount tokens, so the Issuer is Ready=False naming route53.auth.kubernetes; nothing is asked of STS or Route 53', async () => {
    await embedded.apply(issuer('irsa-embedded', { role: ROLE, ...sa('route53-dns') }));
    await waitForInvalidSolverConfig(embedded, 'irsa-embedded', /solvers\[0\]\.dns01: route53\.auth\.kubernetes is not supported on the embedded server \(certsmith server\)/);
    assert.equal(embeddedSts.requests.length, 0);
    assert.equal(embeddedR53.requests.length, 0);
  });
});
