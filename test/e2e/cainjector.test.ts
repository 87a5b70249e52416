// The CA injector as a cert-manager user drives it: kubectl applies a CA Certificate and objects
// annotated for injection to `certsmith server`; their caBundle becomes the CA that openssl
// reads from the Secret, follows a renewal, and is refused from a Secret that does not allow it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isReady, run, startServer, waitFor } from './harness.ts';
import { startController } from './controller-harness.ts';
import { caIssuerManifest, kubectlSession, startKubectlSession, type KubeJSON, type ServerKubectlSession } from './kubectl-session.ts';

let s: ServerKubectlSession;

const ca = caIssuerManifest({ namespace: 'webhooks', certificate: 'webhook-ca', secretName: 'webhook-ca-tls', commonName: 'cainjector test CA', rotationPolicy: 'Always' });

const webhookConfiguration = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: widgets
  annotations: { cert-manager.io/inject-ca-from: webhooks/webhook-ca }
webhooks:
  - name: validate.widgets.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: { service: { name: widgets, namespace: webhooks, path: /validate } }
  - name: audit.widgets.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: { service: { name: widgets, namespace: webhooks, path: /audit } }
`;

const apiService = (name: string, secret: string) => `
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.${name}.example.com
  annotations: { cert-manager.io/inject-ca-from-secret: webhooks/${secret} }
spec:
  group: ${name}.example.com
  version: v1
  service: { name: ${name}, namespace: webhooks }
  groupPriorityMinimum: 1000
  versionPriority: 15
`;

/** The Secret's ca.crt PEM, and openssl's fingerprint of the certificate in a base64 caBundle. */
async function caOfSecret(name: string): Promise<string> {
  const secret = await s.getJSON(['get', 'secret', name, '-n', 'webhooks']);
  return secret.data!['ca.crt'];
}

async function fingerprint(caBundleB64: string, label: string): Promise<string> {
  const file = join(s.work, `${label}.pem`);
  writeFileSync(file, Buffer.from(caBundleB64, 'base64'));
  const r = await run('openssl', ['x509', '-in', file, '-noout', '-fingerprint', '-sha256', '-subject', '-ext', 'basicConstraints']);
  assert.equal(r.code, 0, `openssl parses the ${label} caBundle as a certificate: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  s = await startKubectlSession({ workPrefix: 'certsmith-cainjector-' });
  await s.apply(ca);
  await waitFor('Certificate webhook-ca Ready', async () => isReady(await s.getJSON(['get', 'certificate', 'webhook-ca', '-n', 'webhooks'])), 60_000);
});

after(async () => {
  if (s) await s.close();
});

test('inject-ca-from: every webhook\'s caBundle is the CA Certificate\'s ca.crt, and follows its renewal', async () => {
  await s.apply(webhookConfiguration);
  const first = await caOfSecret('webhook-ca-tls');
  const injected = await waitFor('caBundle of both webhooks', async () => {
    const w = await s.getJSON(['get', 'validatingwebhookconfiguration', 'widgets']);
    return w.webhooks!.every((h) => h.clientConfig.caBundle) ? w : undefined;
  });
  assert.deepEqual(injected.webhooks!.map((h) => h.clientConfig.caBundle), [first, first]);
  const before = await fingerprint(injected.webhooks![0].clientConfig.caBundle!, 'first');
  assert.match(before, /subject=CN\s*=\s*cainjector test CA/);
  assert.match(before, /CA:TRUE/);

  const renew = await s.server.cli(['renew', 'webhook-ca', '-n', 'webhooks']);
  assert.equal(renew.code, 0, renew.stderr);
  const second = await waitFor('a new CA in the Secret', async () => {
    const now = await caOfSecret('webhook-ca-tls');
    return now !== first ? now : undefined;
  }, 60_000);
  const renewed = await waitFor('the caBundle follows the renewed CA', async () => {
    const w = await s.getJSON(['get', 'validatingwebhookconfiguration', 'widgets']);
    return w.webhooks!.every((h) => h.clientConfig.caBundle === second) ? w : undefined;
  });
  const after = await fingerprint(renewed.webhooks![1].clientConfig.caBundle!, 'renewed');
  assert.notEqual(after.split('\n')[0], before.split('\n')[0], 'a different certificate after renewal');
  assert.match(after, /subject=CN\s*=\s*cainjector test CA/);
});

test('inject-ca-from-secret: only a Secret annotated allow-direct-injection is injected; the other is refused with a Warning', async () => {
  const pem = Buffer.from(await caOfSecret('webhook-ca-tls'), 'base64').toString();
  const secrets = ['allowed', 'not-allowed'].map((name) => `
apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  namespace: webhooks
  ${name === 'allowed' ? 'annotations: { cert-manager.io/allow-direct-injection: "true" }' : ''}
stringData:
  ca.crt: |
${pem.trim().split('\n').map((l) => `    ${l}`).join('\n')}
`).join('\n---\n');
  await s.apply(secrets);
  await s.apply(`${apiService('allowed', 'allowed')}\n---\n${apiService('refused', 'not-allowed')}`);

  const allowed = await waitFor('APIService v1.allowed.example.com injected', async () => {
    const a = await s.getJSON(['get', 'apiservice', 'v1.allowed.example.com']);
    return a.spec!.caBundle ? a : undefined;
  });
  assert.equal(Buffer.from(allowed.spec!.caBundle, 'base64').toString(), pem);
  await fingerprint(allowed.spec!.caBundle, 'direct');

  const warning = await waitFor('a Warning on APIService v1.refused.example.com', async () => {
    const events = await s.getJSON<{ items: KubeJSON[] }>(['get', 'events', '-A']);
    return events.items.find((e) => e.involvedObject?.kind === 'APIService' && e.involvedObject.name === 'v1.refused.example.com');
  });
  assert.equal(warning.type, 'Warning');
  assert.equal(warning.reason, 'CAInjectionRefused');
  assert.match(warning.message!, /allow-direct-injection/);
  const refused = await s.getJSON(['get', 'apiservice', 'v1.refused.example.com']);
  assert.equal(refused.spec!.caBundle, undefined);

  // allowing it later is enough: the Secret's change brings the APIService back
  const annotated = await s.kubectl(['annotate', 'secret', 'not-allowed', '-n', 'webhooks', 'cert-manager.io/allow-direct-injection=true']);
  assert.equal(annotated.code, 0, annotated.stderr);
  await waitFor('APIService v1.refused.example.com injected once allowed', async () => {
    const a = await s.getJSON(['get', 'apiservice', 'v1.refused.example.com']);
    return a.spec!.caBundle === allowed.spec!.caBundle ? a : undefined;
  });
});

test('inject-apiserver-ca: the embedded server\'s CA (the kubeconfig\'s); a CRD converted by a webhook gets the Certificate\'s CA', async () => {
  const kubeconfig = await s.getJSON<{ clusters: Array<{ cluster: Record<string, string> }> }>(['config', 'view', '--raw']);
  const serverCA = kubeconfig.clusters[0].cluster['certificate-authority-data'];
  assert.ok(serverCA);
  await s.apply(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: defaults
  annotations: { cert-manager.io/inject-apiserver-ca: "true" }
webhooks:
  - name: default.widgets.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: { url: "https://127.0.0.1:1/mutate" }
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations: { cert-manager.io/inject-ca-from: webhooks/webhook-ca }
spec:
  group: example.com
  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }
  scope: Namespaced
  versions:
    - { name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }
    - { name: v2, served: true, storage: false, schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: { service: { name: widgets, namespace: webhooks, path: /convert } }
`);
  const mutating = await waitFor('the API server CA in the mutating webhook', async () => {
    const m = await s.getJSON(['get', 'mutatingwebhookconfiguration', 'defaults']);
    return m.webhooks![0].clientConfig.caBundle ? m : undefined;
  });
  assert.equal(mutating.webhooks![0].clientConfig.caBundle, serverCA);
  await fingerprint(serverCA, 'apiserver');

  const crd = await waitFor('the CA in the CRD\'s conversion webhook', async () => {
    const c = await s.getJSON(['get', 'crd', 'widgets.example.com']);
    return c.spec!.conversion.webhook.clientConfig.caBundle ? c : undefined;
  });
  assert.equal(crd.spec!.conversion.webhook.clientConfig.caBundle, await caOfSecret('webhook-ca-tls'));
  assert.equal(crd.spec!.conversion.webhook.clientConfig.service.path, '/convert');
});

test('--no-ca-injector: annotated objects are left alone while the other controllers run', async () => {
  const off = await startServer({ args: ['--no-ca-injector'] });
  try {
    const offSession = await kubectlSession(off);
    await offSession.apply(`${ca}\n---\n${webhookConfiguration}`);
    // the CA Certificate issued is many reconciles after the webhook configuration was stored; an injector would have acted by then
    await waitFor('Certificate webhook-ca Ready without the injector', async () => {
      const r = await offSession.kubectl(['get', 'certificate', 'webhook-ca', '-n', 'webhooks', '-o', 'json']);
      return r.code === 0 && isReady(JSON.parse(r.stdout) as KubeJSON);
    }, 60_000);
    const r = await offSession.kubectl(['get', 'validatingwebhookconfiguration', 'widgets', '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as KubeJSON).webhooks!.map((h) => h.clientConfig.caBundle), [undefined, undefined]);
  } finally {
    await off.stop();
    off.cleanup();
  }
});

test('certsmith controller (cluster mode) injects through the API: inject-ca-from, and inject-apiserver-ca from its kubeconfig\'s CA', async () => {
  const api = await startServer({ args: ['--no-controllers'] });
  const controller = startController({ kubeconfig: api.kubeconfig });
  try {
    const apiSession = await kubectlSession(api);
    await apiSession.apply(`${ca}\n---\n${webhookConfiguration.replace('cert-manager.io/inject-ca-from: webhooks/webhook-ca', 'cert-manager.io/inject-apiserver-ca: "true"')}\n---\n${webhookConfiguration.replace('name: widgets\n', 'name: widgets-ca\n')}`);
    const serverCA = JSON.parse((await apiSession.kubectl(['config', 'view', '--raw', '-o', 'json'])).stdout).clusters[0].cluster['certificate-authority-data'] as string;
    await waitFor('the API server CA injected by certsmith controller', async () =>
      (await apiSession.getJSON(['get', 'validatingwebhookconfiguration', 'widgets'])).webhooks!.every((h) => h.clientConfig.caBundle === serverCA), 60_000);
    await waitFor('the Certificate\'s CA injected by certsmith controller', async () => {
      const secret = await apiSession.kubectl(['get', 'secret', 'webhook-ca-tls', '-n', 'webhooks', '-o', 'json']);
      if (secret.code !== 0) return undefined;
      const want = (JSON.parse(secret.stdout) as KubeJSON).data?.['ca.crt'];
      return want && (await apiSession.getJSON(['get', 'validatingwebhookconfiguration', 'widgets-ca'])).webhooks!.every((h) => h.clientConfig.caBundle === want);
    }, 60_000);
  } finally {
    assert.equal(await controller.stop(), 0, controller.output());
    await api.stop();
    api.cleanup();
  }
});
