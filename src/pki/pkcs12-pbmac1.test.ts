// PKCS#12 Modern2026 (issue 15: it was accepted and written as 3DES/SHA-1): PBES2 with
// AES-256-CBC and PBKDF2-HMAC-SHA256 for key and certificates, and a PBMAC1 MAC (RFC 9579).
// OpenSSL 3.0 on this machine cannot verify PBMAC1, so the MAC computation is checked against
// RFC 9579 appendix A's valid files (password "1234"), and openssl checks the rest (-nomacver).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { createPKCS12, createTruststorePKCS12, pbmac1, type PBMAC1Params } from './pkcs12.ts';
import { TAG, contents, decodeOID, decodeSmallInteger, readSingle, type DERElement } from './der.ts';
import { caKeyPair, cert, key } from '../controllers/testing/fixtures.ts';

const PRF: Record<string, PBMAC1Params['prf']> = { '1.2.840.113549.2.9': 'sha256', '1.2.840.113549.2.11': 'sha512' };

/** The authSafe content, PBMAC1 parameters and MAC of a PFX, read with certsmith's DER reader; throws if the MAC is not PBMAC1. */
function readPBMAC1(pfx: Buffer): { authSafe: Buffer; params: PBMAC1Params; mac: Buffer; macSalt: Buffer; macIterations: number } {
  const top = contents(readSingle(pfx, TAG.SEQUENCE, 'PFX'), 'PFX');
  assert.equal(decodeSmallInteger(top.expect(TAG.INTEGER, 'version')), 3);
  const ci = contents(top.expect(TAG.SEQUENCE, 'authSafe'), 'ContentInfo');
  assert.equal(decodeOID(ci.expect(TAG.OID, 'contentType')), '1.2.840.113549.1.7.1');
  const authSafe = contents(ci.expect(0xa0, 'content'), 'content').expect(TAG.OCTET_STRING, 'data').value;
  const macData = contents(top.expect(TAG.SEQUENCE, 'macData'), 'MacData');
  const digestInfo = contents(macData.expect(TAG.SEQUENCE, 'mac'), 'DigestInfo');
  const alg = contents(digestInfo.expect(TAG.SEQUENCE, 'digestAlgorithm'), 'AlgorithmIdentifier');
  assert.equal(decodeOID(alg.expect(TAG.OID, 'algorithm')), '1.2.840.113549.1.5.14', 'PBMAC1');
  const p = contents(alg.expect(TAG.SEQUENCE, 'PBMAC1-params'), 'PBMAC1-params');
  const kdf = contents(p.expect(TAG.SEQUENCE, 'keyDerivationFunc'), 'keyDerivationFunc');
  assert.equal(decodeOID(kdf.expect(TAG.OID, 'kdf')), '1.2.840.113549.1.5.12', 'PBKDF2');
  const k = contents(kdf.expect(TAG.SEQUENCE, 'PBKDF2-params'), 'PBKDF2-params');
  const salt = k.expect(TAG.OCTET_STRING, 'salt').value;
  const iterations = decodeSmallInteger(k.expect(TAG.INTEGER, 'iterationCount'));
  const keyLength = decodeSmallInteger(k.expect(TAG.INTEGER, 'keyLength'));
  const algOf = (el: DERElement) => PRF[decodeOID(contents(el, 'alg').expect(TAG.OID, 'oid'))];
  const prf = algOf(k.expect(TAG.SEQUENCE, 'prf'));
  const hmac = algOf(p.expect(TAG.SEQUENCE, 'messageAuthScheme'));
  const mac = digestInfo.expect(TAG.OCTET_STRING, 'digest').value;
  const macSalt = macData.expect(TAG.OCTET_STRING, 'macSalt').value;
  const macIterations = decodeSmallInteger(macData.expect(TAG.INTEGER, 'iterations'));
  return { authSafe, params: { salt, iterations, keyLength, prf, hmac }, mac, macSalt, macIterations };
}

const vector = (name: string) => Buffer.from(fs.readFileSync(new URL(`./testdata/${name}`, import.meta.url), 'utf8'), 'base64');

for (const [name, prf, hmac] of [['rfc9579-a1.b64', 'sha256', 'sha256'], ['rfc9579-a3.b64', 'sha512', 'sha512']] as const) {
  test(`PBMAC1 MAC matches RFC 9579 ${name} (PRF ${prf}, HMAC ${hmac})`, () => {
    const v = readPBMAC1(vector(name));
    assert.equal(v.params.prf, prf);
    assert.equal(v.params.hmac, hmac);
    assert.deepEqual(pbmac1(v.authSafe, '1234', v.params), v.mac, 'the RFC file verifies with password 1234');
    assert.notDeepEqual(pbmac1(v.authSafe, '12345', v.params), v.mac, 'a wrong password does not');
    // appendix A.4's fault: an iteration count other than the one the MAC was made with
    assert.notDeepEqual(pbmac1(v.authSafe, '1234', { ...v.params, iterations: v.params.iterations + 1 }), v.mac);
  });
}

test('Modern2026 keystore: PBMAC1 HMAC-SHA256 that verifies, PBES2 AES-256-CBC contents openssl decrypts', async () => {
  const ca = await caKeyPair('ca');
  const leafKey = await key('leaf');
  const leaf = await cert({ keyPem: leafKey, issuer: ca });
  const password = 'pässword';
  const p12 = await createPKCS12({ keyPem: leafKey, chainPem: leaf, caPem: ca.certPem, password, profile: 'Modern2026' });
  const v = readPBMAC1(p12);
  assert.deepEqual({ prf: v.params.prf, hmac: v.params.hmac, keyLength: v.params.keyLength }, { prf: 'sha256', hmac: 'sha256', keyLength: 32 });
  assert.ok(v.params.iterations >= 2048 && v.params.salt.length >= 16);
  assert.deepEqual(pbmac1(v.authSafe, password, v.params), v.mac, 'our MAC verifies with the function checked against RFC 9579');
  assert.deepEqual([v.macSalt.toString(), v.macIterations], ['NOT USED', 1], 'RFC 9579 section 3: unused MacData fields');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'p12-2026-'));
  try {
    const file = path.join(dir, 'keystore.p12');
    fs.writeFileSync(file, p12);
    const args = ['pkcs12', '-in', file, '-passin', `pass:${password}`, '-nomacver'];
    // -info writes the algorithms to stderr
    const info = spawnSync('openssl', [...args, '-info', '-noout'], { encoding: 'utf8' });
    assert.equal(info.status, 0, info.stderr);
    const text = info.stdout + info.stderr;
    assert.match(text, /PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/);
    assert.match(text, /Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/);
    const keyOut = execFileSync('openssl', [...args, '-nocerts', '-nodes'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const pub = (pem: string) => execFileSync('openssl', ['pkey', '-pubout'], { input: pem });
    assert.deepEqual(pub(keyOut), pub(leafKey), 'the key inside is the leaf key');
    const certs = execFileSync('openssl', [...args, '-nokeys'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.equal(certs.match(/BEGIN CERTIFICATE/g)?.length, 2, 'leaf and CA');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('Modern2026 truststore carries a PBMAC1 MAC too', async () => {
  const ca = await caKeyPair('ca');
  const v = readPBMAC1(await createTruststorePKCS12({ caPem: ca.certPem, password: 'x', profile: 'Modern2026' }));
  assert.deepEqual(pbmac1(v.authSafe, 'x', v.params), v.mac);
});
