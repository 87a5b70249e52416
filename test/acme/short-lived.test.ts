// Issue 16: Let's Encrypt's 6-day (160 h) certificates, from Pebble configured the same way:
// a DNS name and an IP address issue, and both renew at half their life (renewal-time.ts);
// the retry schedule of a failing one is in src/controllers/certificates/backoff.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { apply, startCertsmith, stopKeeper, waitAllReady, type Target } from './restart-rig.ts';

let cts: ChallTestSrv;
let pebble: Pebble;
let target: Target;
let s: RunningServer;
let dir: string;

before(async () => {
  cts = await startChallTestSrv();
  const httpPort = await freePort();
  target = { cts, httpPort };
  pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort, certificateValidityPeriod: 160 * 3600 });
  dir = mkdtempSync(join(tmpdir(), 'certsmith-short-'));
  s = await startCertsmith(target, dir);
});
after(async () => {
  s?.kill();
  await s?.stop();
  if (target) await stopKeeper(target);
  await Promise.all([pebble?.stop(), cts?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

test('160-hour certificates (a DNS name and an IP address) issue and renew at half their life', async () => {
  const b64 = (x: string) => Buffer.from(x).toString('base64');
  const dnsName = `short-${crypto.randomBytes(3).toString('hex')}.example.test`;
  await apply(s, [
    `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: short }\nspec:\n  acme:\n    server: ${pebble.directoryUrl}\n    caBundle: ${b64(pebble.caPem)}\n    privateKeySecretRef: { name: short-account }\n    solvers: [ { http01: { ingress: {} } } ]`,
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: short-dns, namespace: default }\nspec: { secretName: short-dns-tls, dnsNames: [${dnsName}], privateKey: { algorithm: ECDSA }, issuerRef: { name: short, kind: ClusterIssuer } }`,
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: short-ip, namespace: default }\nspec: { secretName: short-ip-tls, ipAddresses: [127.0.0.1], privateKey: { algorithm: ECDSA }, issuerRef: { name: short, kind: ClusterIssuer } }`,
  ].join('\n---\n'));
  const certs = await waitAllReady(s, ['short-dns', 'short-ip'], 60_000);
  for (const c of certs as { metadata: { name: string }; status?: { notBefore?: string; notAfter?: string; renewalTime?: string } }[]) {
    const nb = Date.parse(c.status!.notBefore!);
    const na = Date.parse(c.status!.notAfter!);
    const rt = Date.parse(c.status!.renewalTime!);
    console.log(`[160 h] ${c.metadata.name}: notBefore=${c.status!.notBefore} notAfter=${c.status!.notAfter} life=${((na - nb) / 3_600_000).toFixed(2)}h renewalTime=${c.status!.renewalTime} (${((rt - nb) / (na - nb) * 100).toFixed(1)}% of the life)`);
    assert.ok(na - nb < 10 * 86_400_000, 'shorter than 10 days');
    assert.equal(rt, Math.floor((nb + na) / 2 / 1000) * 1000, 'renewal at half the life');
  }
});
