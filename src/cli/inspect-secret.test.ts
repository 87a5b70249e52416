import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Secret } from '../api/meta.ts';
import { generatePrivateKey } from '../pki/keys.ts';
import { createCSR } from '../pki/csr.ts';
import { signCertificate } from '../pki/sign.ts';
import { inspectSecret } from './inspect-secret.ts';

const now = new Date('2030-01-01T00:00:00Z');
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function pki() {
  const rootKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const root = await signCertificate({ csrPem: await createCSR({ commonName: 'root', isCA: true }, rootKey), notBefore: now, durationMs: 864e6, isCA: true, selfSignKeyPem: rootKey });
  const interKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const inter = await signCertificate({ csrPem: await createCSR({ commonName: 'inter', isCA: true }, interKey), notBefore: now, durationMs: 864e6, isCA: true, issuer: { certPem: root, keyPem: rootKey } });
  const leafKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leaf = await signCertificate({ csrPem: await createCSR({ dnsNames: ['a.test'] }, leafKey), notBefore: now, durationMs: 3600e3, issuer: { certPem: inter, keyPem: interKey } });
  return { root, inter, leaf, leafKey, otherKey: interKey };
}

const secret = (data: Record<string, string>): Secret => ({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 's', namespace: 'ns' }, data });

test('a leaf + intermediate chain links, ca.crt verifies it, the key matches and is never printed', async () => {
  const p = await pki();
  const out = inspectSecret(secret({ 'tls.crt': b64(p.leaf + p.inter), 'tls.key': b64(p.leafKey), 'ca.crt': b64(p.root) }), new Date(now.getTime() + 60_000));
  assert.match(out, /\[0\] <empty> → CN=inter \(signed by \[1\]\)/);
  assert.match(out, /\[1\] CN=inter → CN=root \(issuer not in tls\.crt\)/);
  assert.match(out, /verifies the chain: yes \(by CN=root\)/);
  assert.match(out, /matches the certificate/);
  assert.match(out, /Status: valid for another 59m0s/);
  assert.doesNotMatch(out, /PRIVATE KEY/);
});

test('a wrong key, a foreign CA, a broken chain order and an expired leaf are each called out', async () => {
  const p = await pki();
  const other = await pki();
  const out = inspectSecret(secret({ 'tls.crt': b64(p.leaf + other.inter), 'tls.key': b64(p.otherKey), 'ca.crt': b64(other.root) }), new Date(now.getTime() + 7200e3));
  assert.match(out, /\[0\] <empty> → CN=inter \(NOT signed by \[1\]\)/);
  assert.match(out, /does NOT match the certificate/);
  assert.match(out, /Status: EXPIRED 1h0m0s ago/);
  const noCA = inspectSecret(secret({ 'tls.crt': b64(p.leaf), 'ca.crt': b64(other.root) }), now);
  assert.match(noCA, /verifies the chain: NO/);
  assert.match(noCA, /Private key \(tls\.key\): not present/);
});

test('a Secret without tls.crt is an error that says so', () => {
  assert.throws(() => inspectSecret(secret({ password: b64('x') }), now), /secret ns\/s has no tls\.crt/);
});
