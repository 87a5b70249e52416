// cmctl's inspect secret, check api and create certificaterequest against a real `certsmith server`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certsmithBin, isReady, run, startServer, waitFor, type RunningServer } from './harness.ts';

let server: RunningServer;
let stopped = false;
let work: string;

const manifest = `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: root }
spec: { secretName: root-tls, commonName: cmctl test root, isCA: true, issuerRef: { name: selfsigned, kind: ClusterIssuer } }
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: { name: ca }
spec: { ca: { secretName: root-tls } }
`;

const webCertificate = `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: web }
spec:
  secretName: web-tls
  commonName: web.example.test
  dnsNames: [web.example.test]
  ipAddresses: [127.0.0.1]
  usages: [digital signature, key encipherment, server auth]
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: ca, kind: Issuer }
`;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'certsmith-cmctl-'));
  server = await startServer();
  const applied = await server.cli(['apply', '-f', '-'], { input: manifest + '---' + webCertificate });
  assert.equal(applied.code, 0, applied.stderr);
});

after(async () => {
  if (server) {
    const code = await server.stop();
    server.cleanup();
    if (!stopped) assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
  }
  rmSync(work, { recursive: true, force: true });
});

test('check api: ready once the server serves both groups and admits a dry-run Certificate', async () => {
  const r = await server.cli(['check', 'api']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /The cert-manager API is ready/);
  // the dry run left nothing behind
  const list = await server.cli(['get', 'certificates', '-o', 'name']);
  assert.doesNotMatch(list.stdout, /check-api/);
});

test('inspect secret: the certificate, chain, key match and CA, and never the private key', async () => {
  await waitFor('Certificate web Ready', async () => {
    const r = await server.cli(['get', 'certificate', 'web', '-o', 'json']);
    return r.code === 0 && isReady(JSON.parse(r.stdout));
  });
  const r = await server.cli(['inspect', 'secret', 'web-tls']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Status: valid for another \d+h/);
  assert.match(r.stdout, /Subject: CN=web\.example\.test/);
  assert.match(r.stdout, /DNS Names: web\.example\.test/);
  assert.match(r.stdout, /IP Addresses: 127\.0\.0\.1/);
  assert.match(r.stdout, /Key Usages: .*digital signature/);
  assert.match(r.stdout, /Extended Key Usages: server auth/);
  assert.match(r.stdout, /Is CA: false/);
  assert.match(r.stdout, /Public Key Algorithm: ECDSA 256/);
  assert.match(r.stdout, /Signature Algorithm: SHA256-RSA/);
  assert.match(r.stdout, /Issuer: CN=cmctl test root/);
  assert.match(r.stdout, /\[0\] CN=web\.example\.test → CN=cmctl test root \(issuer not in tls\.crt\)/);
  assert.match(r.stdout, /Private key \(tls\.key\): matches the certificate/);
  assert.match(r.stdout, /verifies the chain: yes/);
  assert.match(r.stdout, /cert-manager\.io\/certificate-name: web/);
  assert.match(r.stdout, /cert-manager\.io\/issuer-kind: Issuer/);

  const fingerprint = await run('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], { input: await secretField('web-tls', 'tls.crt') });
  assert.ok(r.stdout.includes(fingerprint.stdout.trim().split('=')[1]), 'SHA-256 fingerprint agrees with openssl');
  const root = await server.cli(['inspect', 'secret', 'root-tls']);
  assert.equal(root.code, 0, root.stderr);
  assert.match(root.stdout, /\[0\] CN=cmctl test root → CN=cmctl test root \(self-signed\)/);
  assert.match(root.stdout, /Is CA: true/);
  assert.match(root.stdout, /Key Usages: .*cert sign/);
  const key = await secretField('web-tls', 'tls.key');
  assert.doesNotMatch(r.stdout + r.stderr, /PRIVATE KEY/);
  const keyBody = key.split('\n').slice(1, -2).join('');
  assert.ok(!(r.stdout + r.stderr).includes(keyBody.slice(0, 40)), 'no part of the key body is printed');
});

test('inspect secret: a missing Secret or one without tls.crt is a clear error', async () => {
  const missing = await server.cli(['inspect', 'secret', 'nope']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /secret default\/nope not found/);

  const plain = await server.cli(['apply', '-f', '-'], { input: 'apiVersion: v1\nkind: Secret\nmetadata: { name: plain }\nstringData: { password: x }\n' });
  assert.equal(plain.code, 0, plain.stderr);
  const noCert = await server.cli(['inspect', 'secret', 'plain']);
  assert.equal(noCert.code, 1);
  assert.match(noCert.stderr, /secret default\/plain has no tls\.crt/);
});

test('create certificaterequest --fetch-certificate: key 0600, certificate issued for that key', async () => {
  writeFileSync(join(work, 'root.crt'), await secretField('root-tls', 'tls.crt'));
  const crtFile = join(work, 'certificate.yaml');
  writeFileSync(crtFile, webCertificate.replace('name: web }', 'name: adhoc }'));
  const r = await run(process.execPath, [certsmithBin, '--kubeconfig', server.kubeconfig, 'create', 'certificaterequest', 'adhoc-1',
    '--from-certificate-file', crtFile, '--fetch-certificate', '--timeout', '30s'], { cwd: work });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /CertificateRequest default\/adhoc-1 created/);
  assert.match(r.stdout, /certificate written to adhoc-1\.crt/);
  const keyFile = join(work, 'adhoc-1.key');
  const certFile = join(work, 'adhoc-1.crt');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);

  const certPub = await run('openssl', ['x509', '-noout', '-pubkey', '-in', certFile]);
  const keyPub = await run('openssl', ['pkey', '-pubout', '-in', keyFile]);
  assert.equal(certPub.code, 0, certPub.stderr);
  assert.equal(keyPub.code, 0, keyPub.stderr);
  assert.equal(certPub.stdout, keyPub.stdout);
  const text = await run('openssl', ['x509', '-noout', '-text', '-in', certFile]);
  assert.match(text.stdout, /DNS:web\.example\.test, IP Address:127\.0\.0\.1/);
  assert.match(text.stdout, /TLS Web Server Authentication/);
  assert.match(readFileSync(keyFile, 'utf8'), /BEGIN EC PRIVATE KEY/);

  const cr = JSON.parse((await server.cli(['get', 'certificaterequest', 'adhoc-1', '-o', 'json'])).stdout);
  assert.deepEqual(cr.spec.issuerRef, { name: 'ca', kind: 'Issuer' });
  const chain = await run('openssl', ['verify', '-CAfile', join(work, 'root.crt'), certFile]);
  assert.equal(chain.code, 0, chain.stdout + chain.stderr);
  assert.deepEqual(cr.spec.usages, ['digital signature', 'key encipherment', 'server auth']);

  // a second run must not overwrite the private key it wrote
  const again = await run(process.execPath, [certsmithBin, '--kubeconfig', server.kubeconfig, 'create', 'certificaterequest', 'adhoc-1',
    '--from-certificate-file', crtFile], { cwd: work });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /adhoc-1\.key already exists/);
});

test('create certificaterequest --fetch-certificate: a failed request is an error naming the reason', async () => {
  // as in cert-manager, SelfSigned signs with a key held in a Secret, which a locally generated key is not
  const crtFile = join(work, 'selfsigned.yaml');
  writeFileSync(crtFile, 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: s }\nspec: { secretName: s, dnsNames: [s.test], issuerRef: { name: selfsigned, kind: ClusterIssuer } }\n');
  const r = await server.cli(['create', 'certificaterequest', 'self', '--from-certificate-file', crtFile, '--fetch-certificate', '--timeout', '30s',
    '--output-key-file', join(work, 'self.key'), '--output-certificate-file', join(work, 'self.crt')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /CertificateRequest default\/self failed: Failed: .*private-key-secret-name/);
  assert.equal(statSync(join(work, 'self.key')).mode & 0o777, 0o600);
  assert.throws(() => statSync(join(work, 'self.crt')));
});

test('create certificaterequest: a request for an issuer that is not there times out naming its state', async () => {
  const crtFile = join(work, 'orphan.yaml');
  writeFileSync(crtFile, 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: o }\nspec: { secretName: o, dnsNames: [o.test], issuerRef: { name: absent } }\n');
  const r = await server.cli(['create', 'certificaterequest', 'orphan', '--from-certificate-file', crtFile, '--fetch-certificate', '--timeout', '1s',
    '--output-key-file', join(work, 'orphan.key'), '--output-certificate-file', join(work, 'orphan.crt')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /timed out waiting for CertificateRequest default\/orphan to be Ready/);
  assert.throws(() => statSync(join(work, 'orphan.crt')));
});

test('check api: a stopped server is not ready, and --wait retries until the time is up, then exits 124 as cmctl', async () => {
  stopped = true;
  assert.equal(await server.stop(), 0, server.output());
  const r = await run(process.execPath, [certsmithBin, '--kubeconfig', server.kubeconfig, 'check', 'api']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Not ready: discovery of cert-manager\.io\/v1 failed/);

  const started = Date.now();
  const waited = await run(process.execPath, [certsmithBin, '--kubeconfig', server.kubeconfig, 'check', 'api', '--wait', '1s']);
  // cmctl's exit code for a --wait that ran out (internal/util/exit.go: 124, as timeout(1)), so a
  // script can tell "not ready yet" from a broken call (1)
  assert.equal(waited.code, 124, waited.stderr);
  assert.ok(Date.now() - started >= 1000, 'waited for the whole --wait');
  assert.ok(waited.stderr.split('\n').filter((l) => l.includes('Not ready')).length >= 2, waited.stderr);
});

async function secretField(name: string, key: string): Promise<string> {
  const r = await server.cli(['get', 'secret', name, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return Buffer.from(JSON.parse(r.stdout).data[key], 'base64').toString('utf8');
}
