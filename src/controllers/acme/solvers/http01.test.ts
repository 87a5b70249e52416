import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { selfCheckHTTP01, startHTTP01Server, type HTTP01Server } from './http01.ts';
import { startNamed, type Named } from '../../../../test/rig/index.ts';

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
