// ACME faults through the whole controller set: a Pebble that rejects 30% of nonces and requires
// external account binding, and an ACME server that is not there at all.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { verifyChain } from '../rig/csr.ts';
import { startLifecycle, condition, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const EAB_KID = 'kid-1';
const EAB_HMAC = crypto.randomBytes(32).toString('base64url');

describe('ACME faults', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let lc: Lifecycle;

  before(async () => {
    cts = await startChallTestSrv();
    const httpPort = await freePort();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort, nonceReject: 30, eabKeys: { [EAB_KID]: EAB_HMAC } });
    lc = await startLifecycle({ clock: realClock, options: { acmeHTTP01Listen: `127.0.0.1:${httpPort}`, acmeHTTP01SelfCheckPort: httpPort, acmeHTTP01SolverNameservers: [cts.dnsServer] } });
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
  });

  const issuerStatus = async (name: string) => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, name))?.status;

  test('with EAB and 30% of nonces rejected, every certificate is still issued', async () => {
    await lc.apply<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'eab', namespace: 'cert-manager' }, data: { secret: b64(EAB_HMAC) } });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'eab' },
      spec: {
        acme: {
          server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'eab-account' },
          externalAccountBinding: { keyID: EAB_KID, keySecretRef: { name: 'eab', key: 'secret' } },
          solvers: [{ http01: { ingress: {} } }],
        },
      },
    });
    await waitFor('EAB issuer Ready', async () => ready({ status: await issuerStatus('eab') }), () => issuerStatus('eab'));
    const names = ['one', 'two', 'three', 'four'];
    for (const n of names) await lc.apply(acmeCertificate(`nonce-${n}`, [`${n}-${uniq()}.example.test`], 'eab'));
    const root = await pebble.rootPem();
    for (const n of names) {
      const crt = await waitForReadyCertificate(lc, `nonce-${n}`);
      const secret = await lc.secret(crt.spec.secretName);
      assert.match(await verifyChain(Buffer.from(secret!.data!['tls.crt'], 'base64').toString(), root), /OK/);
    }
  });

  test('an issuer whose EAB key Secret is missing is not Ready and says why', async () => {
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'eab-missing' },
      spec: {
        acme: {
          server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'eab-missing-account' },
          externalAccountBinding: { keyID: EAB_KID, keySecretRef: { name: 'no-such-secret', key: 'secret' } },
        },
      },
    });
    const st = await waitFor('not Ready', async () => {
      const s = await issuerStatus('eab-missing');
      return condition({ status: s }, 'Ready')?.status === 'False' ? s : undefined;
    });
    const cond = condition({ status: st }, 'Ready') as { reason?: string; message?: string };
    assert.equal(cond.reason, 'ErrRegisterACMEAccount');
    assert.match(cond.message ?? '', /no-such-secret/);
  });

  test('an unreachable ACME server marks the issuer not Ready with the reason', async () => {
    const port = await freePort();
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'unreachable' },
      spec: { acme: { server: `https://127.0.0.1:${port}/dir`, privateKeySecretRef: { name: 'unreachable-account' } } },
    });
    const st = await waitFor('not Ready', async () => {
      const s = await issuerStatus('unreachable');
      return condition({ status: s }, 'Ready')?.status === 'False' ? s : undefined;
    }, () => issuerStatus('unreachable'));
    const cond = condition({ status: st }, 'Ready') as { reason?: string; message?: string };
    assert.equal(cond.reason, 'ErrRegisterACMEAccount');
    assert.match(cond.message ?? '', /Failed to register ACME account: .*ECONNREFUSED/);
  });
});
