// Finding 3 of issue 12: watchers that never read must not make the server buffer every event.
// The server runs in a child process (its RSS is then its own); ten watches are opened on raw
// sockets that are never read, 40 MB of Secret writes go through the API, and the server's RSS
// after a full GC must stay within a bound far below what buffering would cost (10 x 40 MB).
// Counted, not timed: the bound is on bytes, whatever the machine's speed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import http from 'node:http';
import { createInterface } from 'node:readline';

const watchers = 10;
const writeBytes = 40 * 1024 * 1024;
const objectBytes = 100 * 1024;
/** what the server may grow by: the per-watcher queue bounds, socket buffers and heap slack, with room */
const rssGrowthBoundBytes = 100 * 1024 * 1024;

function send(url: string, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, url), { method, headers: { 'Content-Type': contentType } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function withServer(fn: (url: string, ask: () => Promise<{ rss: number; heap: number }>, stall: (path: string, n: number) => Promise<void>) => Promise<void>) {
  // a fixed young generation: Node 24's default semi-space grows RSS by ~150 MiB with no leak (heap stays flat)
  const child = spawn(process.execPath, ['--expose-gc', '--max-semi-space-size=16', '--import', 'tsx', new URL('./watch-memory-child.ts', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string);
  const sockets: net.Socket[] = [];
  try {
    const { url } = await next();
    const ask = async () => {
      child.stdin!.write('rss\n');
      return (await next()) as { rss: number; heap: number };
    };
    const { port } = new URL(url);
    const stall = async (path: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const s = net.connect(Number(port), '127.0.0.1');
        await new Promise((r) => s.once('connect', r));
        s.write(`GET ${path}?watch=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        // never read: the kernel's buffers fill and TCP flow control stops the server's writes
        s.pause();
        sockets.push(s);
      }
    };
    await fn(url, ask, stall);
  } finally {
    for (const s of sockets) s.destroy();
    child.stdin!.write('exit\n');
    await new Promise((r) => child.once('exit', r));
  }
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

test('ten watchers that never read leave the server RSS bounded while 40 MB are written', { timeout: 240_000 }, async () => {
  await withServer(async (url, ask, stall) => {
    const path = '/api/v1/namespaces/default/secrets';
    assert.equal(await send(url, 'POST', path, { metadata: { name: 'big' }, data: { k: '' } }), 201);
    const before = await ask();
    await stall(path, watchers);
    let written = 0;
    for (let i = 0; written < writeBytes; i++) {
      const data = Buffer.alloc((objectBytes * 3) / 4, i % 251).toString('base64');
      assert.equal(await send(url, 'PUT', `${path}/big`, { metadata: { name: 'big' }, data: { k: data } }), 200);
      written += data.length;
    }
    const afterWrites = await ask();
    const growth = afterWrites.rss - before.rss;
    console.log(`watch memory: ${watchers} stalled watches, ${mib(writeBytes)} written: rss before ${mib(before.rss)}, after ${mib(afterWrites.rss)}, growth ${mib(growth)} (bound ${mib(rssGrowthBoundBytes)}), heap ${mib(afterWrites.heap)}`);
    assert.ok(growth < rssGrowthBoundBytes, `RSS grew by ${(growth / 2 ** 20).toFixed(1)} MiB with ${watchers} stalled watchers`);
    // the server still serves: a fresh watcher gets the current object
    assert.equal(await send(url, 'GET', `${path}/big`, undefined), 200);
  });
});

test('a slow reader gets every event, in order: backpressure pauses the watch, it does not drop or close it', { timeout: 120_000 }, async () => {
  await withServer(async (url) => {
    const path = '/api/v1/namespaces/slow/secrets';
    const data = Buffer.alloc(150_000, 3).toString('base64');
    const count = 80; // ~16 MB of initial state, more than loopback's socket buffers hold
    // objects go into an existing namespace, as on kube-apiserver
    assert.equal(await send(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'slow' } }), 201);
    for (let i = 0; i < count; i++) assert.equal(await send(url, 'POST', path, { metadata: { name: `s${String(i).padStart(3, '0')}` }, data: { k: data } }), 201);
    const names: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = http.get(new URL(`${path}?watch=1&timeoutSeconds=60`, url), (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const e = JSON.parse(buf.slice(0, nl));
            buf = buf.slice(nl + 1);
            names.push(e.object.metadata.name);
          }
          // read in fits and starts: the server's writes back up every few events
          if (names.length % 10 === 0) {
            res.pause();
            setTimeout(() => res.resume(), 100);
          }
          if (names.length === count) {
            req.destroy();
            resolve();
          }
        });
        res.on('end', () => reject(new Error(`the watch ended after ${names.length} events`)));
      });
      req.on('error', (e) => (names.length === count ? resolve() : reject(e)));
    });
    assert.deepEqual(names, Array.from({ length: count }, (_, i) => `s${String(i).padStart(3, '0')}`));
  });
});
