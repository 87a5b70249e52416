// The CA's "replace now" (ARI window already over) and the minimum interval between issuances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdRenewNow } from './renewal-decision.ts';
import type { RenewalDecision } from './renewal-time.ts';

const T = (iso: string) => new Date(iso);
const renewNow = (at: string): RenewalDecision => ({ kind: 'scheduled', renewalTime: T(at), baseTime: T('2026-03-02T00:00:00Z'), reason: 'ARIRenewNow', message: 'the CA asks for this certificate to be replaced now' });
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
    const d = holdRenewNow(renewNow(r.at), leaf, r.revision, T(r.issuedAt));
    assert.equal(d.kind, 'scheduled', r.why);
    if (d.kind !== 'scheduled') continue;
    assert.equal(d.renewalTime.toISOString(), r.renewalTime, r.why);
    assert.equal(d.reason, 'ARIRenewNow', r.why);
    assert.equal(/held until .* \(5m, the CA asking again for a replacement after the last one\)/.test(d.message), r.held, `${r.why}: ${d.message}`);
  }
});
