import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { publicKeyFromSPKI, spkiDER } from './spki.ts';

// spkiDER builds SubjectPublicKeyInfo itself (from the JWK, through der.ts); it must be byte for
// byte what OpenSSL exports, or key matching and CSR checks would disagree with other tools.
const keys: [string, crypto.KeyObject][] = [
  ['EC P-256', crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey],
  ['EC P-384', crypto.generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey],
  ['EC P-521', crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey],
  ['RSA 2048', crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
  ['RSA 1024, e=3', crypto.generateKeyPairSync('rsa', { modulusLength: 1024, publicExponent: 3 }).privateKey],
  ['Ed25519', crypto.generateKeyPairSync('ed25519').privateKey],
];

for (const [name, key] of keys) {
  test(`spkiDER of ${name} equals OpenSSL's SPKI export`, () => {
    const expected = crypto.createPublicKey(key).export({ type: 'spki', format: 'der' });
    assert.deepEqual(spkiDER(key), expected);
    assert.ok(publicKeyFromSPKI(expected).equals(crypto.createPublicKey(key)));
  });
}
