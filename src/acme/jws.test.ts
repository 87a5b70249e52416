import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { externalAccountBinding, generateAccountKey, jwkThumbprint, publicJwk, signJws } from './jws.ts';

const fromB64u = (s: string) => Buffer.from(s, 'base64url');

test('RFC 7638 §3.1 thumbprint example', () => {
  const jwk = {
    kty: 'RSA',
    e: 'AQAB',
    n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
  };
  assert.equal(jwkThumbprint(jwk), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  assert.equal(jwkThumbprint(crypto.createPublicKey({ key: jwk, format: 'jwk' })), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
});

test('ES256 JWS with jwk: raw r||s signature that verifies, header carries nonce and url', () => {
  const pem = generateAccountKey();
  const jws = signJws(pem, { url: 'https://ca.test/new-acct', nonce: 'n1' }, { termsOfServiceAgreed: true });
  const header = JSON.parse(fromB64u(jws.protected).toString());
  assert.deepEqual(Object.keys(header).sort(), ['alg', 'jwk', 'nonce', 'url']);
  assert.equal(header.alg, 'ES256');
  assert.deepEqual(header.jwk, publicJwk(pem));
  const sig = fromB64u(jws.signature);
  assert.equal(sig.length, 64);
  const ok = crypto.verify('sha256', Buffer.from(`${jws.protected}.${jws.payload}`), { key: crypto.createPublicKey(pem), dsaEncoding: 'ieee-p1363' }, sig);
  assert.ok(ok);
  assert.deepEqual(JSON.parse(fromB64u(jws.payload).toString()), { termsOfServiceAgreed: true });
});

test('RS256 with kid, and POST-as-GET has an empty payload', () => {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jws = signJws(privateKey, { url: 'https://ca.test/order/1', nonce: 'n2', kid: 'https://ca.test/acct/7' }, undefined);
  const header = JSON.parse(fromB64u(jws.protected).toString());
  assert.equal(header.alg, 'RS256');
  assert.equal(header.kid, 'https://ca.test/acct/7');
  assert.equal(header.jwk, undefined);
  assert.equal(jws.payload, '');
  assert.ok(crypto.verify('sha256', Buffer.from(`${jws.protected}.`), crypto.createPublicKey(privateKey), fromB64u(jws.signature)));
});

test('EAB is an HS256 JWS over the account JWK, keyed by the decoded MAC key (base64url or base64)', () => {
  const account = generateAccountKey();
  const mac = crypto.randomBytes(32);
  for (const encoded of [mac.toString('base64url'), mac.toString('base64')]) {
    const eab = externalAccountBinding(account, { keyId: 'kid-9', hmacKeyBase64: encoded }, 'https://ca.test/new-acct');
    assert.deepEqual(JSON.parse(fromB64u(eab.protected).toString()), { alg: 'HS256', kid: 'kid-9', url: 'https://ca.test/new-acct' });
    assert.deepEqual(JSON.parse(fromB64u(eab.payload).toString()), publicJwk(account));
    const expected = crypto.createHmac('sha256', mac).update(`${eab.protected}.${eab.payload}`).digest('base64url');
    assert.equal(eab.signature, expected);
  }
});
