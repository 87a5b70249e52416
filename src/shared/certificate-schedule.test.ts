// `certsmith status` and the dashboard say when a Certificate renews with the trigger's own rule,
// including the minimum interval counted from the request that issued the leaf (an ACME CA
// backdates notBefore: the issuance is the request's creation, not notBefore).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renewalDecisionFor } from './certificate-schedule.ts';
import { renewalFor } from './renewal/renewal-decision.ts';
import { issuanceTimeOf } from './renewal/min-interval.ts';
import { createCSR } from '../pki/csr.ts';
import { generatePrivateKey } from '../pki/keys.ts';
import { parseCertificate } from '../pki/parse.ts';
import { signCertificate } from '../pki/sign.ts';
import { certIdOf } from '../acme/ari.ts';
import type { Certificate, CertificateRequest } from '../api/types.ts';

test('renewalDecisionFor: the minimum interval counts from the current request when it issued the leaf, as the trigger does', async () => {
  const T = (iso: string) => new Date(iso);
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await signCertificate({ csrPem: await createCSR({ commonName: 'ari ca', isCA: true }, caKey), notBefore: T('2025-12-01T00:00:00Z'), durationMs: 365 * 86_400_000, selfSignKeyPem: caKey, isCA: true });
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  // notBefore an hour before the issuance, as Let's Encrypt backdates
  const leafPem = await signCertificate({ csrPem: await createCSR({ dnsNames: ['ari.example.test'] }, key), notBefore: T('2026-01-01T00:00:00Z'), durationMs: 90 * 86_400_000, issuer: { certPem: caPem, keyPem: caKey } });
  const leaf = parseCertificate(leafPem);
  const request = (revision: string, created: string, pem = leafPem) => ({
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: { name: `a-${revision}`, namespace: 'default', creationTimestamp: created, annotations: { 'cert-manager.io/certificate-revision': revision } },
    spec: { request: '', issuerRef: { name: 'le' } },
    status: { certificate: Buffer.from(pem).toString('base64') },
  } as unknown as CertificateRequest);
  // the CA asks, in a window already open, for the replacement (revision 3) to be replaced again
  const crt = {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default' },
    spec: { secretName: 'a', dnsNames: ['ari.example.test'], issuerRef: { name: 'le' } },
    status: { revision: 3, acme: { ari: { certID: certIdOf(leaf)!, suggestedWindow: { start: '2026-01-01T01:06:00Z', end: '2026-01-01T01:06:01Z' }, lastChecked: '2026-01-01T01:05:00Z' } } },
  } as Certificate;
  const words = (d: ReturnType<typeof renewalDecisionFor>) => (d.kind === 'scheduled' ? d.renewalTime.toISOString() : d.kind);
  const rows: { why: string; requests: CertificateRequest[]; renewalTime: string }[] = [
    { why: 'issued by the current request created at 01:03: held to 01:08', requests: [request('3', '2026-01-01T01:03:00Z'), request('2', '2025-12-01T00:00:00Z')], renewalTime: '2026-01-01T01:08:00.000Z' },
    { why: 'no request known: from notBefore, not held', requests: [], renewalTime: '2026-01-01T01:06:00.000Z' },
    { why: 'the current request issued another certificate (a Secret put back by hand): from notBefore', requests: [request('3', '2026-01-01T01:03:00Z', caPem)], renewalTime: '2026-01-01T01:06:00.000Z' },
  ];
  for (const r of rows) {
    const d = renewalDecisionFor(crt, leaf, r.requests);
    assert.equal(words(d), r.renewalTime, r.why);
    const current = r.requests.find((cr) => cr.metadata.annotations?.['cert-manager.io/certificate-revision'] === '3');
    assert.equal(words(d), words(renewalFor(crt, leaf, issuanceTimeOf(leaf, current))), `${r.why}: the trigger's decision`);
  }
});
