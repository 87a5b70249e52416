import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCSR, parseCSR, readCSR } from './csr.ts';
import { generatePrivateKey, parsePrivateKey } from './keys.ts';
import { spkiDER } from './spki.ts';

/** a CSR whose subject was changed after signing: its signature no longer verifies */
async function tamperedCSR(): Promise<string> {
  const csrPem = await createCSR({ commonName: 'abcdefgh' }, await generatePrivateKey({ algorithm: 'ECDSA' }));
  const der = Buffer.from(csrPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  der[der.indexOf(Buffer.from('abcdefgh'))] = 'x'.charCodeAt(0);
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
}

test('readCSR gives a CSR\'s contents without checking its signature; parseCSR still refuses it afterwards', async () => {
  const tampered = await tamperedCSR();
  assert.equal(readCSR(tampered).template.commonName, 'xbcdefgh');
  assert.throws(() => parseCSR(tampered), /signature does not verify/);
  assert.throws(() => readCSR('hello'), /invalid certificate request: no CERTIFICATE REQUEST/);
});

test('readCSR reuses a checked parse, and a parse carries the key\'s type and SPKI as certsmith encodes them', async () => {
  for (const spec of [{ algorithm: 'ECDSA', size: 384 }, { algorithm: 'RSA', size: 2048 }, { algorithm: 'Ed25519' }] as const) {
    const keyPem = await generatePrivateKey(spec);
    const csrPem = await createCSR({ commonName: 'x' }, keyPem);
    const checked = parseCSR(csrPem);
    assert.equal(readCSR(csrPem), checked);
    assert.deepEqual(checked.keyType, { algorithm: spec.algorithm, size: spec.algorithm === 'Ed25519' ? 0 : spec.size });
    assert.deepEqual(checked.spki, spkiDER(parsePrivateKey(keyPem)));
  }
});
