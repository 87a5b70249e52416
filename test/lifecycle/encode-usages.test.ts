// A Certificate with spec.encodeUsagesInRequest: false and usages other than the defaults. As
// cert-manager's pki.GenerateCSR, the request manager puts no KeyUsage or ExtendedKeyUsage in the
// CSR; the request's spec.usages carries them, the issuer signs them, and the request matches its
// Certificate as upstream's RequestMatchesSpec decides (spec.usages of the request against the
// Certificate's, not the CSR's): the Certificate becomes Ready once and is not issued again.
// Before, the CSR carried the default key usages, the match compared them with spec.usages and
// the request was never taken as the Certificate's.
//
// A request stored by that code (CSR with the default key usages, spec.usages the Certificate's)
// matches as well: an upgrade re-issues nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition, type Lifecycle } from './harness.ts';
import { CertificateRequest } from '../../src/api/resources.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../src/api/types.ts';
import { createCSR, parseCSR } from '../../src/pki/csr.ts';
import { parseCertificate } from '../../src/pki/parse.ts';
import { startControllers } from '../../src/controllers/manager.ts';
import { silentLogger } from '../../src/runtime/logger.ts';

const HOUR = 3_600_000;
const USAGES = ['digital signature', 'key encipherment', 'client auth'];
const KU_OID = '2.5.29.15';
const EKU_OID = '2.5.29.37';

const spec = { dnsNames: ['client.example.test'], encodeUsagesInRequest: false, usages: USAGES, privateKey: { algorithm: 'ECDSA', size: 256 } };

const csrOf = (cr: CertificateRequestObj) => parseCSR(Buffer.from(cr.spec.request, 'base64').toString());

async function requestsOf(lc: Lifecycle, name: string) {
  return (await lc.requests()).filter((r) => r.metadata.name?.startsWith(`${name}-`));
}

async function assertIssuedOnce(lc: Lifecycle, name: string) {
  const crt = await lc.certificate(name);
  assert.equal(condition(crt, 'Ready')?.status, 'True', `Ready: ${JSON.stringify(crt.status)}`);
  assert.equal(crt.status?.revision, 1);
  assert.equal(condition(crt, 'Issuing'), undefined, `Issuing: ${JSON.stringify(crt.status)}`);
  const requests = await requestsOf(lc, name);
  assert.deepEqual(requests.map((r) => r.metadata.name), [`${name}-1`]);
  const secret = await lc.secret(crt.spec.secretName);
  const leaf = parseCertificate(Buffer.from(secret!.data!['tls.crt'], 'base64').toString());
  assert.deepEqual([...(leaf.template.usages ?? [])].sort(), [...USAGES].sort(), 'the certificate has the spec.usages, client auth among them');
  return { crt, request: requests[0], leaf };
}

test('encodeUsagesInRequest: false with client auth: Ready at revision 1, the certificate has client auth, never re-issued', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('client', spec));
    await lc.settle();
    const { request, leaf } = await assertIssuedOnce(lc, 'client');
    assert.ok(leaf.template.usages?.includes('client auth'), 'client auth EKU in the certificate');
    // the CSR carries no usages, as upstream's GenerateCSR; the request's spec does
    const csr = csrOf(request);
    assert.equal(csr.hasUsages, false);
    assert.deepEqual(csr.extensions.filter((e) => e.id === KU_OID || e.id === EKU_OID), []);
    assert.deepEqual(request.spec.usages, USAGES);
    // the controllers settle and the clock moves on: still the one request, revision 1
    await lc.advance(HOUR);
    await lc.advance(24 * HOUR);
    const after = await assertIssuedOnce(lc, 'client');
    assert.equal(after.request.metadata.uid, request.metadata.uid);
    assert.deepEqual(lc.mismatchedSecretVersions, []);
  } finally {
    await lc.stop();
  }
});

test('encodeUsagesInRequest: false: a request stored by the previous code (default key usages in the CSR) is kept after the upgrade', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('client', spec));
    await lc.settle();
    const { request } = await assertIssuedOnce(lc, 'client');
    // what the previous request manager stored: the same key, a CSR with the default key usages
    // (digital signature, key encipherment) and no EKU, and the Certificate's usages on the spec
    const secret = await lc.secret('client-tls');
    const keyPem = Buffer.from(secret!.data!['tls.key'], 'base64').toString();
    const oldCSR = await createCSR({ dnsNames: spec.dnsNames }, keyPem);
    assert.equal(parseCSR(oldCSR).hasUsages, true);
    assert.deepEqual(parseCSR(oldCSR).template.usages, ['digital signature', 'key encipherment']);
    // written past admission (the spec cannot change through it), as the object an upgrade finds
    await lc.backend.update(CertificateRequest, { ...request, spec: { ...request.spec, request: Buffer.from(oldCSR).toString('base64') } });
    await lc.settle();
    await lc.advance(HOUR);
    await lc.advance(24 * HOUR);
    const after = await assertIssuedOnce(lc, 'client');
    assert.equal(after.request.metadata.uid, request.metadata.uid, 'the stored request is kept');
    assert.equal(csrOf(after.request).hasUsages, true, 'and still holds the previous CSR');
    // a restart reads it again from the store: nothing changes either
    await lc.running.stop();
    lc.running = await startControllers({ store: lc.store, clock: lc.clock, logger: silentLogger, options: { metricsListen: '', healthListen: '' } });
    await lc.settle();
    await assertIssuedOnce(lc, 'client');
  } finally {
    await lc.stop();
  }
});
