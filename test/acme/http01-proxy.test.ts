// HTTP-01 through the user's nginx proxying /.well-known/acme-challenge/ to certsmith's listener on
// a private port (the README's alternative to the webroot). The CA fetches the token on port 80,
// the web server's; the self-check must ask there too, not the listener's private port, which
// always answers: asking the listener passed a check the CA then failed (a failed validation
// against the CA and an hour of backoff), and on a real host (the listener on 127.0.0.1, the
// self-check at the public address) never passed at all.
// Pebble's HTTP-01 port stands in for 80 (--acme-http01-self-check-port); pebble-challtestsrv
// answers every name with 127.0.0.1.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startNginx, type Nginx } from '../rig/nginx.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

describe('HTTP-01 through nginx proxying to the listener', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let nginx: Nginx;
  let lc: Lifecycle;
  let listenPort: number;

  before(async () => {
    cts = await startChallTestSrv();
    const webPort = await freePort();
    listenPort = await freePort();
    nginx = await startNginx({ port: webPort, proxyChallengesTo: listenPort, refuse: ['blocked.example.test'] });
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: webPort });
    lc = await startLifecycle({
      clock: realClock,
      options: { acmeHTTP01Listen: `127.0.0.1:${listenPort}`, acmeHTTP01SelfCheckPort: webPort, acmeHTTP01SolverNameservers: [cts.dnsServer] },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'pebble-account' }, solvers: [{ http01: { ingress: {} } }] } },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), nginx?.stop(), cts?.stop()]);
  });

  test('the certificate is issued, the token fetched through nginx by the self-check and by the CA', async () => {
    const name = `proxied-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('proxied', [name]));
    await waitForReadyCertificate(lc, 'proxied');
    const fetched = nginx.accessLog().filter((l) => l.startsWith(`${name} 200 /.well-known/acme-challenge/`));
    assert.ok(fetched.length >= 2, `the self-check and Pebble both went through nginx: ${JSON.stringify(nginx.accessLog())}`);
  });

  test('where the web server does not pass the token on, the self-check fails and nothing is sent to the CA', async () => {
    await lc.apply(acmeCertificate('blocked', ['blocked.example.test']));
    const challenges = async () => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.filter((c) => c.spec.dnsName === 'blocked.example.test');
    const waiting = await waitFor('the self-check fails', async () => (await challenges()).find((c) => /404/.test(c.status?.reason ?? '')), challenges);
    assert.match(waiting.status!.reason!, new RegExp(`:${nginx.port}/`), 'the self-check asked the web server\'s port');
    // a while later: still waiting, never handed to the CA (which would fail it: a failed validation)
    await new Promise((r) => setTimeout(r, 4000));
    for (const c of await challenges()) {
      assert.notEqual(c.status?.state, 'invalid', JSON.stringify(c.status));
      assert.equal(c.status?.processing, true, JSON.stringify(c.status));
    }
    assert.ok(nginx.accessLog().every((l) => !l.startsWith('blocked.example.test 200')), 'nothing answered the token for this name');
  });
});
