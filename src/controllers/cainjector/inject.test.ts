import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, Secret } from '../../api/meta.ts';
import {
  APIServiceType, CustomResourceDefinitionType, MutatingWebhookConfigurationType, ValidatingWebhookConfigurationType,
} from '../../api/resources.ts';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import { caSourceOf, decideInjection, injectableFor, INJECT_REASON, type InjectionInput } from './inject.ts';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBroot\n-----END CERTIFICATE-----\n';
const NEW_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBrotated\n-----END CERTIFICATE-----\n';
const APISERVER_PEM = '-----BEGIN CERTIFICATE-----\nMIIBapiserver\n-----END CERTIFICATE-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const certificate: CertificateObj = {
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
  metadata: { name: 'webhook-ca', namespace: 'sys' },
  spec: { secretName: 'webhook-ca-tls', issuerRef: { name: 'selfsigned' } } as CertificateObj['spec'],
};

function secret(name: string, annotations: Record<string, string>, data: Record<string, string> = { 'ca.crt': b64(CA_PEM) }): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'sys', annotations }, type: 'kubernetes.io/tls', data };
}
const certSecret = secret('webhook-ca-tls', { 'cert-manager.io/certificate-name': 'webhook-ca' });
const directSecret = secret('bundle', { 'cert-manager.io/allow-direct-injection': 'true' });

function webhookConfig(annotations: Record<string, string>, bundles: Array<string | undefined> = [undefined, undefined]): KubeObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'hooks', annotations },
    webhooks: bundles.map((caBundle, i) => ({
      name: `h${i}.example.com`, admissionReviewVersions: ['v1'], sideEffects: 'None',
      clientConfig: { service: { name: 'svc', namespace: 'sys', path: `/v${i}` }, ...(caBundle !== undefined ? { caBundle } : {}) },
    })),
  };
}

const apiService = (annotations: Record<string, string>, caBundle?: string): KubeObject => ({
  apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService',
  metadata: { name: 'v1.metrics.example.com', annotations },
  spec: { group: 'metrics.example.com', version: 'v1', service: { name: 'svc', namespace: 'sys' }, groupPriorityMinimum: 100, versionPriority: 10, ...(caBundle ? { caBundle } : {}) },
});

const crd = (annotations: Record<string, string>, conversion?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com', annotations },
  spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced', versions: [], ...(conversion ? { conversion } : {}) },
});

const fromCert = { 'cert-manager.io/inject-ca-from': 'sys/webhook-ca' };
const fromSecret = { 'cert-manager.io/inject-ca-from-secret': 'sys/bundle' };
const validating = injectableFor(ValidatingWebhookConfigurationType);

function decide(target: KubeObject, rest: Omit<InjectionInput, 'target' | 'injectable'> = {}, injectable = validating) {
  return decideInjection({ target, injectable, ...rest });
}

test('inject-ca-from: every webhook gets the ca.crt of the Certificate\'s Secret, base64 of the PEM', () => {
  const d = decide(webhookConfig(fromCert), { certificate, secret: certSecret });
  assert.ok(d.update);
  const hooks = d.update.webhooks as Array<{ name: string; clientConfig: { caBundle: string; service: { path: string } } }>;
  assert.deepEqual(hooks.map((h) => Buffer.from(h.clientConfig.caBundle, 'base64').toString()), [CA_PEM, CA_PEM]);
  // the rest of each webhook is kept
  assert.deepEqual(hooks.map((h) => [h.name, h.clientConfig.service.path]), [['h0.example.com', '/v0'], ['h1.example.com', '/v1']]);
  assert.deepEqual(d.events, []);
});

test('the input object is not changed (informer caches are shared)', () => {
  const target = Object.freeze(webhookConfig(fromCert));
  const before = JSON.stringify(target);
  decide(target, { certificate, secret: certSecret });
  assert.equal(JSON.stringify(target), before);
});

test('mutating webhook configurations get it the same way', () => {
  const target = { ...webhookConfig(fromCert, [undefined]), kind: 'MutatingWebhookConfiguration' };
  const d = decide(target, { certificate, secret: certSecret }, injectableFor(MutatingWebhookConfigurationType));
  assert.equal((d.update!.webhooks as Array<{ clientConfig: { caBundle: string } }>)[0].clientConfig.caBundle, b64(CA_PEM));
});

test('inject-ca-from: nothing while the Certificate, its Secret or the Secret\'s ca.crt is missing', () => {
  assert.equal(decide(webhookConfig(fromCert), { secret: certSecret }).update, undefined);
  assert.equal(decide(webhookConfig(fromCert), { certificate }).update, undefined);
  const noCA = secret('webhook-ca-tls', { 'cert-manager.io/certificate-name': 'webhook-ca' }, { 'tls.crt': b64(CA_PEM) });
  const d = decide(webhookConfig(fromCert), { certificate, secret: noCA });
  assert.equal(d.update, undefined);
  assert.deepEqual(d.events, [], 'a Secret not yet issued is no reason to warn');
});

test('inject-ca-from: a Secret that does not name the Certificate in cert-manager.io/certificate-name is refused with a Warning', () => {
  for (const annotations of [{}, { 'cert-manager.io/certificate-name': 'someone-else' }] as Array<Record<string, string>>) {
    const d = decide(webhookConfig(fromCert), { certificate, secret: secret('webhook-ca-tls', annotations) });
    assert.equal(d.update, undefined);
    assert.equal(d.events.length, 1);
    assert.equal(d.events[0].type, 'Warning');
    assert.equal(d.events[0].reason, INJECT_REASON.refused);
    assert.match(d.events[0].message, /sys\/webhook-ca-tls/);
  }
});

test('inject-ca-from-secret: ca.crt of a Secret that allows direct injection; without the annotation nothing and a Warning', () => {
  const d = decide(apiService(fromSecret), { secret: directSecret }, injectableFor(APIServiceType));
  assert.equal((d.update!.spec as { caBundle: string }).caBundle, b64(CA_PEM));
  assert.equal((d.update!.spec as { group: string }).group, 'metrics.example.com');

  for (const annotations of [{}, { 'cert-manager.io/allow-direct-injection': 'false' }] as Array<Record<string, string>>) {
    const refused = decide(apiService(fromSecret), { secret: secret('bundle', annotations) }, injectableFor(APIServiceType));
    assert.equal(refused.update, undefined);
    assert.equal(refused.events[0]?.type, 'Warning');
    assert.match(refused.events[0].message, /allow-direct-injection/);
  }
  const missing = decide(apiService(fromSecret), {}, injectableFor(APIServiceType));
  assert.equal(missing.update, undefined);
  assert.deepEqual(missing.events, []);
});

test('inject-apiserver-ca: the API server CA when known, else nothing', () => {
  const ann = { 'cert-manager.io/inject-apiserver-ca': 'true' };
  const d = decide(webhookConfig(ann), { apiServerCA: APISERVER_PEM });
  assert.deepEqual((d.update!.webhooks as Array<{ clientConfig: { caBundle: string } }>).map((h) => h.clientConfig.caBundle), [b64(APISERVER_PEM), b64(APISERVER_PEM)]);
  assert.equal(decide(webhookConfig(ann)).update, undefined);
  assert.equal(decide(webhookConfig({ 'cert-manager.io/inject-apiserver-ca': 'false' }), { apiServerCA: APISERVER_PEM }).update, undefined);
});

test('when several annotations are set, inject-ca-from wins over inject-ca-from-secret over inject-apiserver-ca (as upstream)', () => {
  const all = { ...fromCert, ...fromSecret, 'cert-manager.io/inject-apiserver-ca': 'true' };
  assert.deepEqual(caSourceOf(webhookConfig(all)), { source: { kind: 'certificate', namespace: 'sys', name: 'webhook-ca' } });
  assert.deepEqual(caSourceOf(webhookConfig({ ...fromSecret, 'cert-manager.io/inject-apiserver-ca': 'true' })), { source: { kind: 'secret', namespace: 'sys', name: 'bundle' } });
  assert.deepEqual(caSourceOf(webhookConfig({})), { none: true });
});

test('an annotation that is not <namespace>/<name>: nothing, and a BadConfig Warning naming it', () => {
  for (const value of ['webhook-ca', '/webhook-ca', 'sys/']) {
    const d = decide(webhookConfig({ 'cert-manager.io/inject-ca-from': value }), { certificate, secret: certSecret });
    assert.equal(d.update, undefined, value);
    assert.equal(d.events[0]?.reason, INJECT_REASON.badConfig);
    assert.match(d.events[0].message, /inject-ca-from/);
  }
});

test('an unchanged bundle is not written; a rotated CA is', () => {
  const current = webhookConfig(fromCert, [b64(CA_PEM), b64(CA_PEM)]);
  assert.equal(decide(current, { certificate, secret: certSecret }).update, undefined);
  // one webhook behind (e.g. added by hand) is enough to write
  assert.ok(decide(webhookConfig(fromCert, [b64(CA_PEM), undefined]), { certificate, secret: certSecret }).update);
  const rotated = secret('webhook-ca-tls', { 'cert-manager.io/certificate-name': 'webhook-ca' }, { 'ca.crt': b64(NEW_CA_PEM) });
  const d = decide(current, { certificate, secret: rotated });
  assert.deepEqual((d.update!.webhooks as Array<{ clientConfig: { caBundle: string } }>).map((h) => h.clientConfig.caBundle), [b64(NEW_CA_PEM), b64(NEW_CA_PEM)]);
});

test('CRDs: only a Webhook conversion strategy gets a caBundle; others are left untouched', () => {
  const crdInjectable = injectableFor(CustomResourceDefinitionType);
  assert.equal(decide(crd(fromCert), { certificate, secret: certSecret }, crdInjectable).update, undefined);
  assert.equal(decide(crd(fromCert, { strategy: 'None' }), { certificate, secret: certSecret }, crdInjectable).update, undefined);
  const webhook = crd(fromCert, { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 'svc', namespace: 'sys' } } } });
  const d = decide(webhook, { certificate, secret: certSecret }, crdInjectable);
  const conversion = (d.update!.spec as { conversion: { webhook: { conversionReviewVersions: string[]; clientConfig: { caBundle: string; service: unknown } } } }).conversion;
  assert.equal(conversion.webhook.clientConfig.caBundle, b64(CA_PEM));
  assert.deepEqual(conversion.webhook.conversionReviewVersions, ['v1']);
  assert.deepEqual(conversion.webhook.clientConfig.service, { name: 'svc', namespace: 'sys' });
  // a Webhook strategy without a webhook stanza yet gets one
  const bare = decide(crd(fromCert, { strategy: 'Webhook' }), { certificate, secret: certSecret }, crdInjectable);
  assert.equal((bare.update!.spec as { conversion: { webhook: { clientConfig: { caBundle: string } } } }).conversion.webhook.clientConfig.caBundle, b64(CA_PEM));
});

test('objects being deleted and objects without injection annotations are left alone', () => {
  const deleting = webhookConfig(fromCert);
  deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  assert.equal(decide(deleting, { certificate, secret: certSecret }).update, undefined);
  const d = decide(webhookConfig({}), { certificate, secret: certSecret });
  assert.equal(d.update, undefined);
  assert.deepEqual(d.events, []);
});
