// kube-apiserver's rules for webhook configurations, one row per rule: the messages and field
// paths are kube's, as a 422 prints them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MutatingWebhookConfigurationType, ValidatingWebhookConfigurationType } from '../../api/resources.ts';
import { fieldErrorText } from '../../api/validation/field-errors.ts';
import type { KubeObject } from '../../api/meta.ts';
import { validateWebhookConfiguration } from './config-validation.ts';

const good = {
  name: 'check.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None',
  clientConfig: { url: 'https://127.0.0.1:8443/validate' },
  rules: [{ operations: ['CREATE'], apiGroups: ['cert-manager.io'], apiVersions: ['v1'], resources: ['certificates'] }],
};
const config = (hooks: Record<string, unknown>[], kind = 'ValidatingWebhookConfiguration') =>
  ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: 'hooks' }, webhooks: hooks }) as unknown as KubeObject;
const problems = (hooks: Record<string, unknown>[], mutating = false, old?: Record<string, unknown>[]) => {
  const type = mutating ? MutatingWebhookConfigurationType : ValidatingWebhookConfigurationType;
  const kind = mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  return validateWebhookConfiguration(type, config(hooks, kind), old ? config(old, kind) : undefined).map(fieldErrorText);
};
const hook = (patch: Record<string, unknown>) => ({ ...good, ...patch });

const form = '; desired format: https://host[/path]';
const rows: Array<[string, Record<string, unknown>[], string[], boolean?]> = [
  ['a valid webhook', [good], []],
  ['name not fully qualified', [hook({ name: 'check.example' })], ['webhooks[0].name: Invalid value: "check.example": should be a domain with at least three segments separated by dots']],
  ['name missing', [hook({ name: '' })], ['webhooks[0].name: Required value']],
  ['name not a DNS subdomain', [hook({ name: 'Check.Example.com' })], [`webhooks[0].name: Invalid value: "Check.Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`]],
  ['duplicate webhook names', [good, good], ['webhooks[1].name: Duplicate value: "check.example.com"']],
  ['clientConfig with neither url nor service', [hook({ clientConfig: {} })], ['webhooks[0].clientConfig: Required value: exactly one of url or service is required']],
  ['clientConfig with both', [hook({ clientConfig: { url: 'https://a.example/x', service: { name: 's', namespace: 'n' } } })], ['webhooks[0].clientConfig: Required value: exactly one of url or service is required']],
  ['an http url', [hook({ clientConfig: { url: 'http://127.0.0.1:8443/v' } })], [`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme${form}`]],
  ['a url without a host', [hook({ clientConfig: { url: 'https:///v' } })], [`webhooks[0].clientConfig.url: Invalid value: "": host must be provided${form}`]],
  ['a url with userinfo, query and fragment', [hook({ clientConfig: { url: 'https://me@hook.example/v?x=1#top' } })], [
    'webhooks[0].clientConfig.url: Invalid value: "me": user information is not permitted in the URL',
    'webhooks[0].clientConfig.url: Invalid value: "top": fragments are not permitted in the URL',
    'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
  ]],
  ['a url Go cannot parse', [hook({ clientConfig: { url: 'https://hook.example:abc/v' } })], [`webhooks[0].clientConfig.url: Required value: url must be a valid URL: parse "https://hook.example:abc/v": invalid port ":abc" after host${form}`]],
  ['a service without name and namespace, a bad port and path', [hook({ clientConfig: { service: { port: 70000, path: 'x//y' } } })], [
    'webhooks[0].clientConfig.service.name: Required value: service name is required',
    'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required',
    'webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
    'webhooks[0].clientConfig.service.path: Invalid value: "x//y": must start with a \'/\'',
    // kube drops the first character whatever it is, so "x//y" has two empty segments
    'webhooks[0].clientConfig.service.path: Invalid value: "x//y": segment[0] may not be empty',
    'webhooks[0].clientConfig.service.path: Invalid value: "x//y": segment[1] may not be empty',
  ]],
  ['a service with the default port', [hook({ clientConfig: { service: { name: 'hook', namespace: 'default', path: '/validate' } } })], []],
  ['admissionReviewVersions missing', [hook({ admissionReviewVersions: undefined })], ['webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1']],
  ['admissionReviewVersions without a known version', [hook({ admissionReviewVersions: ['v2', 'v2'] })], [
    'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
    'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
  ]],
  ['sideEffects missing', [hook({ sideEffects: undefined })], ['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun']],
  ['sideEffects Unknown (refused in v1)', [hook({ sideEffects: 'Unknown' })], ['webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"']],
  ['sideEffects Some', [hook({ sideEffects: 'Some' })], ['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"']],
  ['failurePolicy', [hook({ failurePolicy: 'Retry' })], ['webhooks[0].failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"']],
  ['matchPolicy', [hook({ matchPolicy: 'Loose' })], ['webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"']],
  ['timeoutSeconds 0', [hook({ timeoutSeconds: 0 })], ['webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds']],
  ['timeoutSeconds 31', [hook({ timeoutSeconds: 31 })], ['webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds']],
  ['timeoutSeconds 30', [hook({ timeoutSeconds: 30 })], []],
  ['rules: operations, scope', [hook({ rules: [{ operations: ['CREATE', 'PATCH'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'], scope: 'Everywhere' }] })], [
    'webhooks[0].rules[0].operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
  ]],
  ['rules: * beside other operations, empty lists', [hook({ rules: [{ operations: ['*', 'CREATE'], apiGroups: [], apiVersions: [], resources: [] }] })], [
    'webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if \'*\' is present, must not specify other operations',
    'webhooks[0].rules[0].apiGroups: Required value',
    'webhooks[0].rules[0].apiVersions: Required value',
    'webhooks[0].rules[0].resources: Required value',
  ]],
  ['rules: resource wildcards', [hook({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*', 'pods/*', 'pods/status', '*', 'secrets'] }] })], [
    'webhooks[0].rules[0].resources[1]: Invalid value: "pods/*": if \'*/*\' is present, must not specify pods/*',
    'webhooks[0].rules[0].resources[2]: Invalid value: "pods/status": if \'pods/*\' is present, must not specify pods/status',
    'webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods/*", "pods/status", "*", "secrets"}: if \'*/*\' is present, must not specify other resources',
    'webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods/*", "pods/status", "*", "secrets"}: if \'*\' is present, must not specify other resources without subresources',
  ]],
  ['bad label selectors', [hook({
    namespaceSelector: { matchLabels: { 'bad key!': 'v' } },
    objectSelector: { matchExpressions: [{ key: 'a', operator: 'In' }, { key: 'b', operator: 'Exists', values: ['x'] }, { key: 'c', operator: 'Gt', values: ['1'] }, { key: 'd', operator: 'In', values: ['bad value!'] }] },
  })], [
    'webhooks[0].namespaceSelector.matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character',
    'webhooks[0].objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is \'In\' or \'NotIn\'',
    'webhooks[0].objectSelector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is \'Exists\' or \'DoesNotExist\'',
    'webhooks[0].objectSelector.matchExpressions[2].operator: Invalid value: "Gt": not a valid selector operator',
    'webhooks[0].objectSelector.matchExpressions[3].values[0]: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character, at most 63 characters',
  ]],
  ['matchConditions: name and expression', [hook({ matchConditions: [{ name: 'a', expression: ' ' }, { name: 'a', expression: 'true' }, { expression: 'true' }] })], [
    'webhooks[0].matchConditions[0].expression: Required value',
    'webhooks[0].matchConditions[1].name: Duplicate value: "a"',
    'webhooks[0].matchConditions[2].name: Required value',
  ]],
  ['matchConditions: expressions are compiled', [hook({ matchConditions: [
    { name: 'syntax', expression: 'object.metadata.name ==' },
    { name: 'not-bool', expression: "'a' + 'b'" },
    { name: 'rbac', expression: "authorizer.group('').resource('pods').check('get').allowed()" },
    { name: 'fine', expression: " has(object.metadata.labels) && request.operation == 'CREATE' " },
  ] })], [
    'webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:24: Unexpected token: EOF',
    'webhooks[0].matchConditions[1].expression: Invalid value: "\'a\' + \'b\'": must evaluate to bool',
    'webhooks[0].matchConditions[2].expression: Invalid value: "authorizer.group(\'\').resource(\'pods\').check(\'get\').allowed()": compilation failed: authorizer is not supported by the embedded server (it has no RBAC to ask)',
  ]],
  ['matchConditions: at most 64', [hook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })) })], [
    'webhooks[0].matchConditions: Invalid value: 65: must have at most 64 items',
  ]],
];

for (const [what, hooks, expected] of rows) {
  test(`validating webhook configuration: ${what}`, () => {
    assert.deepEqual(problems(hooks), expected);
  });
}

test('reinvocationPolicy is checked on mutating webhooks', () => {
  assert.deepEqual(problems([hook({ reinvocationPolicy: 'Always' })], true), ['webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']);
  assert.deepEqual(problems([hook({ reinvocationPolicy: 'IfNeeded' })], true), []);
});

test('metadata.name must be a DNS subdomain', () => {
  const bad = { ...config([good]), metadata: { name: 'Not_Valid' } } as KubeObject;
  assert.match(validateWebhookConfiguration(ValidatingWebhookConfigurationType, bad).map(fieldErrorText).join('\n'), /^metadata\.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/);
});

test('matchConditions that do not compile, stored before they were compiled, do not stop other edits', () => {
  const stored = [hook({ matchConditions: [{ name: 'old', expression: 'object.x ==' }] })];
  assert.deepEqual(problems(stored.map((h) => ({ ...h, timeoutSeconds: 5 })), false, stored), []);
});

test('an update is held to a rule only when the stored configuration kept it (as kube-apiserver relaxes updates)', () => {
  const legacy = [hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v2'] }), hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v2'] })];
  // stored before validation existed: still editable, e.g. to change its failurePolicy
  assert.deepEqual(problems(legacy.map((h) => ({ ...h, failurePolicy: 'Ignore' })), false, legacy), []);
  // a rule the stored object kept still holds
  assert.deepEqual(problems([hook({ sideEffects: 'Unknown' })], false, [good]), ['webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"']);
  // other rules hold whatever was stored
  assert.deepEqual(problems([hook({ sideEffects: 'Unknown', timeoutSeconds: 99 })], false, legacy), ['webhooks[0].timeoutSeconds: Invalid value: 99: the timeout value must be between 1 and 30 seconds']);
});
