// Connections a client without the token can open: bounded in number, and dropped when they do
// not complete a TLS handshake in time. 21,000 plain TCP connects that sent nothing held every file
// descriptor the server had, and the API, /readyz and /metrics all failed until they closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { startApiServer } from './api-server.ts';
import { ensureServingCertificate } from './tls.ts';
import { SecretType } from '../api/resources.ts';

test('connections beyond the cap are closed at once, and one that never completes its TLS handshake is closed after the handshake timeout', async () => {
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

test('a response whose client stops reading is dropped once it makes no progress for the stall timeout; watches are exempt', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store, responseStallMs: 500, defaultWatchTimeoutSeconds: 30 });
  const sockets: net.Socket[] = [];
  try {
    const value = Buffer.alloc(900 * 1024, 7).toString('base64');
    for (let i = 0; i < 12; i++) await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `big-${i}`, namespace: 'default' }, data: { v: value } });
    const stalled = (path: string) => new Promise<{ bytes: number; complete: boolean }>((resolve) => {
      const s = net.connect(api.port, '127.0.0.1');
      sockets.push(s);
      s.on('error', () => {});
      s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      s.pause();
      let bytes = 0;
      let text = '';
      const readLater = () => {
        s.on('data', (d: Buffer) => { bytes += d.length; text += d.length < 64 ? d.toString() : d.subarray(-64).toString(); });
        s.on('close', () => resolve({ bytes, complete: /}\s*$/.test(text) }));
        s.resume();
      };
      // reading resumes well past the stall timeout after the response began (a loaded machine may take seconds to start it)
      s.once('readable', () => setTimeout(readLater, 2500));
    });
    const list = await stalled('/api/v1/namespaces/default/secrets');
    assert.ok(list.bytes > 0);
    assert.equal(list.complete, false, `the stalled list was cut off after ${list.bytes} bytes`);
    // a namespace named watch, or a watch parameter the router does not read as one, makes no watch of a list
    for (let i = 0; i < 12; i++) await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `big-${i}`, namespace: 'watch' }, data: { v: value } });
    for (const path of ['/api/v1/namespaces/watch/secrets', '/api/v1/namespaces/default/secrets?watch=0&x=/watch/']) {
      const other = await stalled(path);
      assert.ok(other.bytes > 0, path);
      assert.equal(other.complete, false, `the stalled list ${path} was cut off after ${other.bytes} bytes`);
    }
    // a quiet watch is no stalled response
    const watch = await new Promise<boolean>((resolve) => {
      const s = net.connect(api.port, '127.0.0.1');
      sockets.push(s);
      s.write('GET /api/v1/namespaces/quiet/secrets?watch=1&timeoutSeconds=30 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      let open = true;
      s.on('close', () => (open = false));
      s.on('data', () => {});
      setTimeout(() => resolve(open), 1500);
    });
    assert.equal(watch, true, 'the watch is still open');
  } finally {
    for (const s of sockets) s.destroy();
    await api.close();
    await store.close();
  }
});

test('a connection whose request headers do not all arrive within the headers timeout is closed then, not at Node\'s next 30 s check', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store, headersTimeoutMs: 400 });
  const sockets: net.Socket[] = [];
  try {
    const started = Date.now();
    const held = await Promise.all(Array.from({ length: 5 }, () => new Promise<number>((resolve) => {
      const s = net.connect(api.port, '127.0.0.1');
      sockets.push(s);
      s.on('error', () => {});
      s.on('data', () => {});
      // half a header line, and nothing more
      s.write('GET /readyz HTTP/1.1\r\nHost: 127.0');
      s.on('close', () => resolve(Date.now() - started));
      setTimeout(() => resolve(Infinity), 4000);
    })));
    for (const ms of held) {
      assert.ok(ms >= 350, `closed after ${ms} ms, before the headers timeout`);
      assert.ok(ms < 2500, `held ${ms} ms with a 400 ms headers timeout`);
    }
  } finally {
    for (const s of sockets) s.destroy();
    await api.close();
    await store.close();
  }
});

test('a full connection cap sheds the oldest connection with no request in flight to admit a new client, logging it once a minute; a watch is kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-conn-'));
  const store = openSqliteStore({ path: ':memory:' });
  const tls = await ensureServingCertificate(dir, { hosts: ['127.0.0.1'] });
  const warnings: unknown[][] = [];
  const quiet = () => {};
  const logger = { debug: quiet, info: quiet, error: quiet, warn: (...args: unknown[]) => warnings.push(args) };
  const api = await startApiServer({ store, tls: { certPem: tls.certPem, keyPem: tls.keyPem }, maxConnections: 5, logger, defaultWatchTimeoutSeconds: 30 });
  const opened: { destroy(): void }[] = [];
  const get = (path: string) => new Promise<number>((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port: api.port, path, ca: tls.caPem, servername: '127.0.0.1', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  try {
    // the oldest connection is a watch: a request in flight, never shed
    let watchOpen = true;
    await new Promise<void>((resolve, reject) => {
      const req = https.get({ host: '127.0.0.1', port: api.port, path: '/api/v1/namespaces/default/secrets?watch=1', ca: tls.caPem, servername: '127.0.0.1', agent: false }, (res) => {
        res.on('data', () => {});
        res.on('close', () => (watchOpen = false));
        resolve();
      });
      req.on('error', () => (watchOpen = false));
      opened.push(req);
      req.on('error', reject);
    });
    // four connections that complete their handshake and send nothing fill the cap
    const openIdle = async () => {
      const s = tlsConnect({ host: '127.0.0.1', port: api.port, ca: tls.caPem, servername: '127.0.0.1' });
      opened.push(s);
      s.on('error', () => {});
      await new Promise((r) => s.once('secureConnect', r));
      const state = { closed: false };
      s.on('close', () => (state.closed = true));
      return state;
    };
    const idle = [];
    for (let i = 0; i < 4; i++) idle.push(await openIdle());
    assert.equal(await get('/readyz'), 200, 'a new client is served while the cap is full');
    // the cap is full again
    idle.push(await openIdle());
    assert.equal(await get('/readyz'), 200, 'and the next one');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(idle.map((s) => s.closed), [true, true, false, false, false], 'the two oldest idle connections were shed');
    assert.equal(watchOpen, true, 'the watch is kept');
    assert.equal(warnings.length, 1, `one warning a minute: ${JSON.stringify(warnings)}`);
  } finally {
    for (const s of opened) s.destroy();
    await api.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
