// Secrets as kube-apiserver validates them (ValidateSecret, ValidateSecretUpdate): a type's
// required keys, data keys that can be file names, the type immutable, an immutable Secret's
// data and flag, and the 1 MiB limit; each refusal in kube's words, and nothing stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('secrets');

const request = (method: string, path: string, body?: unknown, contentType?: string) => requestJSON(api, method, path, body, contentType);

const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (name: string, over: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...over });

async function refused(method: string, path: string, body: unknown, message: string, causes: { field: string; message: string; reason: string }[], contentType?: string) {
  const r = await request(method, path, body, contentType);
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(r.body.reason, 'Invalid');
  assert.equal(r.body.message, message);
  assert.deepEqual(r.body.details.causes, causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })));
  assert.equal(r.body.details.kind, 'Secret');
}

test('a type\'s required keys are required, on create and on update', async () => {
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('tls', { type: 'kubernetes.io/tls', stringData: { a: 'b' } }),
    'Secret "tls" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]',
    [{ field: 'data[tls.crt]', message: 'Required value', reason: 'FieldValueRequired' }, { field: 'data[tls.key]', message: 'Required value', reason: 'FieldValueRequired' }]);
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('docker', { type: 'kubernetes.io/dockerconfigjson', data: {} }),
    'Secret "docker" is invalid: data[.dockerconfigjson]: Required value', [{ field: 'data[.dockerconfigjson]', message: 'Required value', reason: 'FieldValueRequired' }]);
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('sa', { type: 'kubernetes.io/service-account-token' }),
    'Secret "sa" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value',
    [{ field: 'metadata.annotations[kubernetes.io/service-account.name]', message: 'Required value', reason: 'FieldValueRequired' }]);
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('ssh', { type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': '' } }),
    'Secret "ssh" is invalid: data[ssh-privatekey]: Required value', [{ field: 'data[ssh-privatekey]', message: 'Required value', reason: 'FieldValueRequired' }]);
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('basic', { type: 'kubernetes.io/basic-auth' }),
    'Secret "basic" is invalid: [data[username]: Required value, data[password]: Required value]',
    [{ field: 'data[username]', message: 'Required value', reason: 'FieldValueRequired' }, { field: 'data[password]', message: 'Required value', reason: 'FieldValueRequired' }]);
  const bad = await request('POST', '/api/v1/namespaces/default/secrets', secret('docker2', { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{not json') } }));
  assert.equal(bad.status, 422);
  assert.match(bad.body.message, /^Secret "docker2" is invalid: data\[\.dockerconfigjson\]: Invalid value: "<secret contents redacted>": /);
  // what kube takes: the keys present, even empty
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', secret('tls-ok', { type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } }))).status, 201);
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', secret('basic-ok', { type: 'kubernetes.io/basic-auth', stringData: { username: 'u' } }))).status, 201);
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', secret('custom', { type: 'example.com/custom' }))).status, 201);
  await refused('PATCH', '/api/v1/namespaces/default/secrets/tls-ok', { data: { 'tls.key': null } },
    'Secret "tls-ok" is invalid: data[tls.key]: Required value', [{ field: 'data[tls.key]', message: 'Required value', reason: 'FieldValueRequired' }], 'application/merge-patch+json');
  assert.ok((await request('GET', '/api/v1/namespaces/default/secrets/tls-ok')).body.data['tls.key'] !== undefined, 'the stored Secret kept its key');
  for (const name of ['tls', 'docker', 'sa', 'ssh', 'basic', 'docker2']) assert.equal((await request('GET', `/api/v1/namespaces/default/secrets/${name}`)).status, 404, name);
});

test('data keys must be usable as file names (kube\'s config key rules)', async () => {
  const regex = 'a valid config key must consist of alphanumeric characters, \'-\', \'_\' or \'.\' (e.g. \'key.name\',  or \'KEY_NAME\',  or \'key-name\', regex used for validation is \'[-._a-zA-Z0-9]+\')';
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('keys', { data: { 'a b': '', '..x': '', 'ok.key_1-A': '' } }),
    `Secret "keys" is invalid: [data[..x]: Invalid value: "..x": must not start with '..', data[a b]: Invalid value: "a b": ${regex}]`,
    [{ field: 'data[..x]', message: 'Invalid value: "..x": must not start with \'..\'', reason: 'FieldValueInvalid' }, { field: 'data[a b]', message: `Invalid value: "a b": ${regex}`, reason: 'FieldValueInvalid' }]);
});

test('the type cannot change; an immutable Secret keeps its data and stays immutable', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', secret('typed', { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } }))).status, 201);
  await refused('PATCH', '/api/v1/namespaces/default/secrets/typed', { type: 'Opaque' },
    'Secret "typed" is invalid: type: Invalid value: "Opaque": field is immutable', [{ field: 'type', message: 'Invalid value: "Opaque": field is immutable', reason: 'FieldValueInvalid' }], 'application/merge-patch+json');
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', secret('frozen', { immutable: true, data: { a: b64('1') } }))).status, 201);
  await refused('PATCH', '/api/v1/namespaces/default/secrets/frozen', { immutable: false },
    'Secret "frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set', [{ field: 'immutable', message: 'Forbidden: field is immutable when `immutable` is set', reason: 'FieldValueForbidden' }], 'application/merge-patch+json');
  await refused('PATCH', '/api/v1/namespaces/default/secrets/frozen', { data: { a: b64('2') } },
    'Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set', [{ field: 'data', message: 'Forbidden: field is immutable when `immutable` is set', reason: 'FieldValueForbidden' }], 'application/merge-patch+json');
  assert.equal((await request('PATCH', '/api/v1/namespaces/default/secrets/frozen', { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json')).status, 200, 'its metadata still changes');
});

test('a Secret\'s data is at most 1 MiB', async () => {
  await refused('POST', '/api/v1/namespaces/default/secrets', secret('big', { data: { a: Buffer.alloc(1024 * 1024 + 1).toString('base64') } }),
    'Secret "big" is invalid: data: Too long: must have at most 1048576 bytes', [{ field: 'data', message: 'Too long: must have at most 1048576 bytes', reason: 'FieldValueTooLong' }]);
});

test('a patch cannot rename or move what it patches: kube\'s 400, and nothing changes', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', secret('named', { data: { a: b64('1') } }))).status, 201);
  const renamed = await request('PATCH', '/api/v1/namespaces/default/secrets/named', { metadata: { name: 'other' }, data: { a: b64('2') } }, 'application/merge-patch+json');
  assert.equal(renamed.status, 400);
  assert.equal(renamed.body.message, 'the name of the object (other) does not match the name on the URL (named)');
  const moved = await request('PATCH', '/api/v1/namespaces/default/secrets/named', [{ op: 'replace', path: '/metadata/namespace', value: 'kube-system' }], 'application/json-patch+json');
  assert.equal(moved.status, 400);
  assert.equal(moved.body.message, 'the namespace of the provided object does not match the namespace sent on the request');
  const cert = { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'stays' }, spec: { selfSigned: {} } };
  assert.equal((await request('POST', '/apis/cert-manager.io/v1/namespaces/default/issuers', cert)).status, 201);
  const crRenamed = await request('PATCH', '/apis/cert-manager.io/v1/namespaces/default/issuers/stays', { metadata: { name: 'gone' } }, 'application/merge-patch+json');
  assert.equal(crRenamed.status, 400);
  assert.equal(crRenamed.body.message, 'the name of the object (gone) does not match the name on the URL (stays)');
  assert.equal((await request('GET', '/api/v1/namespaces/default/secrets/named')).body.data.a, b64('1'));
});
