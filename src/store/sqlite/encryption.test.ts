import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { parseEncryptionConfiguration, ValueTransformer, EncryptionConfigError } from './encryption.ts';

const key16 = randomBytes(16).toString('base64');
const key32 = randomBytes(32).toString('base64');

function config(providers: string, resources = '[secrets]'): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: ${resources}
    providers:
${providers.split('\n').map((l) => `      ${l}`).join('\n')}
`;
}

function rejects(text: string, message: string) {
  assert.throws(() => parseEncryptionConfiguration(text), (e: unknown) => {
    assert.ok(e instanceof EncryptionConfigError, `not an EncryptionConfigError: ${String(e)}`);
    assert.equal(e.message, message);
    // no error ever carries key material
    assert.ok(!e.message.includes(key16) && !e.message.includes(key32), e.message);
    return true;
  });
}

test('encryption config: the upstream example parses, providers and keys in order', () => {
  const c = parseEncryptionConfiguration(config(`- aesgcm:
    keys:
      - name: key1
        secret: ${key32}
      - name: key0
        secret: ${key16}
- aescbc:
    keys: [{ name: old, secret: ${key16} }]
- identity: {}`));
  assert.deepEqual(c.resources[0].resources, ['secrets']);
  const [gcm, cbc, identity] = c.resources[0].providers;
  assert.equal(gcm.type, 'aesgcm');
  assert.deepEqual(gcm.type === 'aesgcm' && gcm.keys.map((k) => [k.name, k.secret.symmetricKeySize]), [['key1', 32], ['key0', 16]]);
  assert.deepEqual(cbc.type === 'aescbc' && cbc.keys.map((k) => k.name), ['old']);
  assert.deepEqual(identity, { type: 'identity' });
  // a config that ends up in a log line does not show its keys
  assert.ok(!inspect(c, { depth: 10 }).includes(key32));
});

test('encryption config: each mistake is named by its field, without the key', () => {
  const p1 = 'resources[0].providers[1]';
  rejects(config(`- identity: {}\n- aescbc:\n    keys: [{ name: key1, secret: ${randomBytes(20).toString('base64')} }]`), `${p1}.aescbc.keys[0].secret: must be base64 of 16, 24 or 32 bytes`);
  rejects(config(`- identity: {}\n- aescbc:\n    keys: [{ name: key1, secret: "not base64 at all!" }]`), `${p1}.aescbc.keys[0].secret: must be base64 of 16, 24 or 32 bytes`);
  // Buffer.from(…, 'base64') would accept this and silently drop the junk
  rejects(config(`- identity: {}\n- aescbc:\n    keys: [{ name: key1, secret: "${key32}*" }]`), `${p1}.aescbc.keys[0].secret: must be base64 of 16, 24 or 32 bytes`);
  rejects(config(`- identity: {}\n- aescbc:\n    keys: [{ name: key1 }]`), `${p1}.aescbc.keys[0].secret: required`);
  rejects(config(`- aesgcm:\n    keys: [{ secret: ${key32} }]`), 'resources[0].providers[0].aesgcm.keys[0].name: required');
  rejects(config(`- aesgcm:\n    keys: [{ name: "a:b", secret: ${key32} }]`), 'resources[0].providers[0].aesgcm.keys[0].name: "a:b" must not contain ":"');
  rejects(config(`- aesgcm:\n    keys: [{ name: k, secret: ${key32} }, { name: k, secret: ${key16} }]`), 'resources[0].providers[0].aesgcm.keys[1].name: "k" is listed twice in this provider');
  rejects(config('- aesgcm:\n    keys: []'), 'resources[0].providers[0].aesgcm.keys: must list at least one key');
  rejects(config('- aesgcm: {}'), 'resources[0].providers[0].aesgcm.keys: must list at least one key');
  rejects(config('- identity: {}\n- rot13: {}'), `${p1}.rot13: unknown provider (supported: aesgcm, aescbc, identity)`);
  rejects(config('- secretbox:\n    keys: []'), 'resources[0].providers[0].secretbox: provider not supported by certsmith (supported: aesgcm, aescbc, identity)');
  rejects(config(`- identity: {}\n  aescbc:\n    keys: [{ name: k, secret: ${key32} }]`), 'resources[0].providers[0]: names identity and aescbc; each item names exactly one provider');
  rejects(config('[]'.replace('[]', '')).replace('providers:\n', 'providers: []\n'), 'resources[0].providers: must list at least one provider');
  rejects(config('- identity: {}', '[configmaps]'), 'resources[0].resources[0]: "configmaps" is not a resource certsmith stores (one of: certificates.cert-manager.io, certificaterequests.cert-manager.io, issuers.cert-manager.io, clusterissuers.cert-manager.io, orders.acme.cert-manager.io, challenges.acme.cert-manager.io, secrets, events, namespaces, leases.coordination.k8s.io, pods, services, ingresses.networking.k8s.io, gateways.gateway.networking.k8s.io, httproutes.gateway.networking.k8s.io, validatingwebhookconfigurations.admissionregistration.k8s.io, mutatingwebhookconfigurations.admissionregistration.k8s.io, apiservices.apiregistration.k8s.io, customresourcedefinitions.apiextensions.k8s.io)');
  rejects(config('- identity: {}', '["*.*"]'), 'resources[0].resources[0]: "*.*": wildcards are not supported; name each resource, e.g. secrets');
  rejects(config('- identity: {}', '[secrets, secrets]'), 'resources[0].resources[1]: "secrets" is already configured at resources[0].resources[0]');
  rejects(config('- identity: {}').replace('apiserver.config.k8s.io/v1', 'v1'), 'apiVersion: must be apiserver.config.k8s.io/v1, not "v1"');
  rejects(config('- identity: {}').replace('kind: EncryptionConfiguration', 'kind: Secret'), 'kind: must be EncryptionConfiguration, not "Secret"');
  rejects('apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: []\n', 'resources: must list at least one entry');
  // a YAML error is told by position only: the broken line might be the one holding a key
  assert.throws(() => parseEncryptionConfiguration(`apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - providers: [{aesgcm: {keys: [{name: k, secret: "${key32}}]}}]\n`),
    (e: Error) => /^not valid YAML at line \d+, column \d+$/.test(e.message));
});

test('value transformer: upstream byte layouts, readable by a plain AES implementation', () => {
  const raw = randomBytes(32);
  const c = parseEncryptionConfiguration(config(`- aesgcm:\n    keys: [{ name: key1, secret: ${raw.toString('base64')} }]`));
  const key = { grp: '', plural: 'secrets', ns: 'default', name: 'web-tls' };
  const stored = new ValueTransformer(c).toStorage(key, '{"a":1}');
  assert.ok(Buffer.isBuffer(stored));
  const prefix = 'k8s:enc:aesgcm:v1:key1:';
  assert.equal(stored.subarray(0, prefix.length).toString(), prefix);
  const payload = stored.subarray(prefix.length);
  // nonce(12) | ciphertext | tag(16), the etcd key as additional data
  const d = createDecipheriv('aes-256-gcm', raw, payload.subarray(0, 12));
  d.setAAD(Buffer.from('/registry/secrets/default/web-tls'));
  d.setAuthTag(payload.subarray(payload.length - 16));
  assert.equal(Buffer.concat([d.update(payload.subarray(12, payload.length - 16)), d.final()]).toString(), '{"a":1}');

  const cbcKey = randomBytes(16);
  const cbc = new ValueTransformer(parseEncryptionConfiguration(config(`- aescbc:\n    keys: [{ name: k2, secret: ${cbcKey.toString('base64')} }]`)));
  const s2 = cbc.toStorage(key, '{"a":1}') as Buffer;
  const cbcPrefix = 'k8s:enc:aescbc:v1:k2:';
  assert.equal(s2.subarray(0, cbcPrefix.length).toString(), cbcPrefix);
  // random 16-byte IV, then one PKCS#7-padded block for 7 bytes of JSON
  assert.equal(s2.length, cbcPrefix.length + 16 + 16);
  const dc = createDecipheriv('aes-128-cbc', cbcKey, s2.subarray(cbcPrefix.length, cbcPrefix.length + 16));
  assert.equal(Buffer.concat([dc.update(s2.subarray(cbcPrefix.length + 16)), dc.final()]).toString(), '{"a":1}');
  assert.deepEqual(cbc.fromStorage(key, s2), { json: '{"a":1}', stale: false });
  // two writes of the same value differ (fresh IV each time)
  assert.notDeepEqual(cbc.toStorage(key, '{"a":1}'), s2);
});

test('value transformer: an aesgcm value moved to another object does not decrypt', () => {
  const t = new ValueTransformer(parseEncryptionConfiguration(config(`- aesgcm:\n    keys: [{ name: key1, secret: ${key32} }]`)));
  const a = { grp: '', plural: 'secrets', ns: 'default', name: 'a' };
  const stored = t.toStorage(a, '{"a":1}');
  assert.throws(() => t.fromStorage({ ...a, name: 'b' }, stored), /secrets default\/b could not be decrypted with aesgcm key "key1"/);
});

test('value transformer: resources the config does not name stay plain JSON', () => {
  const t = new ValueTransformer(parseEncryptionConfiguration(config(`- aesgcm:\n    keys: [{ name: key1, secret: ${key32} }]`)));
  const cert = { grp: 'cert-manager.io', plural: 'certificates', ns: 'default', name: 'web' };
  assert.equal(t.toStorage(cert, '{"a":1}'), '{"a":1}');
  assert.deepEqual(t.fromStorage(cert, '{"a":1}'), { json: '{"a":1}', stale: false });
  // without any configuration, an encrypted value fails with the key it needs
  const secret = { grp: '', plural: 'secrets', ns: 'default', name: 'a' };
  assert.throws(() => new ValueTransformer().fromStorage(secret, t.toStorage(secret, '{}')),
    /secrets default\/a is encrypted with aesgcm key "key1", which the encryption configuration does not have/);
});
