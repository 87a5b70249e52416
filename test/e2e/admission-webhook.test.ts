// Issue 15's acceptance for the admission webhook, as a cluster user meets it: `certsmith server
// --no-builtin-admission` leaves cert-manager's defaulting and validation to `certsmith webhook`,
// registered through a Validating- and a MutatingWebhookConfiguration whose caBundle the CA
// injector fills from the webhook's CA Secret. Through kubectl: an invalid Certificate is refused
// by the webhook with the field path, a new CertificateRequest gets its requester identity from
// the webhook's patch, and with the webhook stopped failurePolicy Fail refuses writes while
// Ignore lets them through.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../rig/ports.ts';
import { join } from 'node:path';
import { certsmithBin, repoRoot, run, waitFor } from './harness.ts';
import { startKubectlSession, type ServerKubectlSession, type KubeJSON } from './kubectl-session.ts';

let s: ServerKubectlSession;
let webhook: ChildProcess | undefined;
let webhookOutput = '';
let port = 0;
const caSecret = { namespace: 'cert-manager', name: 'certsmith-webhook-ca' };

// upstream's deploy/charts webhook configurations, pointed at the webhook by URL
const configurations = (failurePolicy: 'Fail' | 'Ignore') => ['Mutating', 'Validating'].map((kind) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata:
  name: certsmith-webhook
  annotations: { cert-manager.io/inject-ca-from-secret: ${caSecret.namespace}/${caSecret.name} }
webhooks:
  - name: webhook.cert-manager.io
    rules:
      - apiGroups: [cert-manager.io, acme.cert-manager.io]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: ['*/*']
    admissionReviewVersions: [v1]
    timeoutSeconds: 10
    failurePolicy: ${failurePolicy}
    sideEffects: None
    clientConfig: { url: 'https://127.0.0.1:${port}/${kind === 'Mutating' ? 'mutate' : 'validate'}' }
`).join('---\n');

const certificate = (name: string, extra = '') => `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ${name}, namespace: default }
spec:
  dnsNames: [${name}.example.com]
  issuerRef: { name: selfsigned, kind: ClusterIssuer }
${extra}`;

before(async () => {
  port = await freePort();
  s = await startKubectlSession({ workPrefix: 'certsmith-admission-webhook-', serverArgs: ['--no-builtin-admission'] });
  webhook = spawn(process.execPath, [
    certsmithBin, '--kubeconfig', s.server.kubeconfig, 'webhook', '--listen', `127.0.0.1:${port}`,
    '--namespace', caSecret.namespace, '--ca-secret-name', caSecret.name, '--dns-names', '127.0.0.1,localhost',
  ], { cwd: repoRoot, env: { ...process.env, CERTSMITH_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  webhook.stdout!.on('data', (d) => (webhookOutput += d));
  webhook.stderr!.on('data', (d) => (webhookOutput += d));
  await waitFor(`certsmith webhook serving (output: ${webhookOutput})`, () => webhookOutput.includes('webhook serving'), 60_000);
  await s.apply(configurations('Fail'));
});

after(async () => {
  if (webhook && webhook.exitCode === null && webhook.signalCode === null) webhook.kill('SIGTERM');
  if (s) await s.close();
});

test('the CA injector fills both caBundles from the webhook\'s CA Secret', async () => {
  const secret = await s.getJSON(['get', 'secret', caSecret.name, '-n', caSecret.namespace]);
  assert.equal(secret.metadata.annotations?.['cert-manager.io/allow-direct-injection'], 'true');
  const ca = secret.data!['ca.crt'];
  assert.ok(ca, 'the Secret has ca.crt');
  for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
    const injected = await waitFor(`${kind} caBundle`, async () => {
      const c = await s.getJSON(['get', kind, 'certsmith-webhook']);
      return c.webhooks![0].clientConfig.caBundle ? c : undefined;
    }, 60_000);
    assert.equal(injected.webhooks![0].clientConfig.caBundle, ca);
  }
  // the CA the webhook serves with is the one in the Secret (openssl reads the PEM)
  const pem = Buffer.from(ca, 'base64').toString('utf8');
  const r = await run('openssl', ['x509', '-noout', '-subject'], { input: pem });
  assert.equal(r.code, 0, r.stderr);
});

test('an invalid Certificate is refused by the webhook, naming the field; nothing is stored', async () => {
  // built-in admission is off: only the webhook can know that secretName is required
  const r = await s.kubectl(['apply', ...s.validateFlags, '-f', '-'], certificate('no-secret'));
  assert.notEqual(r.code, 0, r.stdout);
  // the webhook answers 422 Invalid with causes, which kubectl prints as kube's "is invalid" line
  // (the last test shows the same manifest stored when the webhook is unreachable and ignored)
  assert.match(r.stderr, /The Certificate "no-secret" is invalid: spec\.secretName: Required value/);
  const get = await s.kubectl(['get', 'certificate', 'no-secret', '-n', 'default']);
  assert.match(get.stderr, /NotFound|not found/);
});

test('a CertificateRequest is stored with the webhook\'s defaults: the requester identity stamped by its patch', async () => {
  const key = join(s.work, 'cr.key');
  const csr = await run('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-subj', '/CN=cr.example.com', '-addext', 'subjectAltName=DNS:cr.example.com']);
  assert.equal(csr.code, 0, csr.stderr);
  const manifest = `
apiVersion: cert-manager.io/v1
kind: CertificateRequest
metadata: { name: stamped, namespace: default }
spec:
  request: ${Buffer.from(csr.stdout).toString('base64')}
  issuerRef: { name: selfsigned, kind: ClusterIssuer }
  usages: [digital signature, key encipherment]
`;
  assert.ok(!manifest.includes('username'));
  await s.apply(manifest);
  const cr = await s.getJSON(['get', 'certificaterequest', 'stamped', '-n', 'default']);
  assert.equal(cr.spec!.username, 'admin');
  assert.deepEqual(cr.spec!.groups, ['system:masters', 'system:authenticated']);
  // and a valid Certificate goes through both webhooks
  await s.apply(certificate('valid', '  secretName: valid-tls\n'));
  assert.equal((await s.getJSON(['get', 'certificate', 'valid', '-n', 'default'])).spec!.secretName, 'valid-tls');
});

test('webhook down: failurePolicy Fail refuses writes, Ignore lets them through', async () => {
  const stopped = new Promise((r) => webhook!.once('exit', r));
  webhook!.kill('SIGTERM');
  await stopped;

  const refused = await s.kubectl(['apply', ...s.validateFlags, '-f', '-'], certificate('while-down', '  secretName: while-down-tls\n'));
  assert.notEqual(refused.code, 0, refused.stdout);
  assert.match(refused.stderr, new RegExp(`Internal error occurred: failed calling webhook "webhook\\.cert-manager\\.io": failed to call webhook: Post "https://127\\.0\\.0\\.1:${port}/mutate\\?timeout=10s": .*ECONNREFUSED`));
  assert.match((await s.kubectl(['get', 'certificate', 'while-down', '-n', 'default'])).stderr, /NotFound|not found/);

  for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
    const p = await s.kubectl(['patch', kind, 'certsmith-webhook', '--type=json', '-p', '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]']);
    assert.equal(p.code, 0, p.stderr);
  }
  await s.apply(certificate('while-down', '  secretName: while-down-tls\n'));
  const stored = await s.getJSON<KubeJSON>(['get', 'certificate', 'while-down', '-n', 'default']);
  assert.equal(stored.spec!.secretName, 'while-down-tls');
  // with no webhook answering and built-in admission off, nothing refuses the invalid one now:
  // the refusal earlier was the webhook's
  await s.apply(certificate('no-secret'));
  assert.equal((await s.getJSON<KubeJSON>(['get', 'certificate', 'no-secret', '-n', 'default'])).spec!.secretName, undefined);
});
