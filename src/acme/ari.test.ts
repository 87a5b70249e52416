import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ariCertId, ariRecheckDelay, ariRenewalPoint, certIdOf, parseRenewalInfo, ARI_DEFAULT_RECHECK_MS } from './ari.ts';
import { parseCertificate } from '../pki/parse.ts';

// RFC 9773 §4.1's example certificate: AKI keyIdentifier 69:88:5B:6B:87:46:40:41:E1:B3:7B:84:7B:A0:AE:2C:DE:01:C8:D4,
// serial 00:87:65:43:21 (DER content bytes, with the leading zero the set top bit needs).
const RFC9773_EXAMPLE_CERT = `-----BEGIN CERTIFICATE-----
MIIBQzCB66ADAgECAgUAh2VDITAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwpFeGFt
cGxlIENBMCIYDzAwMDEwMTAxMDAwMDAwWhgPMDAwMTAxMDEwMDAwMDBaMBYxFDAS
BgNVBAMTC2V4YW1wbGUuY29tMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEeBZu
7cbpAYNXZLbbh8rNIzuOoqOOtmxA1v7cRm//AwyMwWxyHz4zfwmBhcSrf47NUAFf
qzLQ2PPQxdTXREYEnKMjMCEwHwYDVR0jBBgwFoAUaYhba4dGQEHhs3uEe6CuLN4B
yNQwCgYIKoZIzj0EAwIDRwAwRAIge09+S5TZAlw5tgtiVvuERV6cT4mfutXIlwTb
+FYN/8oCIClDsqBklhB9KAelFiYt9+6FDj3z4KGVelYM5MdsO3pK
-----END CERTIFICATE-----
`;
const RFC9773_CERT_ID = 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE';

test('CertID matches RFC 9773 §4.1 byte for byte, from the bytes and from the example certificate', () => {
  assert.equal(ariCertId('69885B6B87464041E1B37B847BA0AE2CDE01C8D4', '0087654321'), RFC9773_CERT_ID);
  // CertificateInfo strips leading zeros; the DER sign byte comes back.
  assert.equal(ariCertId('69885b6b87464041e1b37b847ba0ae2cde01c8d4', '87654321'), RFC9773_CERT_ID);
  const leaf = parseCertificate(RFC9773_EXAMPLE_CERT);
  assert.equal(leaf.authorityKeyId, '69885b6b87464041e1b37b847ba0ae2cde01c8d4');
  assert.equal(certIdOf(leaf), RFC9773_CERT_ID);
  // no padding, URL-safe alphabet, no sign byte when the top bit is clear
  assert.equal(ariCertId('fbffbf', '7f'), '-_-_.fw');
  assert.equal(certIdOf({ serialNumber: '01' }), undefined);
});

test('renewalInfo bodies: a window whose end is not after its start is refused (RFC 9773 §4.2)', () => {
  assert.deepEqual(parseRenewalInfo({ suggestedWindow: { start: '2026-03-01T00:00:00Z', end: '2026-03-03T00:00:00.000Z' }, explanationURL: 'https://ca/why' }),
    { suggestedWindow: { start: '2026-03-01T00:00:00Z', end: '2026-03-03T00:00:00Z' }, explanationURL: 'https://ca/why' });
  assert.throws(() => parseRenewalInfo({ suggestedWindow: { start: '2026-03-03T00:00:00Z', end: '2026-03-01T00:00:00Z' } }), /not after/);
  assert.throws(() => parseRenewalInfo({}), /suggestedWindow/);
  assert.throws(() => parseRenewalInfo({ suggestedWindow: { start: 'x', end: 'y' } }), /parse/);
});

test('Retry-After is bounded to 1 minute .. 1 day; absent: 6 h, or 1 h after an error', () => {
  const table: [number | undefined, boolean, number][] = [
    [undefined, false, ARI_DEFAULT_RECHECK_MS], [undefined, true, 3_600_000], [0, false, 60_000], [5_000, false, 60_000],
    [7_200_000, false, 7_200_000], [7 * 86_400_000, false, 86_400_000],
  ];
  for (const [ra, failed, want] of table) assert.equal(ariRecheckDelay(ra, failed), want, `${ra} ${failed}`);
});

test('the renewal point is inside the window, the same for the same CertID, and spread across CertIDs', () => {
  const w = { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-03T00:00:00Z') };
  const points = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const p = ariRenewalPoint(w, `cert-${i}`);
    assert.ok(p >= w.start && p < w.end);
    assert.equal(p.getTime() % 1000, 0);
    assert.equal(p.getTime(), ariRenewalPoint(w, `cert-${i}`).getTime());
    points.add(Math.floor((p.getTime() - w.start.getTime()) / (w.end.getTime() - w.start.getTime()) * 4));
  }
  assert.equal(points.size, 4, 'every quarter of the window gets some certificates');
});
