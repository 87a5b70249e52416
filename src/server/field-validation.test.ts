// fieldValidation over HTTP, with kube-apiserver's wording and order (issue 15): duplicates
// first in the order they appear, then unknown fields sorted; Strict refuses, Warn sends
// `299 - "..."` Warning headers and stores the pruned object, Ignore prunes silently; absent
// means Warn, as on kube-apiserver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from './testing/test-api-server.ts';
import http from 'node:http';

const { api } = await startTestApiServer('fv');

interface Reply { status: number; body: any; warnings: string[] }

function request(method: string, path: string, body: string, contentType = 'application/json'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method, headers: { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        // one Warning header per problem, as kube-apiserver sends them (Node would join them)
        const warnings = res.rawHeaders.filter((_, i) => i % 2 === 1 && res.rawHeaders[i - 1].toLowerCase() === 'warning');
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), warnings });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const certificates = '/apis/cert-manager.io/v1/namespaces/default/certificates';
const dupBody = (name: string) => `{"apiVersion":"cert-manager.io/v1","kind":"Certificate","metadata":{"name":"${name}","name":"${name}","colour":"red"},
  "spec":{"secretName":"s","renewbefore":"1h","secretName":"s","dnsNames":["a.example"],"issuerRef":{"name":"i"},"privateKey":{"algoritm":"ECDSA"}}}`;
const problems = ['duplicate field "metadata.name"', 'duplicate field "spec.secretName"', 'unknown field "metadata.colour"', 'unknown field "spec.privateKey.algoritm"', 'unknown field "spec.renewbefore"'];

test('Strict create: 400 with every duplicate and unknown field, nothing stored', async () => {
  const r = await request('POST', `${certificates}?fieldValidation=Strict`, dupBody('strict'));
  assert.equal(r.status, 400);
  assert.equal(r.body.reason, 'BadRequest');
  assert.equal(r.body.message, `Certificate in version "v1" cannot be handled as a Certificate: strict decoding error: ${problems.join(', ')}`);
  assert.equal((await request('GET', `${certificates}/strict`, '')).status, 404);
});

test('Warn (and no fieldValidation) stores the pruned object with kube\'s warning headers; Ignore says nothing', async () => {
  for (const [query, name] of [['?fieldValidation=Warn', 'warn'], ['', 'default']]) {
    const r = await request('POST', `${certificates}${query}`, dupBody(name));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.warnings, problems.map((p) => `299 - ${JSON.stringify(p)}`));
    assert.equal(r.body.spec.renewbefore, undefined);
    assert.equal(r.body.metadata.colour, undefined);
    assert.deepEqual(r.body.spec.privateKey ?? {}, {});
  }
  const ignored = await request('POST', `${certificates}?fieldValidation=Ignore`, dupBody('ignore'));
  assert.equal(ignored.status, 201);
  assert.deepEqual(ignored.warnings, []);
  assert.equal(ignored.body.spec.renewbefore, undefined);
});

test('Strict merge patch: duplicates of the patch, then its unknown fields; null for an unknown field is no problem', async () => {
  const r = await request('PATCH', `${certificates}/warn?fieldValidation=Strict`,
    '{"spec":{"duration":"2h","duration":"3h","renewbefore":"1h","ports":[{"a":1}],"gone":null}}', 'application/merge-patch+json');
  assert.equal(r.status, 400);
  assert.equal(r.body.message, 'strict decoding error: duplicate field "spec.duration", unknown field "spec.ports", unknown field "spec.renewbefore"');
  const ok = await request('PATCH', `${certificates}/warn?fieldValidation=Strict`, '{"spec":{"duration":"2h","gone":null}}', 'application/merge-patch+json');
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.spec.duration, '2h');
  const warned = await request('PATCH', `${certificates}/warn`, '{"spec":{"renewbefore":"1h","duration":"4h"}}', 'application/merge-patch+json');
  assert.equal(warned.status, 200);
  assert.deepEqual(warned.warnings, ['299 - "unknown field \\"spec.renewbefore\\""']);
  assert.equal(warned.body.spec.renewbefore, undefined);
  assert.equal(warned.body.spec.duration, '4h');
});

test('JSON patch: its operations are checked, and the unknown fields of its result are refused or pruned', async () => {
  const ops = '[{"op":"add","path":"/spec/renewbefore","value":"1h","foo":"bar"},{"op":"add","path":"/spec/duration","path":"/spec/duration","value":"5h"}]';
  const r = await request('PATCH', `${certificates}/warn?fieldValidation=Strict`, ops, 'application/json-patch+json');
  assert.equal(r.status, 400);
  assert.equal(r.body.message, 'strict decoding error: json patch duplicate field "[1].path", json patch unknown field "[0].foo", unknown field "spec.renewbefore"');
  const warned = await request('PATCH', `${certificates}/warn?fieldValidation=Warn`, '[{"op":"add","path":"/spec/renewbefore","value":"1h"},{"op":"replace","path":"/spec/duration","value":"6h"}]', 'application/json-patch+json');
  assert.equal(warned.status, 200, JSON.stringify(warned.body));
  assert.deepEqual(warned.warnings, ['299 - "unknown field \\"spec.renewbefore\\""']);
  assert.equal(warned.body.spec.renewbefore, undefined);
  assert.equal(warned.body.spec.duration, '6h');
});

test('a JSON patch that does not apply answers kube\'s generic 422, its reason as the one cause (what kubectl prints), and changes nothing', async () => {
  for (const [ops, reason] of [
    ['[{"op":"test","path":"/spec/duration","value":"nope"}]', 'json patch: test failed at "/spec/duration"'],
    ['[{"op":"remove","path":"/spec/nonexistent"}]', 'json patch: path "/spec/nonexistent" does not exist'],
  ] as const) {
    const r = await request('PATCH', `${certificates}/warn`, ops, 'application/json-patch+json');
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid', code: 422, details: { causes: [{ reason: 'UnexpectedServerResponse', message: reason }] },
    });
  }
  assert.equal((await request('GET', `${certificates}/warn`, '')).body.spec.duration, '6h');
});

test('server-side apply: unknown fields of the applied configuration are refused or pruned', async () => {
  const yaml = 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: applied}\nspec: {secretName: s, dnsNames: [a.example], issuerRef: {name: i}, renewbefore: 1h}\n';
  const strict = await request('PATCH', `${certificates}/applied?fieldManager=t&fieldValidation=Strict`, yaml, 'application/apply-patch+yaml');
  assert.equal(strict.status, 400);
  assert.equal(strict.body.message, 'strict decoding error: unknown field "spec.renewbefore"');
  const warned = await request('PATCH', `${certificates}/applied?fieldManager=t`, yaml, 'application/apply-patch+yaml');
  assert.equal(warned.status, 201, JSON.stringify(warned.body));
  assert.equal(warned.body.spec.renewbefore, undefined);
  assert.equal(JSON.stringify(warned.body.metadata.managedFields).includes('renewbefore'), false);
});

test('an unsupported fieldValidation is refused', async () => {
  const r = await request('POST', `${certificates}?fieldValidation=strict`, dupBody('x'));
  assert.equal(r.status, 400);
  assert.match(r.body.message, /fieldValidation: Unsupported value: "strict": supported values: "Ignore", "Strict", "Warn"/);
});

test('a warning about a field with any Unicode name goes out as an ASCII header (a bad header would be a 500)', async () => {
  const body = JSON.stringify({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'unicode' }, spec: { secretName: 's', dnsNames: ['a.example'], issuerRef: { name: 'i' }, 'ré\u{10abcd}\n': 1 } });
  const r = await request('POST', certificates, body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.warnings, ['299 - "unknown field \\"spec.r\\u00e9\\udbea\\udfcd\\n\\""']);
});
