// Connections a client without the token can open: bounded in number, and dropped when they do
// not complete a TLS handshake in time. 21,000 plain TCP connects that sent nothing held every file
// descriptor the server had, and the API, /readyz and /metrics all failed until they closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { startApiServer } from './api-server.ts';
import { ensureServingCertificate } from './tls.ts';

test('connections beyond the cap are refused at once, and one that never completes its TLS handshake is closed after the handshake timeout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-conn-'));
  const store = openSqliteStore({ path: ':memory:' });
  const tls = await ensureServingCertificate(dir, { hosts: ['127.0.0.1'] });
  const api = await startApiServer({ store, tls: { certPem: tls.certPem, keyPem: tls.keyPem }, token: 't', maxConnections: 20, handshakeTimeoutMs: 800 });
  const sockets: net.Socket[] = [];
  try {
    const closed = new Set<net.Socket>();
    for (let i = 0; i < 30; i++) {
      const s = net.connect(api.port, '127.0.0.1');
      s.on('close', () => closed.add(s));
      s.on('error', () => {});
      sockets.push(s);
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(closed.size >= 10, `${closed.size} of 30 closed at once; the cap is 20`);
    assert.ok(closed.size < 30, 'those within the cap wait for their handshake');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(closed.size, 30, 'a connection that sends no handshake is closed after the timeout');

    // the server still answers a real client
    const status = await new Promise<number>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: api.port, path: '/readyz', ca: tls.caPem, servername: '127.0.0.1' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });
    assert.equal(status, 200);
  } finally {
    for (const s of sockets) s.destroy();
    await api.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
