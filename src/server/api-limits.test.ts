// The API boundary refuses what kube-apiserver refuses, with kube's codes and a message that
// names the problem: malformed bodies and paths, non-string metadata maps, lone surrogates,
// oversized objects and annotations, non-base64 Secret data, malformed DeleteOptions, bad watch
// parameters, and a full disk. Each test here failed on 6d0b77e (issue 12, findings 3-4, 8-10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from './testing/test-api-server.ts';
import http from 'node:http';

const { api, raw } = await startTestApiServer('limits');

interface Reply { status: number; body: any; text: string }

function request(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), {
      // Content-Length always: Node sends a DELETE body unframed otherwise
      method, headers: { ...(body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: any;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const secrets = '/api/v1/namespaces/default/secrets';
const certificates = '/apis/cert-manager.io/v1/namespaces/default/certificates';

function secret(name: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, ...meta }, ...extra });
}

function certificate(name: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) {
  return JSON.stringify({
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, ...meta },
    spec: { secretName: `${name}-tls`, dnsNames: ['a.example.com'], issuerRef: { name: 'ca' }, ...spec },
  });
}

async function assertAbsent(path: string) {
  assert.equal((await request('GET', path)).status, 404, `${path} must not have been stored`);
}

test('finding 4: a non-string annotation or label value is a decode error (400), for every kind, and nothing is stored', async () => {
  const bad: unknown[] = [123, true, { a: 'b' }, ['x']];
  for (const [i, v] of bad.entries()) {
    const r = await request('POST', secrets, secret(`ann-${i}`, {}, { annotations: { foo: v } }));
    assert.equal(r.status, 400, `annotation ${JSON.stringify(v)}: ${r.text}`);
    assert.equal(r.body.reason, 'BadRequest');
    assert.match(r.body.message, /cannot unmarshal .* into Go struct field ObjectMeta\.metadata\.annotations of type string/);
    await assertAbsent(`${secrets}/ann-${i}`);
    const c = await request('POST', certificates, certificate(`ann-${i}`, {}, { annotations: { 'cert-manager.io/issue-temporary-certificate': v } }));
    assert.equal(c.status, 400, c.text);
    await assertAbsent(`${certificates}/ann-${i}`);
    const l = await request('POST', secrets, secret(`lab-${i}`, {}, { labels: { foo: v } }));
    assert.equal(l.status, 400, l.text);
    assert.match(l.body.message, /metadata\.labels of type string/);
  }
  // Go's decoder turns null into the zero value: kube stores ""
  const n = await request('POST', secrets, secret('ann-null', {}, { annotations: { foo: null } }));
  assert.equal(n.status, 201, n.text);
  assert.deepEqual(n.body.metadata.annotations, { foo: '' });
});

test('finding 4: a patch that leaves a non-string annotation is refused and changes nothing', async () => {
  assert.equal((await request('POST', secrets, secret('patched', {}, { annotations: { keep: 'me' } }))).status, 201);
  for (const [ct, body] of [
    ['application/merge-patch+json', { metadata: { annotations: { foo: 1 } } }],
    ['application/strategic-merge-patch+json', { metadata: { annotations: { foo: { deep: true } } } }],
    ['application/json-patch+json', [{ op: 'add', path: '/metadata/annotations/foo', value: false }]],
  ] as const) {
    const r = await request('PATCH', `${secrets}/patched`, JSON.stringify(body), { 'Content-Type': ct });
    assert.ok(r.status === 400 || r.status === 422, `${ct}: ${r.status} ${r.text}`);
  }
  const got = await request('GET', `${secrets}/patched`);
  assert.deepEqual(got.body.metadata.annotations, { keep: 'me' });
});

test('well-formed Unicode: a lone surrogate anywhere in a body is refused, naming the field', async () => {
  const cases: [string, string, RegExp][] = [
    [secrets, secret('sur-1', { data: { ['k\ud800']: 'YQ==' } }), /data/],
    [secrets, secret('sur-2', {}, { annotations: { a: 'x\udc00y' } }), /metadata\.annotations\.a/],
    [certificates, certificate('sur-3', { commonName: 'a\ud800' }), /spec\.commonName/],
    [certificates, certificate('sur-4', { dnsNames: ['ok.example.com', '\ud800.example.com'] }), /spec\.dnsNames\[1\]/],
    [certificates, certificate('sur-5', { subject: { organizations: ['\udbff'] } }), /spec\.subject\.organizations\[0\]/],
  ];
  for (const [path, body, field] of cases) {
    const r = await request('POST', path, body);
    assert.ok(r.status === 400 || r.status === 422, `${body}: ${r.status} ${r.text}`);
    assert.match(r.body.message, /surrogate|UTF-8|Unicode/i);
    assert.match(r.body.message, field);
    await assertAbsent(`${path}/${JSON.parse(body).metadata.name}`);
  }
  // bytes that are not UTF-8 at all
  const bytes = Buffer.concat([Buffer.from('{"metadata":{"name":"sur-6","annotations":{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}}')]);
  const r = await request('POST', secrets, bytes);
  assert.equal(r.status, 400, r.text);
  await assertAbsent(`${secrets}/sur-6`);
  // a merge patch that would store one
  assert.equal((await request('POST', secrets, secret('sur-7'))).status, 201);
  const p = await request('PATCH', `${secrets}/sur-7`, JSON.stringify({ stringData: { x: '\ud800' } }), { 'Content-Type': 'application/merge-patch+json' });
  assert.ok(p.status === 400 || p.status === 422, p.text);
  assert.equal((await request('GET', `${secrets}/sur-7`)).body.data, undefined);
});

test('object size: 1.5 MiB per object (413), 256 KiB of annotations (422); 180,000 dnsNames never reach CSR generation', async () => {
  // the most a Secret may hold (1 MiB of data, 1.33 MiB encoded; more is a 422, as kube's
  // ValidateSecret) and 250 KB of annotations: ~1.6 MiB stored, under the 3 MiB body limit
  const big = Buffer.alloc(1024 * 1024).toString('base64');
  const r = await request('POST', secrets, secret('big', { data: { k: big } }, { annotations: { a: 'x'.repeat(250_000) } }));
  assert.equal(r.status, 413, r.text.slice(0, 300));
  assert.equal(r.body.reason, 'RequestEntityTooLarge');
  assert.match(r.body.message, /limit is 1572864/);
  await assertAbsent(`${secrets}/big`);

  const dnsNames = Array.from({ length: 180_000 }, (_, i) => `n${i}.io`);
  const c = await request('POST', certificates, certificate('many-names', { dnsNames }));
  assert.equal(c.status, 413, c.text.slice(0, 300));
  await assertAbsent(`${certificates}/many-names`);

  const annotations = { a: 'x'.repeat(200_000), b: 'y'.repeat(70_000) };
  const a = await request('POST', secrets, secret('many-annotations', {}, { annotations }));
  assert.equal(a.status, 422, a.text.slice(0, 300));
  assert.match(a.body.message, /metadata\.annotations: Too long: must have at most 262144 bytes/);
  await assertAbsent(`${secrets}/many-annotations`);
  // and a patch cannot grow them past the limit either
  assert.equal((await request('POST', secrets, secret('grow', {}, { annotations: { a: 'x'.repeat(200_000) } }))).status, 201);
  const p = await request('PATCH', `${secrets}/grow`, JSON.stringify({ metadata: { annotations: { b: 'y'.repeat(70_000) } } }), { 'Content-Type': 'application/merge-patch+json' });
  assert.equal(p.status, 422, p.text.slice(0, 300));
});

test('finding 10: Secret data must be base64 (400, as kube decodes it)', async () => {
  const r = await request('POST', secrets, secret('not-b64', { data: { k: 'not base64!' } }));
  assert.equal(r.status, 400, r.text);
  assert.match(r.body.message, /illegal base64 data at input byte 3/);
  await assertAbsent(`${secrets}/not-b64`);
  const n = await request('POST', secrets, secret('data-num', { data: { k: 5 } }));
  assert.equal(n.status, 400, n.text);
  const s = await request('POST', secrets, secret('sd-num', { stringData: { k: 5 } }));
  assert.equal(s.status, 400, s.text);
  assert.equal((await request('POST', secrets, secret('b64', { data: { k: 'aGk=', e: '' } }))).status, 201);
});

test('finding 10: a DELETE with malformed DeleteOptions answers 400 and deletes nothing', async () => {
  assert.equal((await request('POST', secrets, secret('keep'))).status, 201);
  const bodies = [
    { preconditions: 'x' }, { preconditions: [] }, { preconditions: { uid: 5 } }, { preconditions: { resourceVersion: {} } },
    { gracePeriodSeconds: 'soon' }, { propagationPolicy: 7 }, { dryRun: 'All' }, { orphanDependents: 'yes' }, [], 'x', 3,
  ];
  for (const b of bodies) {
    const r = await request('DELETE', `${secrets}/keep`, JSON.stringify(b));
    assert.equal(r.status, 400, `${JSON.stringify(b)}: ${r.text}`);
    assert.equal((await request('GET', `${secrets}/keep`)).status, 200, `${JSON.stringify(b)} deleted the object`);
  }
  const v = await request('DELETE', `${secrets}/keep`, JSON.stringify({ dryRun: ['Sometimes'] }));
  assert.equal(v.status, 422, v.text);
  const q = await request('DELETE', `${secrets}/keep?gracePeriodSeconds=abc`);
  assert.equal(q.status, 400, q.text);
  assert.equal((await request('GET', `${secrets}/keep`)).status, 200);
  // a well-formed precondition that does not match is still a 409
  const c = await request('DELETE', `${secrets}/keep`, JSON.stringify({ preconditions: { uid: 'other' } }));
  assert.equal(c.status, 409, c.text);
  const ok = await request('DELETE', `${secrets}/keep`, JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: null } }));
  assert.equal(ok.status, 200, ok.text);
});

test('finding 8: deep nesting is a 400, not a stack overflow', async () => {
  for (const depth of [250, 5_000, 100_000]) {
    const nested = '['.repeat(depth) + ']'.repeat(depth);
    const r = await request('POST', secrets, `{"metadata":{"name":"deep-${depth}"},"data":{},"x":${nested}}`);
    assert.equal(r.status, 400, `${depth}: ${r.text.slice(0, 200)}`);
    assert.match(r.body.message, /nest/i);
    const p = await request('PATCH', `${secrets}/patched`, `{"x":${nested}}`, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(p.status, 400, p.text.slice(0, 200));
    const y = await request('PATCH', `${secrets}/patched?fieldManager=t`, `x: ${nested}`, { 'Content-Type': 'application/apply-patch+yaml' });
    assert.equal(y.status, 400, y.text.slice(0, 200));
  }
  // what any real object needs still works
  const ok = '{"a":'.repeat(40) + '1' + '}'.repeat(40);
  const r = await request('PATCH', `${secrets}/patched`, JSON.stringify({ metadata: { annotations: { nested: ok } } }), { 'Content-Type': 'application/merge-patch+json' });
  assert.equal(r.status, 200, r.text);
});

test('finding 8: malformed percent-encoding in a path is a 400', async () => {
  for (const path of [`${secrets}/%E0%A4%A`, `${secrets}/%`, '/api/v1/namespaces/%zz/secrets', `${secrets}/a%00b`]) {
    const r = await request('GET', path);
    assert.ok(r.status === 400 || r.status === 404, `${path}: ${r.status} ${r.text}`);
    if (path.endsWith('%A') || path.endsWith('/%') || path.includes('%zz')) assert.equal(r.status, 400, path);
  }
});

test('a request path that is not a URL path ("/\\host...", found by api-fuzz) is a 400, not a 500', async () => {
  const { port } = new URL(api.url);
  const status = await new Promise<number>((resolve, reject) => {
    // sent as is: new URL() on the client side would read it as a host, as the server once did
    const req = http.request({ host: '127.0.0.1', port, path: '/\\Le~MuD^_', method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(status, 400);
});

function watchFor(path: string, ms: number): Promise<{ status: number; closedEarly: boolean; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), (res) => {
      let text = '';
      const timer = setTimeout(() => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, closedEarly: false, text });
      }, ms);
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, closedEarly: true, text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('finding 9: watch timeoutSeconds is clamped when huge and refused when not an integer', async () => {
  for (const t of ['99999999999', '2147484', '0']) {
    const w = await watchFor(`${secrets}?watch=1&timeoutSeconds=${t}`, 400);
    assert.equal(w.status, 200, `${t}: ${w.text}`);
    assert.equal(w.closedEarly, false, `timeoutSeconds=${t} closed the watch at once`);
  }
  for (const t of ['abc', '1.5', '-5', '1e300', '']) {
    const w = await watchFor(`${secrets}?watch=1&timeoutSeconds=${t}`, 400);
    if (t === '') {
      assert.equal(w.closedEarly, false);
      continue;
    }
    assert.equal(w.status, 400, `timeoutSeconds=${t}: ${w.text}`);
  }
});

test('finding 9: a resourceVersion from the future is "Too large resource version" (504), for watch and list', async () => {
  const list = await request('GET', secrets);
  const current = Number(list.body.metadata.resourceVersion);
  const future = current + 1000;
  const w = await watchFor(`${secrets}?watch=1&resourceVersion=${future}`, 3000);
  assert.equal(w.status, 504, w.text);
  assert.equal(w.closedEarly, true);
  const body = JSON.parse(w.text);
  assert.equal(body.reason, 'Timeout');
  assert.match(body.message, new RegExp(`Too large resource version: ${future}, current: \\d+`));
  assert.equal(body.details.causes[0].reason, 'ResourceVersionTooLarge');
  assert.equal(body.details.retryAfterSeconds, 1);
  const l = await request('GET', `${secrets}?resourceVersion=${future}`);
  assert.equal(l.status, 504, l.text);
  assert.equal(l.body.details.causes[0].reason, 'ResourceVersionTooLarge');
  const bad = await request('GET', `${secrets}?watch=1&resourceVersion=abc`);
  assert.equal(bad.status, 400, bad.text);
});

test('finding 8: a full disk answers 507 naming it, /readyz fails while writes fail, and both recover', async () => {
  const db = (raw as unknown as { db: { pragma(s: string, o?: object): unknown } }).db;
  const pages = Number(db.pragma('page_count', { simple: true }));
  db.pragma(`max_page_count = ${pages + 1}`);
  let full: Reply | undefined;
  for (let i = 0; i < 50 && !full; i++) {
    const r = await request('POST', secrets, secret(`fill-${i}`, { data: { k: Buffer.alloc(30_000, i).toString('base64') } }));
    if (r.status !== 201) full = r;
  }
  assert.ok(full, 'the database never filled up');
  assert.equal(full.status, 507, full.text);
  assert.match(full.body.message, /disk is full|SQLITE_FULL|insufficient storage/i);
  const ready = await request('GET', '/readyz');
  assert.equal(ready.status, 503, ready.text);
  assert.match(ready.text, /storage|disk/i);
  // reads still work
  assert.equal((await request('GET', `${secrets}/patched`)).status, 200);
  db.pragma('max_page_count = 1073741823');
  const again = await request('GET', '/readyz');
  assert.equal(again.status, 200, again.text);
  const w = await request('POST', secrets, secret('after-full'));
  assert.equal(w.status, 201, w.text);
  // writes acknowledged before and after are intact, and revisions are not reused
  const l = await request('GET', secrets);
  const rvs = l.body.items.map((o: any) => o.metadata.resourceVersion);
  assert.equal(new Set(rvs).size, rvs.length);
});

test('HttpStore clients see the same reasons as in-process callers: 413, 504 with retryAfterSeconds', async () => {
  const { HttpStore } = await import('../store/http/http-store.ts');
  const { SecretType } = await import('../api/resources.ts');
  const client = new HttpStore({ server: api.url, qps: 0 });
  try {
    const big = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'client-big', namespace: 'default', annotations: { a: 'x'.repeat(250_000) } }, data: { k: Buffer.alloc(1024 * 1024).toString('base64') } };
    await assert.rejects(client.create(SecretType, big), (e: any) => e.code === 413 && e.reason === 'RequestEntityTooLarge');
    const future = Number((await client.list(SecretType)).resourceVersion) + 100;
    const err = await new Promise<any>((resolve) => {
      const w = client.watch(SecretType, { resourceVersion: String(future) }, () => {}, (e) => {
        w.stop();
        resolve(e);
      });
    });
    assert.equal(err.code, 504);
    assert.equal(err.reason, 'Timeout');
    assert.equal(err.retryAfterSeconds, 1);
  } finally {
    await client.close();
  }
});

/** A request sent with its path exactly as written (new URL() would remove dot segments on this side). */
function rawRequest(method: string, path: string): Promise<Reply> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: (() => { try { return JSON.parse(text); } catch { return undefined; } })(), text }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a "." or ".." path segment, plain or percent-encoded, is a 400 that touches nothing; namespaced kinds have no cluster-wide delete (one DELETE /api/v1/namespaces/../secrets removed every Secret)', async () => {
  assert.equal((await request('POST', secrets, secret('dot-keep'))).status, 201);
  const paths: [string, string][] = [
    ['DELETE', '/api/v1/namespaces/../secrets'],
    ['DELETE', '/api/v1/namespaces/%2e%2e/secrets'],
    ['DELETE', `${secrets}/%2e%2e`],
    ['DELETE', `${secrets}/dot-keep/..`],
    ['GET', '/api/v1/namespaces/%2E%2E/secrets'],
    ['GET', `${secrets}/.`],
  ];
  for (const [method, path] of paths) {
    const r = await rawRequest(method, path);
    assert.equal(r.status, 400, `${method} ${path}: ${r.status} ${r.text}`);
    assert.match(r.body?.message ?? '', /may not contain a "\.\.?" segment/, path);
  }
  assert.equal((await request('GET', `${secrets}/dot-keep`)).status, 200, 'nothing was deleted');
  assert.equal((await request('GET', '/api/v1/namespaces/default')).status, 200);
  const all = await request('DELETE', '/api/v1/secrets');
  assert.equal(all.status, 405, all.text);
  assert.equal((await request('GET', `${secrets}/dot-keep`)).status, 200);
});
