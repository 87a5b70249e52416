// The CLI and kubectl against a real `certsmith server` process, as a user drives them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, statSync, lstatSync, existsSync, readFileSync, mkdirSync, rmSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import https from 'node:https';
import YAML from 'yaml';
import { startServer, run, certsmithBin, repoRoot, type RunningServer } from './harness.ts';

let server: RunningServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  if (!server) return;
  const code = await server.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
  assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
});

const validManifest = `
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: selfsigned
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
  labels: { app: web }
spec:
  secretName: web-tls
  dnsNames: [web.example.test]
  duration: 2160h
  issuerRef:
    name: selfsigned
`;

// five Certificates, one mistake each
const invalidManifest = `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: bad-duration }
spec: { secretName: a, dnsNames: [a.test], duration: 30m, issuerRef: { name: selfsigned } }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: bad-renew }
spec: { secretName: b, dnsNames: [b.test], duration: 24h, renewBefore: 48h, issuerRef: { name: selfsigned } }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: no-issuer-name }
spec: { secretName: c, dnsNames: [c.test], issuerRef: { kind: Issuer } }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: no-identities }
spec: { secretName: d, issuerRef: { name: selfsigned } }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: bad-key-size }
spec: { secretName: e, dnsNames: [e.test], privateKey: { algorithm: ECDSA, size: 1024 }, issuerRef: { name: selfsigned } }
`;

function request(path: string, token: string | undefined): Promise<{ status: number; body: any }> {
  const kc = YAML.parse(readFileSync(server.kubeconfig, 'utf8'));
  const ca = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, server.url), { ca, headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the server writes a private kubeconfig and keeps its keys private', () => {
  assert.ok(existsSync(server.kubeconfig));
  assert.equal(statSync(server.kubeconfig).mode & 0o777, 0o600);
  assert.equal(statSync(join(server.dataDir, 'pki', 'serving.key')).mode & 0o777, 0o600);
  assert.equal(statSync(join(server.dataDir, 'token')).mode & 0o777, 0o600);
  assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  // the CLI's way in on this host: a socket only the service user can connect to, named in the kubeconfig
  const socket = lstatSync(join(server.dataDir, 'api.sock'));
  assert.ok(socket.isSocket());
  assert.equal(socket.mode & 0o777, 0o600);
  const kc = YAML.parse(readFileSync(server.kubeconfig, 'utf8'));
  assert.deepEqual(kc.clusters[0].cluster.extensions, [{ name: 'certsmith.io/api-socket', extension: { path: join(server.dataDir, 'api.sock') } }]);
});

test('apply a valid Issuer and Certificate, then get shows them', async () => {
  const file = join(server.dataDir, 'valid.yaml');
  writeFileSync(file, validManifest);
  const applied = await server.cli(['apply', '-f', file]);
  assert.equal(applied.code, 0, applied.stderr);
  assert.equal(applied.stdout, 'issuer.cert-manager.io/selfsigned created\ncertificate.cert-manager.io/web created\n');

  const again = await server.cli(['apply', '-f', file]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, 'issuer.cert-manager.io/selfsigned unchanged\ncertificate.cert-manager.io/web unchanged\n');

  const changed = await server.cli(['apply', '-f', '-'], { input: validManifest.replace('web-tls', 'web-tls-2') });
  assert.equal(changed.code, 0, changed.stderr);
  assert.match(changed.stdout, /certificate\.cert-manager\.io\/web configured/);

  const table = await server.cli(['get', 'certificates']);
  assert.equal(table.code, 0, table.stderr);
  const [header, row] = table.stdout.trim().split('\n');
  assert.deepEqual(header.split(/\s+/), ['NAME', 'READY', 'SECRET', 'AGE']);
  assert.match(row, /^web\s+\S*\s*web-tls-2\s+\d+s$/);

  const wide = await server.cli(['get', 'cert', '-A', '-o', 'wide']);
  assert.match(wide.stdout.split('\n')[0], /^NAMESPACE\s+NAME\s+READY\s+SECRET\s+ISSUER\s+STATUS\s+AGE$/);
  assert.match(wide.stdout, /default\s+web\s+.*selfsigned/);

  const yaml = await server.cli(['get', 'certificate', 'web', '-o', 'yaml']);
  assert.equal(yaml.code, 0, yaml.stderr);
  const obj = YAML.parse(yaml.stdout);
  assert.equal(obj.kind, 'Certificate');
  assert.equal(obj.metadata.namespace, 'default');
  assert.equal(obj.spec.secretName, 'web-tls-2');
  assert.ok(obj.metadata.resourceVersion);
  // as kubectl: server-side apply's bookkeeping only when asked for
  assert.equal(obj.metadata.managedFields, undefined);
  const managed = YAML.parse((await server.cli(['get', 'certificate', 'web', '-o', 'yaml', '--show-managed-fields'])).stdout);
  assert.ok(managed.metadata.managedFields?.length, 'managedFields with --show-managed-fields');

  const byLabel = await server.cli(['get', 'certificates', '-l', 'app=web', '-o', 'name']);
  assert.equal(byLabel.stdout, 'certificate.cert-manager.io/web\n');
  const noMatch = await server.cli(['get', 'certificates', '-l', 'app=other']);
  assert.equal(noMatch.code, 0);
  assert.match(noMatch.stderr, /No resources found in default namespace/);

  const issuers = await server.cli(['get', 'issuers', '-o', 'json']);
  assert.deepEqual(JSON.parse(issuers.stdout).items.map((i: any) => i.metadata.name), ['selfsigned']);
});

test('an invalid manifest is refused whole, one error line per mistake naming its field', async () => {
  const file = join(server.dataDir, 'invalid.yaml');
  // a valid document in the same manifest must not be stored either
  writeFileSync(file, invalidManifest + `---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: innocent }
spec: { secretName: ok, dnsNames: [ok.test], issuerRef: { name: selfsigned } }
`);
  const res = await server.cli(['apply', '-f', file]);
  assert.notEqual(res.code, 0);
  assert.equal(res.stdout, '');
  const lines = res.stderr.trim().split('\n');
  const expected: Array<[string, string]> = [
    ['bad-duration', 'spec.duration'],
    ['bad-renew', 'spec.renewBefore'],
    ['no-issuer-name', 'spec.issuerRef.name'],
    ['no-identities', 'spec'],
    ['bad-key-size', 'spec.privateKey.size'],
  ];
  for (const [name, field] of expected) {
    const line = lines.find((l) => l.includes(`Certificate default/${name}:`));
    assert.ok(line, `no error line for ${name} in:\n${res.stderr}`);
    assert.ok(line.startsWith(`error: ${file}: Certificate default/${name}: ${field}: `), line);
  }
  assert.equal(lines.length, 5, res.stderr);

  const names = await server.cli(['get', 'certificates', '-o', 'name']);
  assert.equal(names.stdout, 'certificate.cert-manager.io/web\n');
});

test('bad input gives a one-line error and a non-zero exit', async () => {
  const unknown = await server.cli(['get', 'widgets']);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stderr, 'error: the server doesn\'t have a resource type "widgets"\n');

  const badYaml = join(server.dataDir, 'bad.yaml');
  writeFileSync(badYaml, 'apiVersion: v1\nkind: [unclosed\n');
  const yamlRes = await server.cli(['apply', '-f', badYaml]);
  assert.equal(yamlRes.code, 1);
  assert.match(yamlRes.stderr, /^error: .*bad\.yaml: invalid YAML/);
  assert.equal(yamlRes.stderr.trim().split('\n').length, 1);

  const missing = await server.cli(['get', 'certificate', 'nope']);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, 'error: certificates.cert-manager.io "nope" not found\n');
  // several names, as kubectl takes them: what exists is shown, each missing one is an error line, exit 1
  const several = await server.cli(['get', 'certificate', 'web', 'nope', '-o', 'name']);
  assert.equal(several.code, 1, several.stderr);
  assert.equal(several.stdout, 'certificate.cert-manager.io/web\n');
  assert.equal(several.stderr, 'error: certificates.cert-manager.io "nope" not found\n');
  const asList = await server.cli(['get', 'certificate', 'web', 'nope', '-o', 'json']);
  assert.equal(JSON.parse(asList.stdout).kind, 'List', 'more than one name is a List, as kubectl prints it');

  const noServer = await run(process.execPath, [certsmithBin, '--kubeconfig', join(server.dataDir, 'missing-kubeconfig'), 'get', 'certs']);
  assert.equal(noServer.code, 1);
  assert.match(noServer.stderr, /^error: no kubeconfig at .*missing-kubeconfig/);
  assert.doesNotMatch(noServer.stderr, /\n\s+at /);
});

test('requests without the token or with a wrong one get 401 and change nothing', async () => {
  const none = await request('/apis/cert-manager.io/v1/certificates', undefined);
  assert.equal(none.status, 401);
  assert.equal(none.body.kind, 'Status');
  assert.equal(none.body.code, 401);
  const wrong = await request('/apis/cert-manager.io/v1/certificates', 'not-the-token');
  assert.equal(wrong.status, 401);
  const health = await request('/healthz', undefined);
  assert.equal(health.status, 200);

  const kc = YAML.parse(readFileSync(server.kubeconfig, 'utf8'));
  kc.users[0].user.token = 'wrong';
  const badKubeconfig = join(server.dataDir, 'bad-kubeconfig');
  writeFileSync(badKubeconfig, YAML.stringify(kc), { mode: 0o600 });
  const cli = await run(process.execPath, [certsmithBin, '--kubeconfig', badKubeconfig, 'delete', 'certificate', 'web']);
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /401 Unauthorized/);
  assert.equal((await server.cli(['get', 'certificates', '-o', 'name'])).stdout, 'certificate.cert-manager.io/web\n');
});

test('kubectl works against the embedded server', async () => {
  const kubectl = (args: string[], input?: string) => run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, ...args], { input });
  const manifest = join(server.dataDir, 'kubectl.yaml');
  writeFileSync(manifest, `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: from-kubectl
spec:
  secretName: from-kubectl-tls
  commonName: kubectl.example.test
  dnsNames: [kubectl.example.test]
  issuerRef: { name: selfsigned }
`);
  const applied = await kubectl(['apply', '-f', manifest]);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /certificate\.cert-manager\.io\/from-kubectl created/);

  const reapplied = await kubectl(['apply', '-f', manifest]);
  assert.equal(reapplied.code, 0, reapplied.stderr);
  assert.match(reapplied.stdout, /from-kubectl (unchanged|configured)/);

  const all = await kubectl(['get', 'certificates', '-A']);
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout.split('\n')[0], /^NAMESPACE\s+NAME\s+READY\s+SECRET\s+AGE/);
  assert.match(all.stdout, /default\s+from-kubectl\s+.*from-kubectl-tls/);
  assert.match(all.stdout, /default\s+web\s/);

  const yaml = await kubectl(['get', 'certificate', 'from-kubectl', '-o', 'yaml']);
  assert.equal(yaml.code, 0, yaml.stderr);
  const obj = YAML.parse(yaml.stdout);
  assert.equal(obj.spec.commonName, 'kubectl.example.test');
  assert.ok(obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);

  const invalid = await kubectl(['apply', '-f', '-'], invalidManifest.split('---')[0]);
  assert.notEqual(invalid.code, 0);
  assert.match(invalid.stderr, /The Certificate "bad-duration" is invalid: spec\.duration/);

  const ssa = await kubectl(['apply', '--server-side', '-f', '-'],
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: server-side }\nspec: { secretName: ss, dnsNames: [ss.test], issuerRef: { name: selfsigned } }\n`);
  assert.equal(ssa.code, 0, ssa.stderr);
  assert.match(ssa.stdout, /server-side serverside-applied/);
});

test('delete removes an object', async () => {
  const res = await server.cli(['delete', 'certificate', 'web']);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.stdout, 'certificate.cert-manager.io "web" deleted\n');
  const after = await server.cli(['get', 'certificate', 'web']);
  assert.equal(after.code, 1);
  const again = await server.cli(['delete', 'certificate', 'web']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /not found/);
  // as kubectl: a name that is not there is reported, the others are still deleted, and the exit is 1
  const made = await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'create', '-f', '-'], { input: 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: short-lived }\nspec: { secretName: sl, dnsNames: [sl.test], issuerRef: { name: selfsigned } }\n' });
  assert.equal(made.code, 0, made.stderr);
  const some = await server.cli(['delete', 'certificate', 'web', 'short-lived']);
  assert.equal(some.code, 1);
  assert.equal(some.stdout, 'certificate.cert-manager.io "short-lived" deleted\n');
  assert.equal(some.stderr, 'error: certificates.cert-manager.io "web" not found\n');
  assert.equal((await server.cli(['get', 'certificate', 'short-lived'])).code, 1);
});

test('a restart keeps the data, the CA and the token, and --apply loads a folder at start', async () => {
  const kubeconfigBefore = readFileSync(server.kubeconfig, 'utf8');
  const caBefore = readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
  assert.equal(await server.stop(), 0, server.output());
  assert.equal(existsSync(join(server.dataDir, 'api.sock')), false, 'the socket goes with the server');
  const folder = join(server.dataDir, 'manifests');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'b.yaml'), 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: at-start }\nspec: { secretName: s, dnsNames: [s.test], issuerRef: { name: selfsigned } }\n');
  writeFileSync(join(folder, 'a.yaml'), 'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: cluster-selfsigned }\nspec: { selfSigned: {} }\n');
  writeFileSync(join(folder, 'notes.txt'), 'not a manifest');

  server = await startServer({ dataDir: server.dataDir, args: ['--apply', folder] });
  assert.equal(readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'), caBefore);
  const kc = YAML.parse(readFileSync(server.kubeconfig, 'utf8'));
  assert.equal(kc.users[0].user.token, YAML.parse(kubeconfigBefore).users[0].user.token);
  const names = await server.cli(['get', 'certificates', '-o', 'name']);
  assert.equal(names.code, 0, names.stderr);
  assert.deepEqual(names.stdout.trim().split('\n').sort(), [
    'certificate.cert-manager.io/at-start', 'certificate.cert-manager.io/from-kubectl', 'certificate.cert-manager.io/server-side',
  ]);
  const cluster = await server.cli(['get', 'clusterissuers', '-o', 'name']);
  assert.equal(cluster.stdout, 'clusterissuer.cert-manager.io/cluster-selfsigned\n');
});

test('an invalid --apply manifest does not keep the server down: it serves and renews what it holds, applies none of the manifests, and says why', async () => {
  // a typo added while the server ran must not stop every renewal at the next boot (systemd would restart it in a loop)
  const dir = join(server.dataDir, 'broken');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'x.yaml'), invalidManifest.split('---')[0]);
  writeFileSync(join(dir, 'y.yaml'), 'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: with-the-broken-one }\nspec: { selfSigned: {} }\n');
  writeFileSync(join(dir, 'z.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata: { name: [unclosed\n');
  assert.equal(await server.stop(), 0, server.output());
  for (const files of [['x.yaml', 'y.yaml'], ['z.yaml', 'y.yaml']]) {
    const only = join(server.dataDir, `only-${files[0]}`);
    mkdirSync(only, { recursive: true });
    for (const f of files) writeFileSync(join(only, f), readFileSync(join(dir, f)));
    server = await startServer({ dataDir: server.dataDir, args: ['--apply', only] });
    assert.match(server.output(), files[0] === 'x.yaml' ? /x\.yaml[^\n]*spec\.duration/ : /z\.yaml: invalid YAML/);
    assert.match(server.output(), /--apply: 1 problem\(s\) in the manifests; nothing from them was applied, and what the server holds is served as it is/);
    const issuers = await server.cli(['get', 'clusterissuers', '-o', 'name']);
    assert.equal(issuers.code, 0, issuers.stderr);
    assert.doesNotMatch(issuers.stdout, /with-the-broken-one/, 'all or nothing, as certsmith apply');
    assert.match((await server.cli(['get', 'certificates', '-o', 'name'])).stdout, /certificate\.cert-manager\.io\/at-start/, 'the stored objects are served');
    assert.equal(await server.stop(), 0, server.output());
  }
  // a path that does not exist is a mistake in the command line itself: refused at once
  await assert.rejects(startServer({ dataDir: server.dataDir, args: ['--apply', join(dir, 'missing')] }), /exited with 1 before it was ready[\s\S]*--apply [^\n]*missing: no such file or directory/);
  server = await startServer({ dataDir: server.dataDir });
});

test('SIGTERM while the server starts is a clean stop once it has started, never a kill mid-way (systemd may stop it at any time)', async () => {
  // seen in CI: the signal arrived between "listening" and the handler's installation and killed the
  // server by its default action (exit null); here it is sent earlier still, as the --apply manifests load
  const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-e2e-sigterm-'));
  try {
    const manifest = join(dataDir, 'issuer.yaml');
    writeFileSync(manifest, 'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: applied-at-start }\nspec: { selfSigned: {} }\n');
    const child = spawn(process.execPath, [certsmithBin, 'server', '--data-dir', join(dataDir, 'state'), '--apply', manifest,
      '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0'], {
      cwd: repoRoot, env: { ...process.env, CERTSMITH_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let signalled = false;
    const onData = (d: Buffer) => {
      out += d;
      if (!signalled && out.includes('manifest applied')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('close', (c, s) => r([c, s])));
    assert.ok(signalled, `the manifest was applied:\n${out}`);
    assert.deepEqual([code, signal], [0, null], `a clean exit, not death by the signal:\n${out}`);
    assert.match(out, /shutting down/);
    // and what it applied before it stopped is there at the next start
    const again = await startServer({ dataDir: join(dataDir, 'state') });
    try {
      assert.equal((await again.cli(['get', 'clusterissuers', '-o', 'name'])).stdout, 'clusterissuer.cert-manager.io/applied-at-start\n');
    } finally {
      assert.equal(await again.stop(), 0, again.output());
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the server refuses a bad --dashboard-listen or a bad CERTSMITH_LOG_LEVEL before it stores or issues anything, naming what is wrong', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-early-'));
  try {
    const start = (args: string[], env: NodeJS.ProcessEnv = {}) => run(process.execPath, [certsmithBin, 'server', '--data-dir', join(dataDir, 'state'),
      '--apply', join(repoRoot, 'examples'), '--secrets-dir', join(dataDir, 'live'),
      '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0', ...args], { env: { ...process.env, ...env }, timeoutMs: 60_000 });
    const dashboard = await start(['--dashboard-listen', '0.0.0.0:0']);
    assert.equal(dashboard.code, 1, dashboard.stderr);
    assert.match(dashboard.stderr, /--dashboard-listen 0\.0\.0\.0:0: "0\.0\.0\.0" is not a loopback address/);
    assert.doesNotMatch(dashboard.stdout + dashboard.stderr, /manifest applied|listening/);
    assert.equal(existsSync(join(dataDir, 'state', 'state.db')), false, 'nothing stored');
    assert.equal(existsSync(join(dataDir, 'live', 'default')), false, 'nothing issued to files');

    const level = await start([], { CERTSMITH_LOG_LEVEL: 'verbose' });
    assert.equal(level.code, 1, level.stderr);
    assert.match(level.stderr, /CERTSMITH_LOG_LEVEL "verbose" is not a log level: use one of trace, debug, info, warn, error, fatal, silent/);
    assert.equal(existsSync(join(dataDir, 'state', 'state.db')), false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a port in use is named by its flag, --listen and --metrics-listen alike', async () => {
  const net = await import('node:net');
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  const busy = `127.0.0.1:${(holder.address() as import('node:net').AddressInfo).port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-busy-'));
  try {
    const start = (listen: string, metrics: string) => run(process.execPath, [certsmithBin, 'server', '--data-dir', join(dataDir, 'state'),
      '--listen', listen, '--metrics-listen', metrics, '--health-listen', '127.0.0.1:0'], { timeoutMs: 60_000 });
    const api = await start(busy, '127.0.0.1:0');
    assert.equal(api.code, 1, api.stderr);
    assert.match(api.stderr, new RegExp(`^error: --listen ${busy}: the address is in use \\(another program listens there\\); choose another port`, 'm'));
    const metrics = await start('127.0.0.1:0', busy);
    assert.equal(metrics.code, 1, metrics.stderr);
    assert.match(metrics.stderr, new RegExp(`^error: --metrics-listen ${busy}: the address is in use`, 'm'));
    assert.doesNotMatch(metrics.stderr, /controllers failed/);
  } finally {
    holder.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// `certsmith get ... > /dev/full` printed Node's stack trace of an unhandled 'error' event; a
// pipe closed early (`| head`) stays quiet, as with kubectl.
test('output that cannot be written is one error line and exit 1; a closed pipe is quiet', async () => {
  const { openSync, closeSync } = await import('node:fs');
  const full = openSync('/dev/full', 'w');
  try {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [certsmithBin, '--help'], { stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'error: cannot write the output: ENOSPC: no space left on device, write');
  } finally {
    closeSync(full);
  }
  const piped = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn('sh', ['-c', `"${process.execPath}" "${certsmithBin}" --help | head -c 1 > /dev/null`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
  assert.equal(piped.stderr, '');
});
