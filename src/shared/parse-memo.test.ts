import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey } from '../pki/keys.ts';
import { createCSR } from '../pki/csr.ts';
import { signCertificate } from '../pki/sign.ts';
import { parseCertificate } from '../pki/parse.ts';
import { parseCertMemo, parseCSRMemo, parseKeyMemo } from './parse-memo.ts';

async function leaf(name: string) {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const csrPem = await createCSR({ dnsNames: [`${name}.example.test`] }, keyPem);
  const certPem = await signCertificate({ csrPem, notBefore: new Date('2026-01-01T00:00:00Z'), durationMs: 86_400_000, selfSignKeyPem: keyPem });
  return { keyPem, csrPem, certPem };
}

/** true when b is a view of a larger allocation (a pool slab or a bigger DER) that it keeps alive */
const sharesAllocation = (b: Buffer) => b.buffer.byteLength !== b.length;

test('a memoised certificate holds its DER in an allocation of its own, the subject a view of it', async () => {
  const { certPem } = await leaf('owned');
  // parsed directly, the DER is a small slice of Node's shared pool: what kept slabs alive
  assert.ok(sharesAllocation(parseCertificate(certPem).der));
  const info = parseCertMemo(certPem).value!;
  assert.equal(sharesAllocation(info.der), false);
  assert.equal(info.subjectDER.buffer, info.der.buffer);
  assert.deepEqual(info.subjectDER, parseCertificate(certPem).subjectDER);
  assert.deepEqual(info.der, parseCertificate(certPem).der);
});

test('a memoised CSR holds its subject and extension values in allocations of their own', async () => {
  const { csrPem } = await leaf('csr');
  const info = parseCSRMemo(csrPem).value!;
  assert.equal(sharesAllocation(info.subjectDER), false);
  assert.ok(info.extensions.length > 0);
  for (const e of info.extensions) assert.equal(sharesAllocation(e.value), false, e.id);
  assert.deepEqual(info.template.dnsNames, ['csr.example.test']);
});

test('the memos answer the same PEM from the cache, a chain by its leaf, and remember errors', async () => {
  const a = await leaf('a');
  const b = await leaf('b');
  assert.equal(parseCertMemo(a.certPem).value, parseCertMemo(a.certPem).value);
  assert.equal(parseCertMemo(`${a.certPem}${b.certPem}`).value, parseCertMemo(a.certPem).value, 'a bundle shares its leaf\'s entry');
  assert.notEqual(parseCertMemo(b.certPem).value, parseCertMemo(a.certPem).value);
  assert.equal(parseKeyMemo(a.keyPem).value, parseKeyMemo(a.keyPem).value);
  const bad = parseCertMemo('not a certificate');
  assert.match(bad.error!, /no CERTIFICATE PEM block/);
  assert.equal(parseCertMemo('not a certificate'), bad);
  // a key remembered without parsing is answered as such
  const other = parseKeyMemo(b.keyPem).value!;
  parseKeyMemo.remember('remembered key text', other);
  assert.equal(parseKeyMemo('remembered key text').value, other);
});
