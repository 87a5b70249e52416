// The gatherer's HTTP side against loopback servers: the CA's CAA identifiers from its directory,
// and what answers a challenge URL (with the Host header the CA sends).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchCAAIdentities, fetchChallenge } from './gather.ts';

async function serve(handler: http.RequestListener): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

test('meta.caaIdentities from the ACME directory; none; a directory that fails', async () => {
  let body = JSON.stringify({ newOrder: 'x', meta: { caaIdentities: ['letsencrypt.org'] } });
  let status = 200;
  const s = await serve((_req, res) => res.writeHead(status).end(body));
  try {
    const url = `http://127.0.0.1:${s.port}/dir`;
    assert.deepEqual(await fetchCAAIdentities(url, undefined, false, 2000), ['letsencrypt.org']);
    body = JSON.stringify({ newOrder: 'x', meta: {} });
    assert.deepEqual(await fetchCAAIdentities(url, undefined, false, 2000), []);
    status = 503;
    await assert.rejects(fetchCAAIdentities(url, undefined, false, 2000), new RegExp(`^Error: GET ${url}: HTTP 503$`));
  } finally {
    await s.close();
  }
});

test('a challenge URL: the answer with the Host header, or the refused connection', async () => {
  const seen: string[] = [];
  const s = await serve((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    res.writeHead(200, { server: 'nginx' }).end('tok.thumb');
  });
  try {
    const o = await fetchChallenge('a.example.test', '127.0.0.1', s.port, 'tok', 2000);
    assert.deepEqual(o, { kind: 'answered', address: '127.0.0.1', port: s.port, status: 200, body: 'tok.thumb', server: 'nginx' });
    assert.deepEqual(seen, [`a.example.test:${s.port} /.well-known/acme-challenge/tok`]);
  } finally {
    await s.close();
  }
  assert.deepEqual(await fetchChallenge('a.example.test', '127.0.0.1', s.port, 'tok', 2000), { kind: 'failed', address: '127.0.0.1', port: s.port, code: 'ECONNREFUSED' });
});
