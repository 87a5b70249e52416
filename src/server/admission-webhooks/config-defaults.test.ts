// kube-apiserver's v1 defaults for webhook configurations, one row per default: what a
// configuration written without the field holds afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MutatingWebhookConfigurationType, ValidatingWebhookConfigurationType } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import { defaultWebhookConfiguration } from './config-defaults.ts';

const bare = { name: 'check.example.com', clientConfig: { url: 'https://127.0.0.1:8443/v' } };
const configuration = (kind: string, webhooks: unknown) =>
  ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'hooks' }, webhooks }) as unknown as KubeObject;
const defaulted = (mutating: boolean, hook: unknown) => {
  const type = mutating ? MutatingWebhookConfigurationType : ValidatingWebhookConfigurationType;
  const out = defaultWebhookConfiguration(type, configuration(type.kind, [hook])) as unknown as { webhooks: Array<Record<string, unknown>> };
  return out.webhooks[0];
};

const rows: Array<[string, boolean, Record<string, unknown>, (h: Record<string, any>) => unknown, unknown]> = [
  ['failurePolicy Fail', false, bare, (h) => h.failurePolicy, 'Fail'],
  ['matchPolicy Equivalent', false, bare, (h) => h.matchPolicy, 'Equivalent'],
  ['namespaceSelector {}', false, bare, (h) => h.namespaceSelector, {}],
  ['objectSelector {}', false, bare, (h) => h.objectSelector, {}],
  ['timeoutSeconds 10', false, bare, (h) => h.timeoutSeconds, 10],
  ['no reinvocationPolicy on a validating webhook', false, bare, (h) => 'reinvocationPolicy' in h, false],
  ['reinvocationPolicy Never on a mutating webhook', true, bare, (h) => h.reinvocationPolicy, 'Never'],
  ['no default for sideEffects (v1 requires it)', true, bare, (h) => 'sideEffects' in h, false],
  ['no default for admissionReviewVersions (v1 requires it)', true, bare, (h) => 'admissionReviewVersions' in h, false],
  ['service port 443', false, { ...bare, clientConfig: { service: { name: 'hook', namespace: 'default' } } }, (h) => h.clientConfig.service.port, 443],
  ['no port on a url', false, bare, (h) => h.clientConfig, { url: 'https://127.0.0.1:8443/v' }],
  ['rules[].scope *', false, { ...bare, rules: [{ operations: ['CREATE'] }, { scope: 'Namespaced' }] }, (h) => h.rules.map((r: any) => r.scope), ['*', 'Namespaced']],
  ['an explicit null is defaulted (Go\'s nil)', true, { ...bare, failurePolicy: null, reinvocationPolicy: null }, (h) => [h.failurePolicy, h.reinvocationPolicy], ['Fail', 'Never']],
  ['a value set is kept', true, { ...bare, failurePolicy: 'Ignore', matchPolicy: 'Exact', timeoutSeconds: 3, reinvocationPolicy: 'IfNeeded', namespaceSelector: { matchLabels: { a: 'b' } } },
    (h) => [h.failurePolicy, h.matchPolicy, h.timeoutSeconds, h.reinvocationPolicy, h.namespaceSelector], ['Ignore', 'Exact', 3, 'IfNeeded', { matchLabels: { a: 'b' } }]],
  ['a wrong type is left for validation to refuse', false, { ...bare, timeoutSeconds: 'soon', rules: ['not a rule'] }, (h) => [h.timeoutSeconds, h.rules], ['soon', ['not a rule']]],
];

for (const [name, mutating, hook, pick, expected] of rows) {
  test(`defaults: ${name}`, () => {
    assert.deepEqual(pick(defaulted(mutating, hook)), expected);
  });
}

test('defaults: the input is not changed; webhooks that are not a list, and entries that are not objects, are left alone', () => {
  const input = configuration('ValidatingWebhookConfiguration', [structuredClone(bare), 'junk']);
  const before = structuredClone(input);
  const out = defaultWebhookConfiguration(ValidatingWebhookConfigurationType, input) as unknown as { webhooks: unknown[] };
  assert.deepEqual(input, before);
  assert.equal(out.webhooks[1], 'junk');
  for (const webhooks of [undefined, null, 'x', {}]) {
    const c = configuration('ValidatingWebhookConfiguration', webhooks);
    assert.deepEqual(defaultWebhookConfiguration(ValidatingWebhookConfigurationType, c), c);
  }
});
