// Lists are written an item at a time from pages of the store (api/handlers/read.ts): what a
// client reads must be what one JSON.stringify of the whole list gave, with limit and continue
// as before, across pages of the store of every size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestApiServer, requestJSON } from './testing/test-api-server.ts';
import { decodeObject } from './protobuf/codec.ts';

const { api } = await startTestApiServer('list-stream');
const path = '/api/v1/namespaces/default/secrets';
const name = (i: number) => `s${String(i).padStart(2, '0')}`;
const count = 30;
// large and small Secrets mixed, so the pages the server reads differ in size
for (let i = 0; i < count; i++) {
  const data = Buffer.alloc(i % 3 === 0 ? 900_000 : 200, i).toString('base64');
  assert.equal((await requestJSON(api, 'POST', path, { metadata: { name: name(i) }, data: { k: data } })).status, 201);
}

function get(target: string, accept = 'application/json'): Promise<{ status: number; type: string; text: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(new URL(target, api.url), { headers: { accept } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text: body.toString('utf8'), body });
      });
    }).on('error', reject);
  });
}

test('a list is the text JSON.stringify gives of it, every item in order', async () => {
  const { status, text } = await get(path);
  assert.equal(status, 200);
  const list = JSON.parse(text);
  assert.equal(text, JSON.stringify(list));
  assert.deepEqual(Object.keys(list), ['kind', 'apiVersion', 'metadata', 'items']);
  assert.deepEqual(Object.keys(list.metadata), ['resourceVersion']);
  assert.deepEqual(list.items.map((s: { metadata: { name: string } }) => s.metadata.name), Array.from({ length: count }, (_, i) => name(i)));
});

test('limit and continue page through the list as before, with continue only while more remain', async () => {
  const seen: string[] = [];
  let next = '';
  let pages = 0;
  do {
    const { text } = await get(`${path}?limit=7${next ? `&continue=${encodeURIComponent(next)}` : ''}`);
    const list = JSON.parse(text);
    assert.equal(text, JSON.stringify(list));
    assert.ok(list.items.length <= 7);
    seen.push(...list.items.map((s: { metadata: { name: string } }) => s.metadata.name));
    next = list.metadata.continue ?? '';
    pages++;
  } while (next);
  assert.equal(pages, 5);
  assert.deepEqual(seen, Array.from({ length: count }, (_, i) => name(i)));
  // a limit the list does not reach: no continue
  const all = JSON.parse((await get(`${path}?limit=${count}`)).text);
  assert.equal(all.items.length, count);
  assert.equal(all.metadata.continue, undefined);
});

test('a Table has a row per object, and protobuf is still served', async () => {
  const table = await get(path, 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json');
  const t = JSON.parse(table.text);
  assert.equal(t.kind, 'Table');
  assert.equal(table.text, JSON.stringify(t));
  assert.deepEqual(t.rows.map((r: { cells: unknown[] }) => r.cells[0]), Array.from({ length: count }, (_, i) => name(i)));
  const proto = await get(`${path}?limit=3`, 'application/vnd.kubernetes.protobuf,application/json');
  assert.equal(proto.status, 200);
  assert.equal(proto.type, 'application/vnd.kubernetes.protobuf');
  const names = (b: Buffer) => (decodeObject(b).items as { metadata: { name: string } }[]).map((o) => o.metadata.name);
  assert.deepEqual(names(proto.body), [name(0), name(1), name(2)]);
  assert.ok((decodeObject(proto.body).metadata as { continue?: string }).continue, 'more remain: a continue token');
  const whole = await get(path, 'application/vnd.kubernetes.protobuf,application/json');
  assert.deepEqual(names(whole.body), Array.from({ length: count }, (_, i) => name(i)));
});
