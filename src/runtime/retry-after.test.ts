// Retry-After as RFC 9110 §10.2.3 defines it, for both readers: the ACME client (undefined when
// the server asked for nothing) and the DNS providers' clients (a fallback and a 10 s bound).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetryAfter } from './retry-after.ts';
import { providerRetryDelayMs } from '../controllers/acme/solvers/dns01/throttling.ts';

const NOW = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');

const rows: { name: string; value: string | null | undefined; acme: number | undefined; provider: number }[] = [
  { name: 'absent', value: null, acme: undefined, provider: 1000 },
  { name: 'undefined', value: undefined, acme: undefined, provider: 1000 },
  { name: 'empty: not "now"', value: '', acme: undefined, provider: 1000 },
  { name: 'blank', value: '  ', acme: undefined, provider: 1000 },
  { name: 'delay-seconds', value: '3', acme: 3000, provider: 3000 },
  { name: 'delay-seconds with surrounding space', value: ' 7 ', acme: 7000, provider: 7000 },
  { name: 'zero seconds', value: '0', acme: 0, provider: 0 },
  { name: 'long delay: the provider bound', value: '120', acme: 120_000, provider: 10_000 },
  { name: 'fractional seconds are not delay-seconds', value: '1.5', acme: undefined, provider: 1000 },
  { name: 'negative seconds are not delay-seconds', value: '-3', acme: undefined, provider: 1000 },
  { name: 'HTTP-date 5 s ahead', value: 'Wed, 21 Oct 2015 07:28:05 GMT', acme: 5000, provider: 5000 },
  { name: 'HTTP-date in the past: now', value: 'Wed, 21 Oct 2015 07:27:00 GMT', acme: 0, provider: 0 },
  { name: 'obsolete RFC 850 date', value: 'Wednesday, 21-Oct-15 07:28:02 GMT', acme: 2000, provider: 2000 },
  { name: 'garbage', value: 'soon', acme: undefined, provider: 1000 },
];

test('parseRetryAfter (ACME client): RFC 9110 delay-seconds or HTTP-date, undefined otherwise', () => {
  for (const r of rows) assert.equal(parseRetryAfter(r.value, NOW), r.acme, r.name);
});

test('providerRetryDelayMs (Cloudflare, DigitalOcean, acme-dns): the same reading, else the fallback, at most 10 s', () => {
  for (const r of rows) assert.equal(providerRetryDelayMs(r.value ?? null, 1000, NOW), r.provider, r.name);
  assert.equal(providerRetryDelayMs(null, 4000, NOW), 4000, 'a caller\'s fallback (DigitalOcean\'s ratelimit-reset)');
  assert.equal(providerRetryDelayMs(null, 60_000, NOW), 10_000, 'the fallback is bounded too');
});
