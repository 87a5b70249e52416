import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  describeKey, encodePrivateKey, generatePrivateKey, keyMatchesSpec, parsePrivateKey, publicKeyFingerprint, validateKeySpec,
  type KeySpec,
} from './keys.ts';

test('validateKeySpec applies cert-manager webhook rules', () => {
  assert.equal(validateKeySpec({ algorithm: 'RSA' }), undefined);
  assert.equal(validateKeySpec({ algorithm: 'RSA', size: 3072 }), undefined);
  assert.match(validateKeySpec({ algorithm: 'RSA', size: 1024 }) ?? '', /between 2048 and 8192/);
  assert.match(validateKeySpec({ algorithm: 'RSA', size: 8193 }) ?? '', /between 2048 and 8192/);
  assert.equal(validateKeySpec({ algorithm: 'ECDSA', size: 521 }), undefined);
  assert.match(validateKeySpec({ algorithm: 'ECDSA', size: 512 }) ?? '', /256, 384 or 521/);
  assert.equal(validateKeySpec({ algorithm: 'Ed25519' }), undefined);
  assert.match(validateKeySpec({ algorithm: 'DSA' as never }) ?? '', /rsa, ecdsa or ed25519/);
  assert.match(validateKeySpec({ algorithm: 'RSA', encoding: 'PEM' as never }) ?? '', /PKCS1 or PKCS8/);
});

const cases: { spec: KeySpec; pkcs1Header: string; want: { algorithm: string; size: number } }[] = [
  { spec: { algorithm: 'RSA' }, pkcs1Header: 'RSA PRIVATE KEY', want: { algorithm: 'RSA', size: 2048 } },
  { spec: { algorithm: 'RSA', size: 4096 }, pkcs1Header: 'RSA PRIVATE KEY', want: { algorithm: 'RSA', size: 4096 } },
  { spec: { algorithm: 'ECDSA' }, pkcs1Header: 'EC PRIVATE KEY', want: { algorithm: 'ECDSA', size: 256 } },
  { spec: { algorithm: 'ECDSA', size: 384 }, pkcs1Header: 'EC PRIVATE KEY', want: { algorithm: 'ECDSA', size: 384 } },
  { spec: { algorithm: 'ECDSA', size: 521 }, pkcs1Header: 'EC PRIVATE KEY', want: { algorithm: 'ECDSA', size: 521 } },
  { spec: { algorithm: 'Ed25519' }, pkcs1Header: 'PRIVATE KEY', want: { algorithm: 'Ed25519', size: 0 } },
];

for (const c of cases) {
  test(`generate ${c.spec.algorithm} ${c.spec.size ?? 'default'}: encodings, description, fingerprint`, async () => {
    const pem = await generatePrivateKey(c.spec);
    assert.ok(pem.startsWith(`-----BEGIN ${c.pkcs1Header}-----`), 'default encoding is PKCS1 (traditional)');
    const key = parsePrivateKey(pem);
    assert.deepEqual(describeKey(key), c.want);
    assert.ok(keyMatchesSpec(key, c.spec));
    const pkcs8 = encodePrivateKey(key, 'PKCS8');
    assert.ok(pkcs8.startsWith('-----BEGIN PRIVATE KEY-----'));
    assert.ok((await generatePrivateKey({ ...c.spec, encoding: 'PKCS8' })).startsWith('-----BEGIN PRIVATE KEY-----'));
    assert.equal(encodePrivateKey(pkcs8, 'PKCS1'), pem, 'PKCS8 -> PKCS1 round trip is exact');

    // The fingerprint is sha256(SPKI DER), as openssl computes it from the private key.
    const spki = execFileSync('openssl', ['pkey', '-pubout', '-outform', 'DER'], { input: pem });
    const fp = crypto.createHash('sha256').update(spki).digest('hex');
    assert.equal(publicKeyFingerprint(key), fp);
    assert.equal(publicKeyFingerprint(pem), fp);
    assert.equal(publicKeyFingerprint(crypto.createPublicKey(key)), fp);
  });
}

test('keyMatchesSpec detects algorithm and size changes, with cert-manager defaults', async () => {
  const ec = parsePrivateKey(await generatePrivateKey({ algorithm: 'ECDSA' }));
  assert.ok(keyMatchesSpec(ec, { algorithm: 'ECDSA', size: 256 }));
  assert.ok(!keyMatchesSpec(ec, { algorithm: 'ECDSA', size: 384 }));
  assert.ok(!keyMatchesSpec(ec, { algorithm: 'RSA' }));
  assert.ok(keyMatchesSpec(ec, { algorithm: 'ECDSA', encoding: 'PKCS8' }), 'encoding does not matter');
});

test('parsePrivateKey rejects garbage without echoing the input', () => {
  const secretish = '-----BEGIN PRIVATE KEY-----\nTUlHSElNWVNFQ1JFVA==\n-----END PRIVATE KEY-----\n';
  assert.throws(() => parsePrivateKey(secretish), (err: Error) => {
    assert.match(err.message, /^invalid private key: /);
    assert.ok(!err.message.includes('TUlHSElNWVNFQ1JFVA'));
    return true;
  });
  assert.throws(() => parsePrivateKey('not a key'), /invalid private key: no PEM private key block/);
  // a fixed key: generating DSA parameters takes a random time, 0.7-2.4 s here, and a CI run of
  // this file timed out at 300 s behind it (the call blocks the event loop, so no later result was reported)
  const dsa = [
    '-----BEGIN PRIVATE KEY-----',
    'MIIBSgIBADCCASsGByqGSM44BAEwggEeAoGBAMYy7nha4IBlKkCUKooI7X7QNHpz',
    'ItSB4QoEZqfqBNstb1kOPwHrFhfh3/2L5Bgwyrs3WN7oPzkzTPPoIBhiTj2g5lhW',
    'GTZGmrDnyVeylcGctPhZTR1BL+OQHXLvp0/gfdNxUw4eipqW6BM95DFrVojNhEWh',
    '2q62Ae2DdmhR+U6bAhUAi43XHhWfjGWF9TzRQAiZ3qCLFWUCgYAffkRN1/tlaJyX',
    'nIrlLIAdfLqox2o2F5I+ZCkAmxQtqbpANZJ88M63Tl+OYqKMudGm2fpZHO4cmSjy',
    'Ul0dFGSQJWQXoO8sDEiisXqpE/6EebEUlf90EBz198M0qPm+1rfw2vjt3VvLBGOw',
    'Zm+hIEXQeNHRohPek6mIYR61fyzRJgQWAhRekBGb4c/8y7FMEKcGl4YGrGK/BQ==',
    '-----END PRIVATE KEY-----',
  ].join('\n') + '\n';
  assert.throws(() => parsePrivateKey(dsa), /invalid private key: unsupported key type dsa/);
});

// encodePrivateKey builds an EC key's SEC 1 and PKCS #8 PEM itself (from the JWK); it must be
// byte for byte what OpenSSL exports, and the SPKI it records what OpenSSL's SPKI export says.
test('EC keys encode as OpenSSL encodes them, SEC 1 and PKCS #8, on every curve', () => {
  for (const [namedCurve, openssl, bytes] of [['P-256', 'prime256v1', 32], ['P-384', 'secp384r1', 48], ['P-521', 'secp521r1', 66]] as const) {
    // 16 keys, and one whose scalar starts with a zero byte (JWK and SEC 1 pad d to the curve's size)
    const d = crypto.randomBytes(bytes);
    d[0] = 0;
    d[bytes - 1] |= 1;
    const ecdh = crypto.createECDH(openssl);
    ecdh.setPrivateKey(d);
    const point = ecdh.getPublicKey();
    const half = (point.length - 1) / 2;
    const leadingZero = crypto.createPrivateKey({
      format: 'jwk',
      key: { kty: 'EC', crv: namedCurve, d: d.toString('base64url'), x: point.subarray(1, 1 + half).toString('base64url'), y: point.subarray(1 + half).toString('base64url') },
    });
    for (let i = 0; i <= 16; i++) {
      const privateKey = i === 16 ? leadingZero : crypto.generateKeyPairSync('ec', { namedCurve }).privateKey;
      const pkcs8 = encodePrivateKey(privateKey, 'PKCS8');
      assert.equal(pkcs8, privateKey.export({ type: 'pkcs8', format: 'pem' }), `${namedCurve} PKCS #8`);
      assert.equal(encodePrivateKey(privateKey, 'PKCS1'), privateKey.export({ type: 'sec1', format: 'pem' }), `${namedCurve} SEC 1`);
      assert.equal(publicKeyFingerprint(privateKey), crypto.createHash('sha256').update(crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' })).digest('hex'));
      assert.ok(crypto.createPrivateKey(pkcs8).equals(privateKey));
    }
  }
});

test('EC keys on curves cert-manager does not support are still encoded by OpenSSL', () => {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'brainpoolP256r1' });
  assert.equal(encodePrivateKey(privateKey, 'PKCS8'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  assert.equal(encodePrivateKey(privateKey, 'PKCS1'), privateKey.export({ type: 'sec1', format: 'pem' }));
});
