// kube-apiserver's webhook matching rules, as a table: rules (groups, versions, resources with
// `*` and subresources, operations, scope), namespaceSelector, objectSelector, ordering and the
// exemption of the webhook configurations themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchingWebhooks, ruleMatches, type RequestAttributes, type Webhook, type WebhookConfiguration, type WebhookRule } from './matching.ts';

const certCreate: RequestAttributes = {
  group: 'cert-manager.io', version: 'v1', resource: 'certificates', subresource: '', operation: 'CREATE', namespace: 'team-a',
  object: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'team-a', labels: { app: 'web' } } },
};
const certStatus: RequestAttributes = { ...certCreate, subresource: 'status', operation: 'UPDATE' };
const nsCreate: RequestAttributes = {
  group: '', version: 'v1', resource: 'namespaces', subresource: '', operation: 'CREATE', namespace: '',
  object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { env: 'prod' } } },
};
const clusterIssuerDelete: RequestAttributes = {
  group: 'cert-manager.io', version: 'v1', resource: 'clusterissuers', subresource: '', operation: 'DELETE', namespace: '',
  oldObject: { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'ci', labels: { tier: 'gold' } } },
};

const base: WebhookRule = { operations: ['CREATE', 'UPDATE'], apiGroups: ['cert-manager.io'], apiVersions: ['v1'], resources: ['certificates'] };

const ruleTable: Array<[string, WebhookRule, RequestAttributes, boolean]> = [
  ['exact rule', base, certCreate, true],
  ['operation not listed', { ...base, operations: ['DELETE'] }, certCreate, false],
  ['operation *', { ...base, operations: ['*'] }, certCreate, true],
  ['group differs', { ...base, apiGroups: ['acme.cert-manager.io'] }, certCreate, false],
  ['group *', { ...base, apiGroups: ['*'] }, certCreate, true],
  ['version differs', { ...base, apiVersions: ['v1beta1'] }, certCreate, false],
  ['resource differs', { ...base, resources: ['issuers'] }, certCreate, false],
  ['resource * matches a main resource', { ...base, resources: ['*'] }, certCreate, true],
  ['resource * does not match a subresource', { ...base, resources: ['*'] }, certStatus, false],
  ['main resource rule does not match status', base, certStatus, false],
  ['certificates/status matches status', { ...base, resources: ['certificates/status'] }, certStatus, true],
  ['certificates/status does not match the main resource', { ...base, resources: ['certificates/status'] }, certCreate, false],
  ['certificates/* matches status', { ...base, resources: ['certificates/*'] }, certStatus, true],
  ['*/status matches status', { ...base, resources: ['*/status'] }, certStatus, true],
  ['*/* matches everything', { ...base, resources: ['*/*'] }, certCreate, true],
  ['scope Namespaced, namespaced object', { ...base, scope: 'Namespaced' }, certCreate, true],
  ['scope Cluster, namespaced object', { ...base, scope: 'Cluster' }, certCreate, false],
  ['scope *, namespaced object', { ...base, scope: '*' }, certCreate, true],
  ['scope Cluster, Namespace object', { operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' }, nsCreate, true],
  ['scope Namespaced, Namespace object', { operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Namespaced' }, nsCreate, false],
  ['scope Cluster, cluster-scoped kind', { operations: ['DELETE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['clusterissuers'], scope: 'Cluster' }, clusterIssuerDelete, true],
  ['empty lists match nothing', { operations: [], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }, certCreate, false],
];

for (const [name, rule, attrs, want] of ruleTable) {
  test(`rule: ${name}`, () => assert.equal(ruleMatches(rule, attrs), want));
}

const hook = (name: string, extra: Partial<Webhook> = {}): Webhook => ({ name, rules: [{ ...base, operations: ['*'] }], admissionReviewVersions: ['v1'], sideEffects: 'None', ...extra });
const config = (name: string, ...webhooks: Webhook[]): WebhookConfiguration => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name }, webhooks });
const names = (configs: WebhookConfiguration[], a: RequestAttributes, nsLabels?: Record<string, string>) => matchingWebhooks(configs, a, nsLabels).map((r) => r.hook.name);

const selectorTable: Array<[string, Webhook, RequestAttributes, Record<string, string> | undefined, boolean]> = [
  ['no selectors', hook('a'), certCreate, undefined, true],
  ['namespaceSelector matches the namespace labels', hook('a', { namespaceSelector: { matchLabels: { team: 'a' } } }), certCreate, { team: 'a' }, true],
  ['namespaceSelector does not match', hook('a', { namespaceSelector: { matchLabels: { team: 'b' } } }), certCreate, { team: 'a' }, false],
  ['namespaceSelector NotIn with no labels', hook('a', { namespaceSelector: { matchExpressions: [{ key: 'skip', operator: 'NotIn', values: ['yes'] }] } }), certCreate, undefined, true],
  ['namespaceSelector Exists with no labels', hook('a', { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } }), certCreate, undefined, false],
  ['namespaceSelector on a Namespace uses its own labels',
    hook('a', { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }], namespaceSelector: { matchLabels: { env: 'prod' } } }), nsCreate, undefined, true],
  ['namespaceSelector never exempts a cluster-scoped kind',
    hook('a', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['clusterissuers'] }], namespaceSelector: { matchLabels: { team: 'x' } } }), clusterIssuerDelete, undefined, true],
  ['objectSelector matches the new object', hook('a', { objectSelector: { matchLabels: { app: 'web' } } }), certCreate, undefined, true],
  ['objectSelector does not match', hook('a', { objectSelector: { matchLabels: { app: 'db' } } }), certCreate, undefined, false],
  ['objectSelector matches the old object of a delete',
    hook('a', { rules: [{ operations: ['DELETE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }], objectSelector: { matchLabels: { tier: 'gold' } } }), clusterIssuerDelete, undefined, true],
];

for (const [name, h, attrs, nsLabels, want] of selectorTable) {
  test(`selector: ${name}`, () => assert.deepEqual(names([config('c', h)], attrs, nsLabels), want ? ['a'] : []));
}

test('order: configurations by name, webhooks in their order within one', () => {
  const configs = [config('zeta', hook('z1'), hook('z2')), config('alpha', hook('a2'), hook('a1'))];
  assert.deepEqual(names(configs, certCreate), ['a2', 'a1', 'z1', 'z2']);
});

test('webhook configurations are never sent to webhooks, whatever the rules say', () => {
  const everything = hook('all', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }] });
  for (const resource of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
    assert.deepEqual(names([config('c', everything)], { ...certCreate, group: 'admissionregistration.k8s.io', resource, namespace: '' }), []);
  }
  assert.deepEqual(names([config('c', everything)], certCreate), ['all']);
});

test('a selector that does not parse is an error naming the webhook and field', () => {
  const bad = hook('bad', { objectSelector: { matchExpressions: [{ key: 'a', operator: 'Sometimes' }] } });
  assert.throws(() => matchingWebhooks([config('c', bad)], certCreate), /webhook "bad": invalid objectSelector/);
});
