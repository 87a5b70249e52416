import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { maxBodyBytes, parseApplyBody, readBodyBytes } from './request-body.ts';
import { HttpError } from './responses.ts';

/** A server whose handler reads each body with readBodyBytes and reports the outcome to the test. */
async function withServer(fn: (port: number, outcomes: Array<Promise<Buffer>>) => Promise<void>) {
  const outcomes: Array<Promise<Buffer>> = [];
  const server = http.createServer((req, res) => {
    const read = readBodyBytes(req);
    outcomes.push(read);
    read.then((b) => res.end(`${b.length}`), (e: Error) => {
      if (!res.destroyed) res.writeHead(e instanceof HttpError ? e.code : 500).end(e.message);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn((server.address() as AddressInfo).port, outcomes);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

test('a body arriving in many chunks is read whole, byte for byte', async () => {
  await withServer(async (port, outcomes) => {
    const parts = Array.from({ length: 50 }, (_, i) => Buffer.alloc(1000, i));
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST' }, (res) => { res.resume(); res.on('end', resolve); });
      req.on('error', reject);
      for (const p of parts) req.write(p);
      req.end();
    });
    assert.deepEqual(await outcomes[0], Buffer.concat(parts));
  });
});

test('a body over the limit is refused with 413 RequestEntityTooLarge, which the client receives, and not read further', async () => {
  await withServer(async (port, outcomes) => {
    let status = 0;
    const sent = await new Promise<number>((resolve) => {
      let written = 0;
      const req = http.request({ host: '127.0.0.1', port, method: 'POST' });
      const chunk = Buffer.alloc(256 * 1024);
      const pump = () => {
        while (written <= 2 * maxBodyBytes) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      // the server stops reading and drops the connection: the client sees a reset or a response
      req.on('error', () => resolve(written));
      req.on('response', (res) => { status = res.statusCode ?? 0; res.resume(); resolve(written); });
      req.on('close', () => resolve(written));
      pump();
    });
    assert.ok(sent > 0);
    await assert.rejects(outcomes[0], (e: unknown) => e instanceof HttpError && e.code === 413 && e.reason === 'RequestEntityTooLarge');
    // kube-apiserver answers 413; a reset before the answer left clients with an empty reply
    assert.equal(status, 413);
  });
});

test('a client that goes away mid-body fails the read instead of leaving it pending', async () => {
  await withServer(async (port, outcomes) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', headers: { 'content-length': '100000' } });
    req.on('error', () => {});
    req.write(Buffer.alloc(1000));
    while (!outcomes.length) await new Promise((r) => setTimeout(r, 5));
    req.destroy();
    await assert.rejects(outcomes[0]);
  });
});

test('a server-side apply body with YAML 1.1 tags (!!binary, !!timestamp, !!set) reads as JSON values would, never as bytes or dates (!!binary was a 500)', () => {
  const body = parseApplyBody('apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: !!binary aGVsbG8=, b: !!timestamp 2026-01-01, c: plain}\n') as { stringData: Record<string, unknown> };
  assert.deepEqual(body.stringData, { a: 'aGVsbG8=', b: '2026-01-01', c: 'plain' });
  assert.throws(() => parseApplyBody('!!binary aGVsbG8='), (e: unknown) => e instanceof HttpError && e.code === 400);
});
