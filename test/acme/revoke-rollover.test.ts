// Issue 16: revocation (RFC 8555 §7.6) and account key rollover (§7.3.5, §7.3.6) from the CLI,
// against Pebble. Pebble's management API reports a revoked serial and its reason; after a
// rollover the old key is refused and the server's next order, signed with the new key, works.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { AcmeClient } from '../../src/acme/client.ts';
import { apply, startCertsmith, stopKeeper, waitAllReady, type Target } from './restart-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');

let cts: ChallTestSrv;
let pebble: Pebble;
let target: Target;
let s: RunningServer;
const dir = mkdtempSync(join(tmpdir(), 'certsmith-revoke-'));

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

async function issue(name: string): Promise<void> {
  await apply(s, `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default }\nspec: { secretName: ${name}-tls, dnsNames: [${name}-${uniq()}.example.test], privateKey: { algorithm: ECDSA }, issuerRef: { name: pebble, kind: ClusterIssuer } }`);
  await waitAllReady(s, [name], 60_000);
}

async function secretField(namespace: string, name: string, field: string): Promise<string> {
  const r = await s.cli(['get', 'secret', '-n', namespace, name, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return Buffer.from((JSON.parse(r.stdout) as { data: Record<string, string> }).data[field], 'base64').toString('utf8');
}

function pebbleCertStatus(serialHex: string): Promise<{ Status: string; Reason?: number }> {
  return new Promise((resolve, reject) => {
    https.get(`${pebble.managementUrl}/cert-status-by-serial/${serialHex}`, { ca: pebble.caPem, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`HTTP ${res.statusCode}: ${body}`))));
    }).on('error', reject);
  });
}

test('certsmith revoke: the CA records the serial as revoked with the reason given', async () => {
  await issue('to-revoke');
  const leaf = new crypto.X509Certificate(await secretField('default', 'to-revoke-tls', 'tls.crt'));
  // Pebble names serials in lower-case hex without leading zeros
  const serial = BigInt(`0x${leaf.serialNumber}`).toString(16);
  assert.equal((await pebbleCertStatus(serial)).Status, 'Valid');

  const bad = await s.cli(['revoke', 'to-revoke', '-n', 'default', '--reason', 'stolen']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--reason: "stolen" is not one of unspecified, keycompromise/);

  const r = await s.cli(['revoke', 'to-revoke', '-n', 'default', '--reason', 'keyCompromise']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Revoked certificate [0-9A-F]+ of Certificate default\/to-revoke \(reason keycompromise\)/);
  const status = await pebbleCertStatus(serial);
  assert.equal(status.Status, 'Revoked');
  assert.equal(status.Reason, 1, 'RFC 5280 keyCompromise');
});

test('certsmith revoke --with-certificate-key: a certificate whose account key was lost is revoked with its own key; without the flag the error says so', async () => {
  await apply(s, `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: pebble-gone }\nspec:\n  acme:\n    server: ${pebble.directoryUrl}\n    caBundle: ${b64(pebble.caPem)}\n    privateKeySecretRef: { name: pebble-gone-account }\n    solvers: [ { http01: { ingress: {} } } ]`);
  const name = 'orphaned';
  await apply(s, `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default }\nspec: { secretName: ${name}-tls, dnsNames: [${name}-${uniq()}.example.test], privateKey: { algorithm: ECDSA }, issuerRef: { name: pebble-gone, kind: ClusterIssuer } }`);
  await waitAllReady(s, [name], 60_000);
  const leaf = new crypto.X509Certificate(await secretField('default', `${name}-tls`, 'tls.crt'));
  const serial = BigInt(`0x${leaf.serialNumber}`).toString(16);
  // the account key is lost: the issuer registers a new account, which did not order this certificate
  const gone = await s.cli(['delete', 'secret', 'pebble-gone-account', '-n', 'cert-manager']);
  assert.equal(gone.code, 0, gone.stderr);

  const refused = await s.cli(['revoke', name, '-n', 'default']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /--with-certificate-key/, refused.stderr);
  assert.equal((await pebbleCertStatus(serial)).Status, 'Valid');

  const r = await s.cli(['revoke', name, '-n', 'default', '--with-certificate-key', '--reason', 'keyCompromise']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`Revoked certificate ${leaf.serialNumber} of Certificate default/${name} \\(reason keycompromise\\), signed with its own key`));
  const status = await pebbleCertStatus(serial);
  assert.equal(status.Status, 'Revoked');
  assert.equal(status.Reason, 1, 'RFC 5280 keyCompromise');
});

test('certsmith acme rollover-key: the old key is refused, the account keeps its URL, the next order uses the new key', async () => {
  await issue('before-rollover');
  const oldKey = await secretField('cert-manager', 'pebble-account', 'tls.key');
  const r = await s.cli(['acme', 'rollover-key', 'pebble', '--cluster']);
  assert.equal(r.code, 0, r.stderr);
  const accountUrl = /account (\S+)\)/.exec(r.stdout)?.[1];
  assert.ok(accountUrl, r.stdout);
  const newKey = await secretField('cert-manager', 'pebble-account', 'tls.key');
  assert.notEqual(newKey, oldKey, 'the Secret holds the new key');

  const asAccount = async (key: string) => {
    const c = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: key, caPem: pebble.caPem });
    try {
      return await c.findAccount();
    } finally {
      c.close();
    }
  };
  await assert.rejects(asAccount(oldKey), /accountDoesNotExist|unauthorized|No existing account/i, 'the CA refuses the old key');
  assert.equal((await asAccount(newKey)).url, accountUrl, 'the new key is the same account');

  // the running server picked the new key up: its next order is accepted
  await issue('after-rollover');
  const issuer = JSON.parse((await s.cli(['get', 'clusterissuer', 'pebble', '-o', 'json'])).stdout) as { status: { acme: { uri: string; lastPrivateKeyHash?: string } } };
  assert.equal(issuer.status.acme.uri, accountUrl);
});

test('acme.certsmith.io/revoke-on-delete: the certificate is revoked at the CA before its Certificate goes; others keep no finalizer', async () => {
  await issue('plain');
  const plain = JSON.parse((await s.cli(['get', 'certificate', 'plain', '-n', 'default', '-o', 'json'])).stdout) as { metadata: { finalizers?: string[] } };
  assert.equal(plain.metadata.finalizers, undefined, 'no finalizer without the annotation');

  const name = 'revoke-on-delete';
  await apply(s, `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default, annotations: { acme.certsmith.io/revoke-on-delete: "true" } }\nspec: { secretName: ${name}-tls, dnsNames: [${name}-${uniq()}.example.test], privateKey: { algorithm: ECDSA }, issuerRef: { name: pebble, kind: ClusterIssuer } }`);
  await waitAllReady(s, [name], 60_000);
  const serial = BigInt(`0x${new crypto.X509Certificate(await secretField('default', `${name}-tls`, 'tls.crt')).serialNumber}`).toString(16);
  for (let i = 0; ; i++) {
    const c = JSON.parse((await s.cli(['get', 'certificate', name, '-n', 'default', '-o', 'json'])).stdout) as { metadata: { finalizers?: string[] } };
    if (c.metadata.finalizers?.includes('acme.certsmith.io/revoke-on-delete')) break;
    assert.ok(i < 100, 'the finalizer is added');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal((await pebbleCertStatus(serial)).Status, 'Valid');
  const del = await s.cli(['delete', 'certificate', name, '-n', 'default']);
  assert.equal(del.code, 0, del.stderr);
  for (let i = 0; ; i++) {
    if ((await s.cli(['get', 'certificate', name, '-n', 'default'])).code !== 0) break;
    assert.ok(i < 300, 'the Certificate goes once revoked');
    await new Promise((r) => setTimeout(r, 100));
  }
  const status = await pebbleCertStatus(serial);
  assert.equal(status.Status, 'Revoked');
  assert.equal(status.Reason, 5, 'cessationOfOperation');
});

test('revoke-on-delete of a certificate revoked by hand before: the Event says it was already revoked, not that it was revoked now', async () => {
  const name = 'revoked-before';
  await apply(s, `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: default, annotations: { acme.certsmith.io/revoke-on-delete: "true" } }\nspec: { secretName: ${name}-tls, dnsNames: [${name}-${uniq()}.example.test], privateKey: { algorithm: ECDSA }, issuerRef: { name: pebble, kind: ClusterIssuer } }`);
  await waitAllReady(s, [name], 60_000);
  const byHand = await s.cli(['revoke', '-n', 'default', name, '--reason', 'superseded']);
  assert.equal(byHand.code, 0, byHand.stderr);
  const del = await s.cli(['delete', 'certificate', name, '-n', 'default']);
  assert.equal(del.code, 0, del.stderr);
  let said: string | undefined;
  for (let i = 0; !said; i++) {
    const events = JSON.parse((await s.cli(['get', 'events', '-n', 'default', '-o', 'json'])).stdout) as { items: { reason?: string; message?: string; involvedObject?: { name?: string } }[] };
    said = events.items.find((e) => e.reason === 'Revoked' && e.involvedObject?.name === name)?.message;
    assert.ok(said || i < 300, 'a Revoked Event');
    if (!said) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(said, 'The certificate had already been revoked at the ACME server (alreadyRevoked); nothing to revoke before deletion');
});
