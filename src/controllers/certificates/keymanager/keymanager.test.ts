import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey } from '../../../pki/keys.ts';
import type { Certificate as CertificateObj } from '../../../api/types.ts';
import type { Secret } from '../../../api/meta.ts';
import { decideKeyManager, gateKeyReplacements } from './keymanager.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const issuing = [{ type: 'Issuing', status: 'True' as const, reason: 'DoesNotExist', message: '' }];

function crt(status: CertificateObj['status'], privateKey: CertificateObj['spec']['privateKey'] = { algorithm: 'ECDSA' }): CertificateObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default', uid: 'u' },
    spec: { secretName: 'a-tls', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' }, privateKey }, status,
  };
}
function secret(name: string, keyPem: string): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, data: { 'tls.key': b64(keyPem) } };
}

test('key manager decisions', async () => {
  const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const rsa = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });

  assert.deepEqual(decideKeyManager({ certificate: crt({ conditions: issuing }), nextKeySecrets: [] }).actions, [{ kind: 'create' }]);
  // adopt the one that exists, then keep it
  assert.deepEqual(decideKeyManager({ certificate: crt({ conditions: issuing }), nextKeySecrets: [secret('a-x', ec)] }).actions, [{ kind: 'setStatusName', name: 'a-x' }]);
  assert.deepEqual(decideKeyManager({ certificate: crt({ conditions: issuing, nextPrivateKeySecretName: 'a-x' }), nextKeySecrets: [secret('a-x', ec)] }).actions, []);
  // a key that no longer fits the spec is deleted, with an event saying why
  const stale = decideKeyManager({ certificate: crt({ conditions: issuing, nextPrivateKeySecretName: 'a-x' }, { algorithm: 'RSA', size: 2048 }), nextKeySecrets: [secret('a-x', ec)] });
  assert.deepEqual(stale.actions, [{ kind: 'delete', name: 'a-x', mismatch: true }]);
  assert.equal(stale.events[0].reason, 'Deleted');
  // duplicates: all but the recorded one go
  assert.deepEqual(decideKeyManager({ certificate: crt({ conditions: issuing, nextPrivateKeySecretName: 'a-x' }), nextKeySecrets: [secret('a-x', ec), secret('a-y', ec)] }).actions, [{ kind: 'delete', name: 'a-y' }]);
  // not issuing: clean up and forget the name
  assert.deepEqual(decideKeyManager({ certificate: crt({ nextPrivateKeySecretName: 'a-x' }), nextKeySecrets: [secret('a-x', ec)] }).actions,
    [{ kind: 'delete', name: 'a-x' }, { kind: 'setStatusName', name: undefined }]);
  // rotationPolicy Never reuses a fitting key, refuses a misfit with an event asking for help
  const never = { algorithm: 'ECDSA' as const, rotationPolicy: 'Never' as const };
  assert.deepEqual(decideKeyManager({ certificate: crt({ conditions: issuing }, never), nextKeySecrets: [], secret: secret('a-tls', ec) }).actions, [{ kind: 'create', reuseKeyFrom: 'a-tls' }]);
  const misfit = decideKeyManager({ certificate: crt({ conditions: issuing }, never), nextKeySecrets: [], secret: secret('a-tls', rsa) });
  assert.deepEqual(misfit.actions, []);
  assert.equal(misfit.events[0].reason, 'CannotRegenerateKey');
  // being deleted: nothing
  const deleting = crt({ conditions: issuing });
  deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  assert.deepEqual(decideKeyManager({ certificate: deleting, nextKeySecrets: [] }).actions, []);
});

test('key manager: replacing a next key that does not fit the spec backs off (issue 12, finding 2)', async () => {
  const ec = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const now = new Date('2026-05-01T12:00:00Z');
  const misfit = decideKeyManager({ certificate: crt({ conditions: issuing, nextPrivateKeySecretName: 'a-x' }, { algorithm: 'RSA', size: 2048 }), nextKeySecrets: [secret('a-x', ec)] });
  const first = gateKeyReplacements(misfit, undefined, now);
  assert.deepEqual(first.actions, misfit.actions, 'the first replacement is immediate');
  assert.deepEqual(first.history, { count: 1, lastAt: now.getTime() });
  const held = gateKeyReplacements(misfit, first.history, new Date(now.getTime() + 1000));
  assert.deepEqual([held.actions, held.events, held.requeueAfterMs], [[], [], 4000], 'the second waits 5s, its event too');
  const create = decideKeyManager({ certificate: crt({ conditions: issuing }), nextKeySecrets: [] });
  assert.deepEqual(gateKeyReplacements(create, first.history, now).history, first.history, 'making the new key keeps the sequence');
  const fits = decideKeyManager({ certificate: crt({ conditions: issuing, nextPrivateKeySecretName: 'a-x' }), nextKeySecrets: [secret('a-x', ec)] });
  assert.equal(gateKeyReplacements(fits, first.history, now).history, undefined, 'a key that fits ends it');
});
