// Namespaces as on kube-apiserver (issue 15): default, kube-system, kube-public and
// cert-manager exist from the start; an object in a namespace that does not exist is refused
// with kube's 404, by create and by a server-side apply that creates, dry run or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from './testing/test-api-server.ts';
import http from 'node:http';

const { api } = await startTestApiServer('ns');

function request(method: string, path: string, body?: string, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method, headers: body === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const issuer = (name: string) => JSON.stringify({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name }, spec: { selfSigned: {} } });
const notFound = (ns: string) => ({
  kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `namespaces "${ns}" not found`, reason: 'NotFound', code: 404,
  details: { name: ns, kind: 'namespaces' },
});

test('the built-in namespaces exist from the start', async () => {
  const list = await request('GET', '/api/v1/namespaces');
  const names = list.body.items.map((n: { metadata: { name: string } }) => n.metadata.name);
  for (const ns of ['default', 'kube-system', 'kube-public', 'cert-manager']) assert.ok(names.includes(ns), `${ns} missing from ${names}`);
  assert.equal((await request('POST', '/apis/cert-manager.io/v1/namespaces/cert-manager/issuers', issuer('a'))).status, 201);
});

test('a create in a namespace that does not exist is refused with kube\'s 404, dry run too, and the namespace is not made up', async () => {
  for (const q of ['', '?dryRun=All']) {
    const r = await request('POST', `/apis/cert-manager.io/v1/namespaces/team-a/issuers${q}`, issuer('a'));
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, notFound('team-a'));
  }
  const secret = await request('POST', '/api/v1/namespaces/team-a/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }));
  assert.deepEqual(secret.body, notFound('team-a'));
  assert.equal((await request('GET', '/api/v1/namespaces/team-a')).status, 404);
  const apply = await request('PATCH', '/apis/cert-manager.io/v1/namespaces/team-a/issuers/a?fieldManager=t', 'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: a}\nspec: {selfSigned: {}}\n', 'application/apply-patch+yaml');
  assert.deepEqual(apply.body, notFound('team-a'));
});

test('once the namespace is created, objects go in', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } }))).status, 201);
  assert.equal((await request('POST', '/apis/cert-manager.io/v1/namespaces/team-b/issuers', issuer('a'))).status, 201);
});
