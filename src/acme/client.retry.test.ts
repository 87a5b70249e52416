import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AcmeClient, AcmeError, generateAccountKey, linkUrls, topIssuerCommonName } from './client.ts';
import { parseRetryAfter } from '../runtime/retry-after.ts';

// Pebble never rate-limits and never sends Retry-After, so these server behaviours are scripted here.
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

describe('AcmeClient retry and wait policy (scripted server)', () => {
  let server: http.Server;
  let base: string;
  let script: Reply[] = [];
  let nonceCounter = 0;
  let posts = 0;
  let heads = 0;
  /** the new-nonce endpoint down: HEAD answers 503 with no nonce, GET the problem document */
  let nonceDown = false;

  before(async () => {
    server = http.createServer((req, res) => {
      const nonce = { 'replay-nonce': `nonce-${++nonceCounter}` };
      if (req.url === '/dir') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ newNonce: `${base}/nonce`, newAccount: `${base}/acct`, newOrder: `${base}/order` }));
        return;
      }
      if (req.url === '/nonce' && nonceDown) {
        if (req.method === 'HEAD') heads++;
        res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '120' });
        res.end(req.method === 'GET' ? JSON.stringify({ type: 'urn:ietf:params:acme:error:serverInternal', detail: 'the CA is in maintenance until 10:00 UTC', status: 503 }) : undefined);
        return;
      }
      if (req.method === 'HEAD') {
        heads++;
        res.writeHead(200, nonce).end();
        return;
      }
      req.resume();
      req.on('end', () => {
        posts++;
        const reply = script.shift() ?? { status: 500, body: { type: 'urn:ietf:params:acme:error:serverInternal', detail: 'script exhausted' } };
        const isProblem = reply.status >= 400;
        res.writeHead(reply.status, {
          'content-type': isProblem ? 'application/problem+json' : 'application/json',
          ...nonce,
          ...reply.headers,
        });
        res.end(JSON.stringify(reply.body ?? {}));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  function client(sleeps: number[], extra: Partial<ConstructorParameters<typeof AcmeClient>[0]> = {}) {
    posts = 0;
    heads = 0;
    return new AcmeClient({
      directoryUrl: `${base}/dir`,
      accountKeyPem: generateAccountKey(),
      accountUrl: `${base}/acct/1`,
      sleep: async (ms) => void sleeps.push(ms),
      ...extra,
    });
  }

  const pendingAuthz = { status: 'pending', identifier: { type: 'dns', value: 'a.test' }, challenges: [] };

  test('a new-nonce endpoint that fails says why: the problem document from a GET of it (a HEAD answer has no body)', async () => {
    nonceDown = true;
    try {
      const c = client([]);
      const err = await c.getOrder(`${base}/order/1`).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof AcmeError, String(err));
      assert.equal(err.status, 503);
      assert.equal(err.shortType, 'serverInternal');
      assert.match(err.message, /new nonce: urn:ietf:params:acme:error:serverInternal: the CA is in maintenance until 10:00 UTC \(HTTP 503\)/);
      assert.equal(err.retryAfterMs, 120_000);
      assert.equal(posts, 0);
    } finally {
      nonceDown = false;
    }
  });

  test('rateLimited with Retry-After waits that long and retries', async () => {
    const sleeps: number[] = [];
    const c = client(sleeps);
    script = [
      { status: 429, body: { type: 'urn:ietf:params:acme:error:rateLimited', detail: 'slow down' }, headers: { 'retry-after': '3' } },
      { status: 200, body: { ...pendingAuthz, status: 'valid' } },
    ];
    const authz = await c.getAuthorization(`${base}/authz/1`);
    assert.equal(authz.status, 'valid');
    assert.deepEqual(sleeps, [3000]);
    assert.equal(posts, 2);
    c.close();
  });

  test('a Retry-After beyond the bound fails at once with the rateLimited error', async () => {
    const sleeps: number[] = [];
    const c = client(sleeps, { maxRetryAfterMs: 10_000 });
    script = [{ status: 429, body: { type: 'urn:ietf:params:acme:error:rateLimited', detail: 'too many certificates' }, headers: { 'retry-after': '3600' } }];
    await assert.rejects(c.getAuthorization(`${base}/authz/1`), (e: unknown) => {
      assert.ok(e instanceof AcmeError);
      assert.equal(e.shortType, 'rateLimited');
      assert.equal(e.status, 429);
      assert.equal(e.retryAfterMs, 3_600_000);
      assert.match(e.message, /rateLimited: too many certificates/);
      return true;
    });
    assert.deepEqual(sleeps, []);
    c.close();
  });

  test('badNonce is retried with the nonce from the error, and only a bounded number of times', async () => {
    const c = client([], { maxBadNonceRetries: 2 });
    const badNonce = { status: 400, body: { type: 'urn:ietf:params:acme:error:badNonce', detail: 'JWS has an invalid anti-replay nonce' } };
    script = [badNonce, badNonce, badNonce, badNonce];
    await assert.rejects(c.getOrder(`${base}/order/1`), /badNonce/);
    assert.equal(posts, 3);
    assert.equal(heads, 1, 'only the first POST needed a fresh nonce');
    c.close();
  });

  test('polling starts short and doubles to the cap, honouring Retry-After when sent', async () => {
    const sleeps: number[] = [];
    const c = client(sleeps, { poll: { initialMs: 50, maxMs: 200 } });
    script = [
      { status: 200, body: pendingAuthz },
      { status: 200, body: pendingAuthz },
      { status: 200, body: pendingAuthz, headers: { 'retry-after': '1' } },
      { status: 200, body: pendingAuthz },
      { status: 200, body: { ...pendingAuthz, status: 'valid' } },
    ];
    await c.waitForAuthorization(`${base}/authz/2`);
    assert.deepEqual(sleeps, [50, 100, 200, 1000, 200]);
    c.close();
  });

  test('polling gives up after the timeout', async () => {
    const c = client([], { poll: { initialMs: 1000, maxMs: 1000, timeoutMs: 3000 } });
    script = Array.from({ length: 5 }, () => ({ status: 200, body: { status: 'processing', identifiers: [], authorizations: [], finalize: '' } }));
    await assert.rejects(c.waitForOrder(`${base}/order/3`), /timed out .* order .*processing/);
    assert.equal(posts, 3);
    c.close();
  });
});

test('parseRetryAfter reads seconds and HTTP dates', () => {
  assert.equal(parseRetryAfter('120'), 120_000);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 30_000);
  assert.equal(parseRetryAfter(undefined), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
});

test('linkUrls finds alternate links in separate or comma-joined headers, resolved against the request URL', () => {
  const raw = ['Link', '<https://ca.test/dir>;rel="index"', 'link', '</cert/1/1>;rel="alternate", <https://ca.test/cert/1/2>; rel=alternate'];
  assert.deepEqual(linkUrls(raw, 'alternate', 'https://ca.test/cert/1'), ['https://ca.test/cert/1/1', 'https://ca.test/cert/1/2']);
  assert.deepEqual(linkUrls(raw, 'index', 'https://ca.test/x'), ['https://ca.test/dir']);
});

test('topIssuerCommonName is undefined for text without certificates', () => {
  assert.equal(topIssuerCommonName('no pem here'), undefined);
});
