// Admission webhook configurations through kubectl against `certsmith server` (issue 15): an
// invalid configuration is refused with kube-apiserver's 422 and field paths and nothing is
// stored; a registered webhook's warnings are printed by kubectl as `Warning: ...`; a
// configuration is stored with kube's v1 defaults.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startServer, type RunningServer } from './harness.ts';
import { kubectlSession, type KubectlSession } from './kubectl-session.ts';
import { ensureServingCertificate } from '../../src/server/tls.ts';

let server: RunningServer;
let s: KubectlSession;
let dir: string;
let hook: https.Server;
let hookPort: number;
let caBundle: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'certsmith-webhook-configs-'));
  const pki = await ensureServingCertificate(join(dir, 'hook'));
  caBundle = Buffer.from(pki.caPem).toString('base64');
  // allows everything, with two warnings
  hook = https.createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
        response: { uid: review.request.uid, allowed: true, warnings: ['secrets here are audited', 'label them with team=...'] },
      }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookPort = (hook.address() as AddressInfo).port;
  server = await startServer({ args: ['--no-controllers'] });
  s = await kubectlSession(server);
});

after(async () => {
  await server?.stop();
  server?.cleanup();
  hook?.closeAllConnections();
  if (hook) await new Promise<void>((resolve) => hook.close(() => resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('kubectl apply of an invalid ValidatingWebhookConfiguration is refused with kube\'s 422 and field paths; nothing is stored', async () => {
  const r = await s.kubectl(['apply', ...s.validateFlags, '-f', '-'], `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: broken }
webhooks:
  - name: broken.example
    sideEffects: Unknown
    admissionReviewVersions: [v2]
    timeoutSeconds: 45
    clientConfig: { url: "http://127.0.0.1:${hookPort}/validate" }
    rules: [{ operations: [PATCH], apiGroups: [""], apiVersions: [v1], resources: [secrets] }]
`);
  assert.notEqual(r.code, 0, r.stdout);
  assert.match(r.stderr, /The ValidatingWebhookConfiguration "broken" is invalid/);
  for (const expected of [
    'webhooks[0].name: Invalid value: "broken.example": should be a domain with at least three segments separated by dots',
    'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
    'webhooks[0].timeoutSeconds: Invalid value: 45: the timeout value must be between 1 and 30 seconds',
    'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
    'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
  ]) assert.ok(r.stderr.includes(expected), `missing ${expected} in:\n${r.stderr}`);
  const got = await s.kubectl(['get', 'validatingwebhookconfiguration', 'broken', '-o', 'name']);
  assert.notEqual(got.code, 0, got.stdout);
  assert.match(got.stderr, /NotFound|not found/);
});

test('a webhook\'s warnings are printed by kubectl as Warning: lines', async () => {
  await s.apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: { name: audit-secrets }
webhooks:
  - name: audit.secrets.example.com
    sideEffects: None
    admissionReviewVersions: [v1]
    clientConfig: { url: "https://127.0.0.1:${hookPort}/mutate", caBundle: ${caBundle} }
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [secrets] }]
`);
  const created = await s.kubectl(['create', 'secret', 'generic', 'audited', '-n', 'default', '--from-literal=a=b']);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /Warning: secrets here are audited/);
  assert.match(created.stderr, /Warning: label them with team=\.\.\./);
});

test('kubectl get -o yaml shows kube-apiserver\'s v1 defaults on a configuration written without them', async () => {
  await s.apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: { name: bare-mutating }
webhooks:
  - name: bare.hooks.example.com
    sideEffects: None
    admissionReviewVersions: [v1]
    clientConfig: { service: { name: hook, namespace: default, path: /mutate } }
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
`);
  const r = await s.kubectl(['get', 'mutatingwebhookconfiguration', 'bare-mutating', '-o', 'yaml']);
  assert.equal(r.code, 0, r.stderr);
  const hook = (parseYaml(r.stdout) as { webhooks: Array<Record<string, any>> }).webhooks[0];
  assert.equal(hook.failurePolicy, 'Fail');
  assert.equal(hook.matchPolicy, 'Equivalent');
  assert.deepEqual(hook.namespaceSelector, {});
  assert.deepEqual(hook.objectSelector, {});
  assert.equal(hook.timeoutSeconds, 10);
  assert.equal(hook.reinvocationPolicy, 'Never');
  assert.equal(hook.clientConfig.service.port, 443);
  assert.equal(hook.rules[0].scope, '*');
  // v1 defaults neither: they stay as written
  assert.equal(hook.sideEffects, 'None');
  assert.deepEqual(hook.admissionReviewVersions, ['v1']);
});

test('matchConditions through kubectl: an expression that does not compile is refused with kube\'s 422 naming it; a valid one decides which writes reach the webhook', async () => {
  const configuration = (expression: string) => `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: audit-labelled }
webhooks:
  - name: audit.labelled.example.com
    sideEffects: None
    admissionReviewVersions: [v1]
    clientConfig: { url: "https://127.0.0.1:${hookPort}/validate", caBundle: ${caBundle} }
    rules: [{ operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [secrets] }]
    matchConditions:
      - name: labelled
        expression: ${JSON.stringify(expression)}
`;
  const refused = await s.kubectl(['apply', ...s.validateFlags, '-f', '-'], configuration("has(object.metadata.labels) &&"));
  assert.notEqual(refused.code, 0, refused.stdout);
  assert.match(refused.stderr, /The ValidatingWebhookConfiguration "audit-labelled" is invalid/);
  assert.match(refused.stderr, /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "has\(object\.metadata\.labels\) &&": compilation failed: ERROR: <input>:1:/);

  await s.apply(configuration("has(object.metadata.labels) && object.metadata.labels.audit == 'yes'"));
  const created = await s.kubectl(['create', 'secret', 'generic', 'conditional', '-n', 'default', '--from-literal=a=b']);
  assert.equal(created.code, 0, created.stderr);
  // an update the condition excludes: the webhook is not called, so no warnings
  const quiet = await s.kubectl(['annotate', 'secret', 'conditional', '-n', 'default', 'note=unaudited']);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /Warning:/);
  const audited = await s.kubectl(['label', 'secret', 'conditional', '-n', 'default', 'audit=yes']);
  assert.equal(audited.code, 0, audited.stderr);
  assert.match(audited.stderr, /Warning: secrets here are audited/);
});
