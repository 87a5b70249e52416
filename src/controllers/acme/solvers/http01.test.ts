import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { selfCheckHTTP01, startHTTP01Server, type HTTP01Server } from './http01.ts';
import { startNamed, type Named } from '../../../../test/rig/index.ts';
import { heldFor, rawRequest } from './testing/http01-probe.ts';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

describe('HTTP-01 responder and self-check', () => {
  let server: HTTP01Server;
  let named: Named;
  before(async () => {
    server = await startHTTP01Server({ host: '127.0.0.1', port: 0 });
    named = await startNamed({ zone: 'example.test', tsig: { name: 'k', algorithm: 'hmac-sha256' } });
  });
  after(async () => {
    await Promise.all([server?.close(), named?.stop()]);
  });

  test('serves a presented token until it is cleaned up, 404 otherwise', async () => {
    assert.ok(server.port > 0);
    server.present('tok_1-A', 'tok_1-A.thumb');
    assert.deepEqual(await get(server.port, '/.well-known/acme-challenge/tok_1-A'), { status: 200, body: 'tok_1-A.thumb' });
    assert.equal((await get(server.port, '/.well-known/acme-challenge/other')).status, 404);
    assert.equal((await get(server.port, '/.well-known/acme-challenge/../tok_1-A')).status, 404);
    server.cleanUp('tok_1-A');
    assert.equal((await get(server.port, '/.well-known/acme-challenge/tok_1-A')).status, 404);
  });

  test('self-check resolves the name through the given nameservers and compares the body', async () => {
    server.present('t2', 't2.key');
    const common = { dnsName: 'www.example.test', token: 't2', port: server.port, nameservers: [named.server] };
    assert.deepEqual(await selfCheckHTTP01({ ...common, keyAuth: 't2.key' }), { ok: true });
    const wrong = await selfCheckHTTP01({ ...common, keyAuth: 't2.other' });
    assert.equal(wrong.ok, false);
    assert.match(wrong.reason!, /does not match/);
    server.cleanUp('t2');
    const gone = await selfCheckHTTP01({ ...common, keyAuth: 't2.key' });
    assert.match(gone.reason!, /HTTP 404/);
  });

  test('self-check reports a name the nameservers cannot resolve', async () => {
    const res = await selfCheckHTTP01({ dnsName: 'www.not-served.test', token: 't', keyAuth: 'k', port: server.port, nameservers: [named.server] });
    assert.equal(res.ok, false);
    assert.match(res.reason!, /resolving www\.not-served\.test/);
  });
});

// The listener faces the internet. cert-manager's solver answers only for the Challenge's host,
// uncached (Cache-Control: no-cache, no-store, must-revalidate), and bounds how long a client
// may take over its headers (ReadHeaderTimeout, "mitigates slowloris"); idle connections once
// filled it for 85 s each, with no cap, and the CA's requests were reset.
describe('HTTP-01 listener as the internet sees it', () => {
  let server: HTTP01Server;
  before(async () => {
    server = await startHTTP01Server({ host: '127.0.0.1', port: 0, guard: { headersTimeoutMs: 400, idleTimeoutMs: 600, maxConnections: 3 } });
  });
  after(async () => {
    await server?.close();
  });
  const req = (target: string, headers: string) => rawRequest(server.port, `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);

  test('a token is served for its Challenge\'s host only (any port, any case), uncached; absolute-form is read; two Hosts are a 400', async () => {
    await server.present('hostTok', 'hostTok.thumb', 'www.Example.test');
    await server.present('v6Tok', 'v6Tok.thumb', '2001:db8::1');
    const path = '/.well-known/acme-challenge/hostTok';
    const ok = await req(path, 'Host: www.example.test\r\n');
    assert.deepEqual([ok.status, ok.body], [200, 'hostTok.thumb']);
    assert.match(ok.head, /cache-control: no-cache, no-store, must-revalidate/i);
    assert.equal((await req(path, 'Host: WWW.example.test:80\r\n')).status, 200);
    assert.equal((await req(path, 'Host: attacker.example\r\n')).status, 404);
    assert.equal((await req(path, '')).status, 400, 'HTTP/1.1 needs a Host (Node answers 400)');
    assert.equal((await req(path, 'Host: www.example.test\r\nHost: attacker.example\r\n')).status, 400);
    assert.equal((await req(`http://www.example.test${path}`, 'Host: www.example.test\r\n')).status, 200);
    assert.equal((await req(`http://attacker.example${path}`, 'Host: www.example.test\r\n')).status, 404, 'the absolute form\'s authority is the host');
    assert.equal((await req('/.well-known/acme-challenge/v6Tok', 'Host: [2001:db8::1]:80\r\n')).status, 200);
    const missing = await req('/.well-known/acme-challenge/none', 'Host: www.example.test\r\n');
    assert.equal(missing.status, 404);
    assert.match(missing.head, /cache-control: no-cache/i);
  });

  test('a connection that sends nothing, or half its headers, is closed within the listener\'s timeouts', async () => {
    const [silent, partial] = await Promise.all([heldFor(server.port), heldFor(server.port, 'GET /.well-known/acme-challenge/x HTTP/1.1\r\nHost: a')]);
    assert.ok(silent < 3_000, `silent connection held ${silent} ms`);
    assert.ok(partial < 3_000, `partial headers held ${partial} ms`);
  });

  test('at its connection cap the listener closes the oldest connection to admit a new one: idle connections cannot lock the CA out', async () => {
    await server.present('capTok', 'capTok.thumb', 'cap.example.test');
    const idle = [heldFor(server.port), heldFor(server.port), heldFor(server.port), heldFor(server.port)];
    await new Promise((r) => setTimeout(r, 100));
    const ca = await req('/.well-known/acme-challenge/capTok', 'Host: cap.example.test\r\n');
    assert.deepEqual([ca.status, ca.body], [200, 'capTok.thumb']);
    assert.ok((await Promise.race(idle)) < 550, 'the oldest idle connection made way');
    await Promise.all(idle);
  });
});
