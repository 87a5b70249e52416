// acmeDNSUpdate against the loopback acme-dns update API (test/rig/acme-dns-api.ts): throttling by
// a proxy in front of it, values already held by the account, refused keys.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { acmeDNSUpdate } from './acme-dns.ts';
import { ProviderConfigError, ProviderThrottledError } from './secret-ref.ts';
import { startAcmeDNSAPI, type AcmeDNSAPI } from '../../../../../test/rig/acme-dns-api.ts';
import type { ChallTestSrv } from '../../../../../test/rig/index.ts';

/** the values are read back from the rig; nothing here needs them in DNS */
const noDNS = { setTXT: async () => {}, clearTXT: async () => {}, setCNAME: async () => {} } as unknown as ChallTestSrv;
/** a value of the shape acme-dns accepts: 43 characters, as a key authorization digest */
const value = () => crypto.randomBytes(32).toString('base64url');

describe('acmeDNSUpdate', () => {
  let api: AcmeDNSAPI;
  before(async () => {
    api = await startAcmeDNSAPI({ authDomain: 'auth.acme-dns.test', challtestsrv: noDNS });
  });
  after(() => api?.stop());

  test('a 429 is waited out for its Retry-After, then the value is written once', async () => {
    const account = api.register();
    const v = value();
    const before = api.requests.length;
    api.throttle(1, 1);
    await acmeDNSUpdate(api.url, account, v);
    const mine = api.requests.slice(before);
    assert.deepEqual(mine.map((r) => r.status), [429, 200]);
    assert.ok(mine[1].at - mine[0].at >= 950, `retried ${mine[1].at - mine[0].at} ms after the 429, Retry-After 1 s`);
    assert.deepEqual(api.values.get(account.subdomain), [v]);
  });

  test('throttled on every attempt: a bounded number of tries, then a throttled error (not a configuration error) naming the 429 and the wait; nothing written', async () => {
    const account = api.register();
    const before = api.requests.length;
    api.throttle(10, 0);
    try {
      await assert.rejects(acmeDNSUpdate(api.url, account, value()), (e: Error) => e instanceof ProviderThrottledError && e.retryAfterMs === 0 && /^acme-dns update at http:\/\/127\.0\.0\.1:\d+: HTTP 429 \(throttled: the API asks to wait 0 s\)$/.test(e.message));
    } finally {
      api.throttle(0);
    }
    assert.deepEqual(api.requests.slice(before).map((r) => r.status), [429, 429, 429]);
    assert.equal(api.values.get(account.subdomain), undefined);
  });

  test('the account already holds two values (earlier challenges): ours replaces the older, the newer stays', async () => {
    const account = api.register();
    const [older, newer, ours] = [value(), value(), value()];
    await acmeDNSUpdate(api.url, account, older);
    await acmeDNSUpdate(api.url, account, newer);
    await acmeDNSUpdate(api.url, account, ours);
    assert.deepEqual(api.values.get(account.subdomain), [newer, ours]);
  });

  test('asked to wait longer than a client waits (60 s): no early retry, a throttled error carrying the wait', async () => {
    const account = api.register();
    const before = api.requests.length;
    api.throttle(10, 60);
    try {
      await assert.rejects(acmeDNSUpdate(api.url, account, value()), (e: Error) => e instanceof ProviderThrottledError && e.retryAfterMs === 60_000 && / \(throttled: the API asks to wait 60 s\)$/.test(e.message));
    } finally {
      api.throttle(0);
    }
    assert.deepEqual(api.requests.slice(before).map((r) => r.status), [429]);
  });

  test('a refused key is a configuration error and never shows the key', async () => {
    const account = { ...api.register(), password: 'not-the-password' };
    await assert.rejects(acmeDNSUpdate(api.url, account, value()), (e: Error) => e instanceof ProviderConfigError && /HTTP 401 forbidden$/.test(e.message) && !e.message.includes('not-the-password'));
  });
});
