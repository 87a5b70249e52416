// Webroot HTTP-01 end to end: Debian's nginx holds the port Pebble validates and serves the
// folder certsmith writes tokens to (--acme-http01-webroot); Pebble resolves names through
// pebble-challtestsrv (every A answer is 127.0.0.1).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startNginx, type Nginx } from '../rig/nginx.ts';
import { verifyChain } from '../rig/csr.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

describe('HTTP-01 webroot served by nginx', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let nginx: Nginx;
  let lc: Lifecycle;
  const challengeDir = () => path.join(nginx.webroot, '.well-known', 'acme-challenge');

  before(async () => {
    cts = await startChallTestSrv();
    const httpPort = await freePort();
    nginx = await startNginx({ port: httpPort, refuse: ['blocked.example.test'] });
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort });
    lc = await startLifecycle({
      clock: realClock,
      options: {
        acmeHTTP01Webroot: nginx.webroot,
        // nginx holds this port: were the embedded listener started, it would fail with EADDRINUSE
        acmeHTTP01Listen: `127.0.0.1:${httpPort}`,
        acmeHTTP01SelfCheckPort: httpPort,
        acmeHTTP01SolverNameservers: [cts.dnsServer],
      },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            { http01: { ingress: {} } },
            // nginx answers 404 for this name: the self-check is skipped so that Pebble tries and fails
            { selector: { dnsNames: ['blocked.example.test'] }, http01: { ingress: {} }, waitInsteadOfSelfCheck: '0s' },
          ],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), nginx?.stop(), cts?.stop()]);
  });

  test('a certificate is issued while nginx keeps the port; the token files are removed afterwards', async () => {
    const name = `w-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('webroot-one', [name]));
    const crt = await waitForReadyCertificate(lc, 'webroot-one');
    const chain = Buffer.from((await lc.secret(crt.spec.secretName))!.data!['tls.crt'], 'base64').toString();
    assert.match(await verifyChain(chain, await pebble.rootPem()), /OK/);
    assert.ok(new crypto.X509Certificate(chain).subjectAltName?.includes(`DNS:${name}`));

    // nginx served the token: the self-check and Pebble's three validations, all 200
    const served = nginx.accessLog().filter((l) => l.startsWith(`${name} `) && l.includes('/.well-known/acme-challenge/'));
    assert.ok(served.length >= 3, served.join('\n'));
    assert.ok(served.every((l) => l.split(' ')[1] === '200'), served.join('\n'));

    // the folders certsmith made are readable by nginx's workers (nobody): 0755
    assert.equal(fs.statSync(challengeDir()).mode & 0o777, 0o755);
    await waitFor('token file removed', async () => fs.readdirSync(challengeDir()).length === 0, async () => fs.readdirSync(challengeDir()));
  });

  test('a challenge Pebble cannot validate is cleaned up too', async () => {
    await lc.apply(acmeCertificate('webroot-blocked', ['blocked.example.test']));
    const failed = await waitFor('challenge invalid and released', async () => {
      const c = (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((x) => x.spec.dnsName === 'blocked.example.test');
      return c?.status?.state === 'invalid' && !c.status.processing && !c.metadata.finalizers?.length ? c : undefined;
    }, async () => (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.map((c) => c.status));
    // nginx was asked for exactly this token (and refused it), and the file is gone
    assert.ok(nginx.accessLog().some((l) => l === `blocked.example.test 404 /.well-known/acme-challenge/${failed.spec.token}`), nginx.accessLog().join('\n'));
    assert.deepEqual(fs.readdirSync(challengeDir()), []);
  });
});
