// The CA's "replace now" (ARI window already over) and the minimum interval between issuances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdForCaAnswer, renewalFor } from './renewal-decision.ts';
import { createCSR } from '../../pki/csr.ts';
import { generatePrivateKey } from '../../pki/keys.ts';
import { parseCertificate } from '../../pki/parse.ts';
import { signCertificate } from '../../pki/sign.ts';
import { certIdOf } from '../../acme/ari.ts';
import type { Certificate } from '../../api/types.ts';
import type { RenewalDecision } from './renewal-time.ts';

const T = (iso: string) => new Date(iso);
const renewNow = (at: string, reason: 'ARIRenewNow' | 'ARI' | 'ARIMovedIntoWindow' = 'ARIRenewNow'): RenewalDecision => ({ kind: 'scheduled', renewalTime: T(at), baseTime: T('2026-03-02T00:00:00Z'), reason, message: 'the CA asks for this certificate to be replaced now' });
// a 90-day leaf: 10% of its validity is 9 days, far above the 5-minute floor
const leaf = { notBefore: T('2026-01-01T00:00:00Z'), notAfter: T('2026-04-01T00:00:00Z') };

test('ARI "replace now": the first certificate at once, later ones no sooner than 5 minutes after their issuance (table)', () => {
  const rows: { why: string; revision: number | undefined; issuedAt: string; at: string; renewalTime: string; held: boolean }[] = [
    { why: 'revision 1 cannot be the tail of a loop: replaced at once', revision: 1, issuedAt: '2026-01-01T00:00:00Z', at: '2026-01-01T00:01:00Z', renewalTime: '2026-01-01T00:01:00.000Z', held: false },
    { why: 'no revision yet counts as the first', revision: undefined, issuedAt: '2026-01-01T00:00:00Z', at: '2026-01-01T00:01:00Z', renewalTime: '2026-01-01T00:01:00.000Z', held: false },
    { why: 'a replacement asked to be replaced a minute after issuance: held to 5 minutes (a CA answering "now" for every certificate)', revision: 2, issuedAt: '2026-01-01T00:00:00Z', at: '2026-01-01T00:01:00Z', renewalTime: '2026-01-01T00:05:00.000Z', held: true },
    { why: 'a replacement older than 5 minutes: at once, not held by 10% of the validity (9 days)', revision: 5, issuedAt: '2026-01-01T00:00:00Z', at: '2026-01-01T00:06:00Z', renewalTime: '2026-01-01T00:06:00.000Z', held: false },
    { why: 'issuedAt (the request creation) later than notBefore counts', revision: 3, issuedAt: '2026-01-01T00:03:00Z', at: '2026-01-01T00:06:00Z', renewalTime: '2026-01-01T00:08:00.000Z', held: true },
  ];
  for (const r of rows) {
    const d = holdForCaAnswer(renewNow(r.at), leaf, r.revision, T(r.issuedAt));
    assert.equal(d.kind, 'scheduled', r.why);
    if (d.kind !== 'scheduled') continue;
    assert.equal(d.renewalTime.toISOString(), r.renewalTime, r.why);
    assert.equal(d.reason, 'ARIRenewNow', r.why);
    assert.equal(/held until .* \(5m, the CA asking again for a replacement after the last one\)/.test(d.message), r.held, `${r.why}: ${d.message}`);
  }
});

test('an ARI window early in a certificate\'s life is the CA\'s to set: not held by 10% of the validity, only by the 5-minute floor after a replacement (table)', () => {
  // RFC 9773 §4.2: renew at a random point of the suggested window; 10% of this leaf is 9 days,
  // which would move the renewal past a window of hours, after the CA meant it to happen
  const rows: { why: string; reason: 'ARI' | 'ARIMovedIntoWindow'; revision: number; at: string; renewalTime: string }[] = [
    { why: 'a window point six hours after issuance', reason: 'ARI', revision: 1, at: '2026-01-01T06:00:00Z', renewalTime: '2026-01-01T06:00:00.000Z' },
    { why: 'moved into a maintenance window a day after issuance', reason: 'ARIMovedIntoWindow', revision: 3, at: '2026-01-02T02:00:00Z', renewalTime: '2026-01-02T02:00:00.000Z' },
    { why: 'a replacement told to renew within minutes of its issuance: 5 minutes after it', reason: 'ARI', revision: 2, at: '2026-01-01T00:02:00Z', renewalTime: '2026-01-01T00:05:00.000Z' },
  ];
  for (const r of rows) {
    const d = holdForCaAnswer(renewNow(r.at, r.reason), leaf, r.revision, leaf.notBefore);
    assert.equal(d.kind === 'scheduled' && d.renewalTime.toISOString(), r.renewalTime, r.why);
  }
});

test('renewalFor: the CA\'s ARI window about this leaf sets its renewal time, even in the first tenth of its life', async () => {
  const DAY = 86_400_000;
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const caPem = await signCertificate({ csrPem: await createCSR({ commonName: 'ari ca', isCA: true }, caKey), notBefore: T('2025-12-01T00:00:00Z'), durationMs: 365 * DAY, selfSignKeyPem: caKey, isCA: true });
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const leafPem = await signCertificate({ csrPem: await createCSR({ dnsNames: ['ari.example.test'] }, key), notBefore: leaf.notBefore, durationMs: 90 * DAY, issuer: { certPem: caPem, keyPem: caKey } });
  const info = parseCertificate(leafPem);
  const certID = certIdOf(info)!;
  assert.ok(certID);
  const crt = (revision: number): Certificate => ({
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default' },
    spec: { secretName: 'a', dnsNames: ['ari.example.test'], issuerRef: { name: 'le' } },
    // a one-second window six hours after issuance: its point is its start
    status: { revision, acme: { ari: { certID, suggestedWindow: { start: '2026-01-01T06:00:00Z', end: '2026-01-01T06:00:01Z' }, lastChecked: '2026-01-01T00:05:00Z' } } },
  } as Certificate);
  for (const revision of [1, 4]) {
    const d = renewalFor(crt(revision), info);
    assert.equal(d.kind === 'scheduled' && `${d.reason} ${d.renewalTime.toISOString()}`, 'ARI 2026-01-01T06:00:00.000Z', `revision ${revision}: ${d.kind === 'scheduled' ? d.message : d.kind}`);
  }
});
