// Issue 16: "revoke a certificate when ... its key is rotated away", opt-in. Against Pebble: a
// Certificate annotated acme.certsmith.io/revoke-on-key-rotation with rotationPolicy Always is
// renewed (certsmith renew); the certificate of the replaced key is revoked at the CA with reason
// superseded (4), as Pebble's management API reports. A renewal that keeps the key (rotationPolicy
// Never) revokes nothing, and without the annotation nothing is revoked either.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { apply, startCertsmith, stopKeeper, waitAllReady, type Target } from './restart-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');

let cts: ChallTestSrv;
let pebble: Pebble;
let target: Target;
let s: RunningServer;
const dir = mkdtempSync(join(tmpdir(), 'certsmith-revoke-rotation-'));

before(async () => {
  cts = await startChallTestSrv();
  target = { cts, httpPort: await freePort() };
  pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: target.httpPort });
  s = await startCertsmith(target, dir);
  await apply(s, `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: pebble }\nspec:\n  acme:\n    server: ${pebble.directoryUrl}\n    caBundle: ${b64(pebble.caPem)}\n    privateKeySecretRef: { name: pebble-account }\n    solvers: [ { http01: { ingress: {} } } ]`);
});

after(async () => {
  await s?.stop();
  if (target) await stopKeeper(target);
  await Promise.all([pebble?.stop(), cts?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

function pebbleCertStatus(serialHex: string): Promise<{ Status: string; Reason?: number }> {
  return new Promise((resolve, reject) => {
    https.get(`${pebble.managementUrl}/cert-status-by-serial/${serialHex}`, { ca: pebble.caPem, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`HTTP ${res.statusCode}: ${body}`))));
    }).on('error', reject);
  });
}

async function leaf(name: string): Promise<{ serial: string; spki: string }> {
  const r = await s.cli(['get', 'secret', '-n', 'default', `${name}-tls`, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const x = new crypto.X509Certificate(Buffer.from((JSON.parse(r.stdout) as { data: Record<string, string> }).data['tls.crt'], 'base64').toString('utf8'));
  return { serial: BigInt(`0x${x.serialNumber}`).toString(16), spki: x.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };
}

async function issue(certs: { name: string; rotationPolicy: 'Always' | 'Never'; annotated: boolean }[]): Promise<void> {
  await apply(s, certs.map(({ name, rotationPolicy, annotated }) => {
    const annotations = annotated ? ', annotations: { acme.certsmith.io/revoke-on-key-rotation: "true" }' : '';
    return `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default${annotations} }\nspec: { secretName: ${name}-tls, dnsNames: [${name}-${uniq()}.example.test], privateKey: { algorithm: ECDSA, rotationPolicy: ${rotationPolicy} }, issuerRef: { name: pebble, kind: ClusterIssuer } }`;
  }).join('\n---\n'));
  await waitAllReady(s, certs.map((c) => c.name), 60_000);
}

/** certsmith renew, then wait for a certificate with another serial */
async function renew(name: string, before: string): Promise<{ serial: string; spki: string }> {
  const r = await s.cli(['renew', name, '-n', 'default']);
  assert.equal(r.code, 0, r.stderr);
  for (let i = 0; ; i++) {
    const now = await leaf(name);
    if (now.serial !== before) return now;
    assert.ok(i < 600, `${name} renewed`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function waitRevoked(serial: string): Promise<{ Status: string; Reason?: number }> {
  for (let i = 0; ; i++) {
    const st = await pebbleCertStatus(serial);
    if (st.Status === 'Revoked') return st;
    assert.ok(i < 600, `serial ${serial} revoked`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

test('rotationPolicy Always + revoke-on-key-rotation: the replaced key\'s certificate is revoked (superseded); the new one stays valid', async () => {
  const name = 'rotated';
  await issue([{ name, rotationPolicy: 'Always', annotated: true }]);
  const first = await leaf(name);
  const second = await renew(name, first.serial);
  assert.notEqual(second.spki, first.spki, 'a new key');
  const st = await waitRevoked(first.serial);
  assert.equal(st.Reason, 4, 'superseded');
  assert.equal((await pebbleCertStatus(second.serial)).Status, 'Valid');
  // nothing left to revoke on the Certificate
  for (let i = 0; ; i++) {
    const c = JSON.parse((await s.cli(['get', 'certificate', name, '-n', 'default', '-o', 'json'])).stdout) as { metadata: { annotations?: Record<string, string> } };
    if (!c.metadata.annotations?.['acme.certsmith.io/superseded-certificates']) break;
    assert.ok(i < 100, 'the pending list is cleared');
    await new Promise((res) => setTimeout(res, 100));
  }
});

test('a renewal that keeps the key, or a Certificate without the annotation, revokes nothing', async () => {
  await issue([{ name: 'kept-key', rotationPolicy: 'Never', annotated: true }, { name: 'not-annotated', rotationPolicy: 'Always', annotated: false }]);
  const [kept, plain] = await Promise.all([leaf('kept-key'), leaf('not-annotated')]);
  const [kept2, plain2] = await Promise.all([renew('kept-key', kept.serial), renew('not-annotated', plain.serial)]);
  assert.equal(kept2.spki, kept.spki, 'rotationPolicy Never keeps the key');
  assert.notEqual(plain2.spki, plain.spki);
  // give the controller time it would need to revoke (the rotation test above revokes within it)
  await new Promise((res) => setTimeout(res, 3000));
  assert.equal((await pebbleCertStatus(kept.serial)).Status, 'Valid');
  assert.equal((await pebbleCertStatus(plain.serial)).Status, 'Valid');
});
