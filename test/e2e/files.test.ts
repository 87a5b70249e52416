// Single-host use as a certbot user would set it up: `certsmith server --secrets-dir --deploy-hook`,
// a web server's view of the files, and `certsmith renew` replacing them and running the hook.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, waitFor } from './harness.ts';

const manifests = `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: host-ca, namespace: default }
spec:
  isCA: true
  commonName: host CA
  secretName: host-ca
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: selfsigned, kind: ClusterIssuer, group: cert-manager.io }
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: { name: host-ca, namespace: default }
spec: { ca: { secretName: host-ca } }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: web, namespace: default }
spec:
  secretName: web-tls
  dnsNames: [web.example.test]
  privateKey: { algorithm: ECDSA, size: 256 }
  keystores: { pkcs12: { create: true, password: changeit } }
  issuerRef: { name: host-ca, kind: Issuer }
`;

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function envFile(path: string): Record<string, string> {
  return Object.fromEntries(readFileSync(path, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

test('certsmith server --secrets-dir --deploy-hook: files a web server can use, renewed by `certsmith renew`', async () => {
  const root = mkdtempSync(join(tmpdir(), 'certsmith-e2e-files-'));
  const dir = join(root, 'live');
  const hooks = join(root, 'hooks');
  mkdirSync(hooks);
  writeFileSync(join(root, 'manifests.yaml'), manifests);
  const hook = `env > "${hooks}/$CERTSMITH_CERTIFICATE_NAME-$CERTSMITH_REVISION.env"; echo "$CERTSMITH_CERTIFICATE_NAME $CERTSMITH_REVISION" >> "${hooks}/runs"`;
  const server = await startServer({ args: ['--secrets-dir', dir, '--deploy-hook', hook, '--apply', join(root, 'manifests.yaml')] });
  try {
    const live = join(dir, 'default', 'web-tls');
    const runs = () => (existsSync(join(hooks, 'runs')) ? readFileSync(join(hooks, 'runs'), 'utf8').trim().split('\n') : []);
    await waitFor('the hook for web revision 1', () => runs().includes('web 1'));

    assert.match(openssl(['verify', '-CAfile', join(live, 'ca.crt'), join(live, 'fullchain.pem')]), /fullchain\.pem: OK/);
    const pub = openssl(['x509', '-noout', '-pubkey', '-in', join(live, 'tls.crt')]);
    assert.equal(openssl(['pkey', '-in', join(live, 'tls.key'), '-pubout']), pub);
    assert.equal(openssl(['pkey', '-in', join(live, 'tls-combined.pem'), '-pubout']), pub);
    // the keystore from the Secret is there too, and opens with its password
    openssl(['pkcs12', '-in', join(live, 'keystore.p12'), '-passin', 'pass:changeit', '-noout']);
    for (const f of ['tls.key', 'tls-combined.pem', 'keystore.p12', 'privkey.pem']) assert.equal(statSync(join(live, f)).mode & 0o777, 0o600, f);
    for (const d of [dir, join(dir, 'default'), live]) assert.equal(statSync(d).mode & 0o777, 0o700, d);
    const serial1 = openssl(['x509', '-noout', '-serial', '-in', join(live, 'tls.crt')]);
    const link1 = readlinkSync(live);

    const renew = await server.cli(['renew', 'web', '-n', 'default']);
    assert.equal(renew.code, 0, renew.stderr);
    assert.match(renew.stdout, /Manually triggered issuance of Certificate default\/web/);
    await waitFor('the hook for web revision 2', () => runs().includes('web 2'));

    assert.notEqual(readlinkSync(live), link1, 'a new version is live');
    assert.notEqual(openssl(['x509', '-noout', '-serial', '-in', join(live, 'tls.crt')]), serial1);
    assert.equal(openssl(['pkey', '-in', join(live, 'tls.key'), '-pubout']), openssl(['x509', '-noout', '-pubkey', '-in', join(live, 'tls.crt')]));
    const env = envFile(join(hooks, 'web-2.env'));
    assert.equal(env.CERTSMITH_CERTIFICATE_NAME, 'web');
    assert.equal(env.CERTSMITH_NAMESPACE, 'default');
    assert.equal(env.CERTSMITH_SECRET_NAME, 'web-tls');
    assert.equal(env.CERTSMITH_REVISION, '2');
    assert.equal(env.CERTSMITH_CERT_PATH, join(live, 'tls.crt'));
    assert.equal(env.CERTSMITH_KEY_PATH, join(live, 'tls.key'));
    assert.equal(env.CERTSMITH_FULLCHAIN_PATH, join(live, 'fullchain.pem'));
    assert.equal(env.CERTSMITH_CA_PATH, join(live, 'ca.crt'));
    assert.equal(env.CERTSMITH_COMBINED_PATH, join(live, 'tls-combined.pem'));
    assert.equal(env.RENEWED_LINEAGE, live);
    assert.equal(env.RENEWED_DOMAINS, 'web.example.test');

    const events = await server.cli(['get', 'events', '-n', 'default', '-o', 'json']);
    assert.equal(events.code, 0, events.stderr);
    assert.match(events.stdout, /DeployHookSucceeded/);

    // a moment for anything that would run the hook a second time
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(runs().filter((r) => r.startsWith('web ')), ['web 1', 'web 2'], 'the hook ran once per issuance');
  } finally {
    const code = await server.stop();
    rmSync(server.dataDir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
  }
});
