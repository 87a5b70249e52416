import { test } from 'node:test';
import assert from 'node:assert/strict';
import { templateOf } from './certificate-template.ts';
import { createCSR, parseCSR } from '../pki/csr.ts';
import { generatePrivateKey } from '../pki/keys.ts';
import { csrMismatches } from '../pki/match.ts';
import type { CertificateSpec } from '../api/types.ts';

// Upstream reads an otherName's OID with ParseObjectIdentifier (strconv.Atoi per arc): "03" is
// 3. The request carries the canonical OID, and a comparison with the spec must agree with it,
// or every reconcile would see a mismatch and re-issue.
test('an otherName OID written with a leading-zero arc is requested canonically and matches its spec', async () => {
  const spec = { secretName: 's', issuerRef: { name: 'ca' }, otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.03', utf8Value: 'u@example.com' }] } as CertificateSpec;
  const template = templateOf(spec);
  assert.deepEqual(template.otherNames, [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'u@example.com' }]);
  const csr = parseCSR(await createCSR(template, await generatePrivateKey({ algorithm: 'ECDSA', size: 256 })));
  assert.deepEqual(csr.template.otherNames, [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'u@example.com' }]);
  assert.deepEqual(csrMismatches(csr, templateOf(spec)), []);
});
