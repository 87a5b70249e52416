// Issue 20: while the ACME server cannot be reached, the Issuer says so in its Ready condition
// (not only Events on Orders and Challenges), is asked again with backoff, and is Ready again once
// the server answers; the certificate asked for meanwhile is then issued. The server goes away
// behind the fault proxy (its upstream pointed at a closed port: connections are cut).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

describe('an unreachable ACME server shows on the Issuer', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let proxy: FaultProxy;
  let lc: Lifecycle;
  const readyCondition = async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status?.conditions?.find((c) => c.type === 'Ready');

  before(async () => {
    cts = await startChallTestSrv();
    const httpPort = await freePort();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort });
    proxy = await startFaultProxy({ upstream: pebble.directoryUrl, upstreamCaPem: pebble.caPem });
    lc = await startLifecycle({ clock: realClock, options: { acmeHTTP01Listen: `127.0.0.1:${httpPort}`, acmeHTTP01SelfCheckPort: httpPort, acmeHTTP01SolverNameservers: [cts.dnsServer] } });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: { acme: { server: proxy.directoryUrl, caBundle: b64(proxy.caPem), privateKeySecretRef: { name: 'pebble-account' }, solvers: [{ http01: { ingress: {} } }] } },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')), readyCondition, 60_000);
  });
  after(async () => {
    await lc?.stop();
    await proxy?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
  });

  test('Ready=False with the reason and the error while the server is away; Ready again and the certificate issued once it is back', async () => {
    const account = (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status?.acme?.uri;
    proxy.setUpstream(`https://127.0.0.1:${await freePort()}`, pebble.caPem);
    await lc.apply(acmeCertificate('while-away', [`away-${uniq()}.example.test`]));
    const down = await waitFor('issuer Ready=False', async () => {
      const c = await readyCondition();
      return c?.status === 'False' ? c : undefined;
    }, readyCondition, 60_000);
    assert.match(down.reason ?? '', /^Err(Verify|Register)ACMEAccount$/);
    assert.match(down.message ?? '', /(cannot be reached|Failed to register ACME account): .*(ECONNRESET|socket hang up|ECONNREFUSED|other side closed|fetch failed)/);
    // asked again with backoff while away: it stays not Ready, with the error
    await new Promise((r) => setTimeout(r, 6000));
    const still = await readyCondition();
    assert.equal(still?.status, 'False', JSON.stringify(still));

    proxy.setUpstream(pebble.directoryUrl, pebble.caPem);
    const up = await waitFor('issuer Ready again', async () => {
      const c = await readyCondition();
      return c?.status === 'True' ? c : undefined;
    }, readyCondition, 90_000);
    assert.equal(up.reason, 'ACMEAccountRegistered');
    assert.equal((await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status?.acme?.uri, account, 'the same account');
    await waitForReadyCertificate(lc, 'while-away', 90_000);
  });
});
