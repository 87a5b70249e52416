// The dashboard's listener: loopback addresses only, a Host header naming that address (DNS
// rebinding), read-only, and pages that may load nothing from elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { checkLoopback, DashboardAddressError, serveDashboard } from './http-server.ts';
import type { Changes, LiveView, Snapshot, StreamMessage } from './live-view.ts';
import { silentLogger } from '../../runtime/logger.ts';

const snapshot: Snapshot = { version: 1, generatedAt: '2026-03-01T10:00:00.000Z', upstream: { reachable: true }, certificates: [] };
const view = { snapshot: async () => snapshot, subscribe: () => () => {}, certificate: async () => undefined } as unknown as LiveView;

function request(port: number, path: string, opts: { method?: string; host?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: { host: opts.host ?? `127.0.0.1:${port}` }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('only loopback addresses are accepted, with a reason naming the address', () => {
  for (const ok of ['127.0.0.1', '127.0.0.53', '::1', 'localhost']) checkLoopback(ok);
  for (const bad of ['0.0.0.0', '::', '192.168.1.5', 'example.test']) {
    assert.throws(() => checkLoopback(bad), (e: Error) => e instanceof DashboardAddressError && e.message.includes(`"${bad}" is not a loopback address`));
  }
});

test('the listener serves the page and its JSON to its own address only, and nothing but reads', async () => {
  const server = await serveDashboard(view, { host: '127.0.0.1', port: 0, logger: silentLogger });
  try {
    const page = await request(server.port, '/');
    assert.equal(page.status, 200);
    assert.match(page.body, /<script type="module" src="\/assets\/app.js"><\/script>/);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
    const list = await request(server.port, '/api/certificates', { host: `localhost:${server.port}` });
    assert.deepEqual(JSON.parse(list.body), snapshot);
    // a page on another origin resolving its own name to 127.0.0.1 sends its own Host
    assert.equal((await request(server.port, '/api/certificates', { host: `attacker.example:${server.port}` })).status, 403);
    assert.equal((await request(server.port, '/api/certificates', { host: '127.0.0.1:1' })).status, 403);
    assert.equal((await request(server.port, '/api/certificates', { method: 'POST' })).status, 405);
    assert.equal((await request(server.port, '/api/certificates/default/missing')).status, 404);
    assert.equal((await request(server.port, '/assets/../../package.json')).status, 404);
  } finally {
    await server.close();
  }
});

test('a malformed request path is a 400, never an exception that ends the process (any web page can make a browser send one)', async () => {
  const server = await serveDashboard(view, { host: '127.0.0.1', port: 0, logger: silentLogger });
  try {
    for (const path of ['/api/certificates/%/x', '/api/certificates/default/%E0%A4%A', '//[', '/api/certificates/%ZZ/%']) {
      const r = await request(server.port, path);
      assert.equal(r.status, 400, `${path}: ${r.body}`);
      assert.match(r.body, /malformed/);
    }
    assert.equal((await request(server.port, '/api/certificates')).status, 200, 'still serving');
  } finally {
    await server.close();
  }
});

test('the event stream carries the whole list, then change lists, each as its own event type', async () => {
  const changes: Changes = { from: 1, version: 2, generatedAt: '2026-03-01T10:00:01.000Z', upstream: { reachable: true }, upserted: [], removed: [{ namespace: 'default', name: 'gone' }] };
  const streaming = {
    ...view,
    subscribe(fn: (m: StreamMessage) => void) {
      fn({ event: 'snapshot', data: snapshot });
      setTimeout(() => fn({ event: 'changes', data: changes }), 20);
      return () => {};
    },
  } as unknown as LiveView;
  const server = await serveDashboard(streaming, { host: '127.0.0.1', port: 0, logger: silentLogger });
  try {
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: server.port, path: '/api/stream', headers: { host: `127.0.0.1:${server.port}` }, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (text.includes('event: changes')) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on('error', reject);
    });
    const events = body.split('\n\n').filter((e) => e.startsWith('event: ')).map((e) => {
      const [type, data] = e.split('\n');
      return [type.slice('event: '.length), JSON.parse(data.slice('data: '.length)) as unknown];
    });
    assert.deepEqual(events, [['snapshot', snapshot], ['changes', changes]]);
  } finally {
    await server.close();
  }
});

test('a page that stops reading is dropped once its backlog passes the limit, and open streams are capped (1,000 unread streams ended the server out of memory)', async () => {
  const pushes = new Set<(m: StreamMessage) => void>();
  let unsubscribed = 0;
  const streaming = {
    ...view,
    subscribe(fn: (m: StreamMessage) => void) {
      pushes.add(fn);
      fn({ event: 'snapshot', data: snapshot });
      return () => {
        unsubscribed++;
        pushes.delete(fn);
      };
    },
  } as unknown as LiveView;
  const server = await serveDashboard(streaming, { host: '127.0.0.1', port: 0, logger: silentLogger, maxStreams: 3, maxStreamBacklogBytes: 256 * 1024 });
  const sockets: net.Socket[] = [];
  try {
    // three pages that never read
    for (let i = 0; i < 3; i++) {
      const s = net.connect(server.port, '127.0.0.1');
      s.pause();
      s.write(`GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
      sockets.push(s);
    }
    const deadline = Date.now() + 5000;
    while (pushes.size < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(pushes.size, 3);
    // a fourth is refused while three are open
    const fourth = await request(server.port, '/api/stream');
    assert.equal(fourth.status, 503);
    assert.match(fourth.body, /open dashboard streams/);

    const big: Changes = { from: 1, version: 2, generatedAt: snapshot.generatedAt, upstream: { reachable: true }, upserted: [], removed: Array.from({ length: 2000 }, (_, i) => ({ namespace: 'default', name: `certificate-number-${i}` })) };
    for (let i = 0; i < 200 && pushes.size > 0; i++) {
      for (const push of [...pushes]) push({ event: 'changes', data: { ...big, version: i + 2 } });
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(pushes.size, 0, 'every unread stream was dropped');
    assert.equal(unsubscribed, 3);
    // and a new page is served again
    const again = net.connect(server.port, '127.0.0.1');
    sockets.push(again);
    again.write(`GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
    const first = await new Promise<string>((resolve) => again.once('data', (d: Buffer) => resolve(d.toString())));
    assert.match(first, /^HTTP\/1\.1 200/);
  } finally {
    for (const s of sockets) s.destroy();
    await server.close();
  }
});
