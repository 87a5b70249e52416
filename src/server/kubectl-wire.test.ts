// What kubectl v1.32 needs of the API beyond JSON CRUD (issue 19): protobuf bodies for the
// built-in kinds with content negotiation, the authorization self-reviews, discovery
// categories, and dry runs that answer what a real write would store (kubectl diff).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from './testing/test-api-server.ts';
import http from 'node:http';
import { allowedReason } from './self-reviews.ts';
import { decodeObject, encodeObject, protobufMediaType } from './protobuf/codec.ts';

const { api } = await startTestApiServer('wire');

interface Reply { status: number; contentType: string; bytes: Buffer; body: any }

/** client-go's Accept for the built-in kinds */
const protobufAccept = `${protobufMediaType},application/json`;

function request(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), {
      method,
      headers: {
        ...(body !== undefined ? { 'Content-Type': typeof body === 'string' ? 'application/json' : protobufMediaType, 'Content-Length': String(Buffer.byteLength(body)) } : {}),
        ...headers,
      },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const contentType = String(res.headers['content-type'] ?? '');
        let parsed: any;
        try {
          parsed = contentType === protobufMediaType ? decodeObject(bytes) : JSON.parse(bytes.toString('utf8'));
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, contentType, bytes, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const secrets = '/api/v1/namespaces/default/secrets';

test('a Secret created in protobuf is stored and answered in protobuf when the client prefers it', async () => {
  const body = encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pb', labels: { app: 'wire' } }, stringData: { k: 'v' } })!;
  const created = await request('POST', `${secrets}?fieldManager=kubectl-create&fieldValidation=Strict`, body, { Accept: protobufAccept });
  assert.equal(created.status, 201, created.bytes.toString());
  assert.equal(created.contentType, protobufMediaType);
  assert.equal(created.body.kind, 'Secret');
  assert.deepEqual(created.body.data, { k: Buffer.from('v').toString('base64') });
  assert.equal(created.body.type, 'Opaque');
  assert.match(created.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(created.body.metadata.uid);

  const asJSON = await request('GET', `${secrets}/pb`, undefined, { Accept: 'application/json' });
  assert.equal(asJSON.contentType, 'application/json');
  assert.deepEqual(asJSON.body, created.body, 'the same object either way');
  const asProtobuf = await request('GET', `${secrets}/pb`, undefined, { Accept: protobufAccept });
  assert.equal(asProtobuf.contentType, protobufMediaType);
  assert.deepEqual(asProtobuf.body, created.body);

  const list = await request('GET', `${secrets}?labelSelector=app%3Dwire`, undefined, { Accept: protobufAccept });
  assert.equal(list.contentType, protobufMediaType);
  assert.equal(list.body.kind, 'SecretList');
  assert.deepEqual(list.body.items.map((s: any) => s.metadata.name), ['pb']);

  // PUT in protobuf too (kubectl edit, replace)
  const update = encodeObject({ ...asJSON.body, data: { k: Buffer.from('w').toString('base64') } })!;
  const put = await request('PUT', `${secrets}/pb`, update, { Accept: protobufAccept });
  assert.equal(put.status, 200, put.bytes.toString());
  assert.equal(put.body.data.k, Buffer.from('w').toString('base64'));
});

test('a Namespace created in protobuf is Active; custom resources stay JSON whatever Accept says', async () => {
  const ns = await request('POST', '/api/v1/namespaces', encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } })!, { Accept: protobufAccept });
  assert.equal(ns.status, 201, ns.bytes.toString());
  assert.equal(ns.body.status.phase, 'Active');
  const certs = await request('GET', '/apis/cert-manager.io/v1/certificates', undefined, { Accept: protobufAccept });
  assert.equal(certs.status, 200);
  assert.equal(certs.contentType, 'application/json');
  assert.equal(certs.body.kind, 'CertificateList');
});

test('a protobuf body that is not a known object is a 400 naming the problem, and nothing is stored', async () => {
  const notProtobuf = await request('POST', secrets, Buffer.from('{"metadata":{"name":"x"}}'));
  assert.equal(notProtobuf.status, 400);
  assert.match(notProtobuf.body.message, /does not start with "k8s\\x00"/);
  const truncated = encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cut' } })!;
  const cut = await request('POST', secrets, truncated.subarray(0, truncated.length - 3));
  assert.equal(cut.status, 400);
  const wrongKind = await request('POST', secrets, encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nope' } })!);
  assert.equal(wrongKind.status, 400);
  assert.match(wrongKind.body.message, /kind in the data \(Namespace\) does not match/);
  assert.equal((await request('GET', `${secrets}/cut`)).status, 404);
});

test('SelfSubjectAccessReview: the token may do everything, in JSON and in protobuf', async () => {
  const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'default', verb: 'create', group: 'cert-manager.io', resource: 'certificates' } } };
  const json = await request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', JSON.stringify(review));
  assert.equal(json.status, 201);
  assert.deepEqual(json.body.status, { allowed: true, reason: allowedReason });
  assert.deepEqual(json.body.spec, review.spec);
  const pb = await request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', encodeObject(review)!, { Accept: protobufAccept });
  assert.equal(pb.status, 201);
  assert.equal(pb.contentType, protobufMediaType);
  assert.equal(pb.body.status.allowed, true);
  assert.match(pb.body.status.reason, /may do everything/);

  const both = await request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', JSON.stringify({ ...review, spec: { ...review.spec, nonResourceAttributes: { path: '/', verb: 'get' } } }));
  assert.equal(both.status, 422);
  assert.match(both.body.message, /exactly one of nonResourceAttributes or resourceAttributes/);
  assert.equal((await request('GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).status, 405);
  assert.equal((await request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', '{}')).status, 404);
});

test('SelfSubjectReview (kubectl auth whoami): the token\'s user, in JSON and in protobuf, listed in discovery', async () => {
  const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
  const user = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const json = await request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', JSON.stringify(review));
  assert.equal(json.status, 201, JSON.stringify(json.body));
  assert.deepEqual(json.body, { ...review, metadata: { creationTimestamp: null }, status: { userInfo: user } });
  const pb = await request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', encodeObject(review)!, { Accept: protobufAccept });
  assert.equal(pb.status, 201);
  assert.equal(pb.contentType, protobufMediaType);
  assert.deepEqual(pb.body.status, { userInfo: user });
  assert.equal((await request('GET', '/apis/authentication.k8s.io/v1/selfsubjectreviews')).status, 405);
  assert.equal((await request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', '{}')).status, 404);
  const wrong = await request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', JSON.stringify({ ...review, kind: 'TokenReview' }));
  assert.equal(wrong.status, 400);

  assert.ok((await request('GET', '/apis')).body.groups.some((g: { name: string }) => g.name === 'authentication.k8s.io'));
  const authn = (await request('GET', '/apis/authentication.k8s.io/v1')).body.resources.map((r: { name: string; verbs: string[] }) => `${r.name}:${r.verbs}`);
  assert.deepEqual(authn, ['selfsubjectreviews:create']);
});

test('SelfSubjectRulesReview lists every verb on every resource', async () => {
  const r = await request('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } }));
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.status.resourceRules, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  assert.deepEqual(r.body.status.nonResourceRules, [{ verbs: ['*'], nonResourceURLs: ['*'] }]);
});

test('discovery: the authorization group, cert-manager\'s categories, and `all` on pods and services', async () => {
  const groups = (await request('GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
  assert.ok(groups.includes('authorization.k8s.io'));
  const authz = (await request('GET', '/apis/authorization.k8s.io/v1')).body.resources.map((r: { name: string; verbs: string[] }) => `${r.name}:${r.verbs}`);
  assert.deepEqual(authz, ['selfsubjectaccessreviews:create', 'selfsubjectrulesreviews:create']);
  const categories = async (path: string) => Object.fromEntries((await request('GET', path)).body.resources
    .filter((r: { name: string }) => !r.name.includes('/')).map((r: { name: string; categories?: string[] }) => [r.name, r.categories ?? []]));
  const cm = await categories('/apis/cert-manager.io/v1');
  for (const k of ['certificates', 'certificaterequests', 'issuers', 'clusterissuers']) assert.deepEqual(cm[k], ['cert-manager'], k);
  const acme = await categories('/apis/acme.cert-manager.io/v1');
  for (const k of ['orders', 'challenges']) assert.deepEqual(acme[k], ['cert-manager', 'cert-manager-acme'], k);
  const core = await categories('/api/v1');
  assert.deepEqual(core.pods, ['all']);
  assert.deepEqual(core.services, ['all']);
  assert.deepEqual(core.secrets, []);
});

test('dry-run writes answer what a real write stores: a Secret\'s stringData folded into data (kubectl diff)', async () => {
  const created = await request('POST', secrets, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sd' }, stringData: { password: 'changeit' } }));
  assert.equal(created.status, 201);
  const dry = await request('PATCH', `${secrets}/sd?dryRun=All&fieldManager=kubectl-client-side-apply`,
    JSON.stringify({ metadata: { resourceVersion: created.body.metadata.resourceVersion }, stringData: { password: 'changeit' } }),
    { 'Content-Type': 'application/strategic-merge-patch+json' });
  assert.equal(dry.status, 200);
  assert.deepEqual(dry.body, created.body, 'nothing would change');
  const dryCreate = await request('POST', `${secrets}?dryRun=All`, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sd2' }, stringData: { a: 'b' } }));
  assert.equal(dryCreate.status, 201);
  assert.deepEqual(dryCreate.body.data, { a: Buffer.from('b').toString('base64') });
  assert.equal(dryCreate.body.stringData, undefined);
  assert.equal((await request('GET', `${secrets}/sd2`)).status, 404, 'a dry run stores nothing');
  // certsmith's kinds: admission runs, then the store's dry run (generation bumped as a write would)
  const cert = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c' }, spec: { secretName: 'c-tls', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' } } };
  const c = await request('POST', '/apis/cert-manager.io/v1/namespaces/default/certificates', JSON.stringify(cert));
  assert.equal(c.status, 201, JSON.stringify(c.body));
  const cd = await request('PATCH', '/apis/cert-manager.io/v1/namespaces/default/certificates/c?dryRun=All', JSON.stringify({ spec: { secretName: 'other' } }), { 'Content-Type': 'application/merge-patch+json' });
  assert.equal(cd.status, 200);
  assert.equal(cd.body.spec.secretName, 'other');
  assert.equal(cd.body.metadata.generation, 2);
  const after = await request('GET', '/apis/cert-manager.io/v1/namespaces/default/certificates/c');
  assert.equal(after.body.spec.secretName, 'c-tls');
  assert.equal(after.body.metadata.resourceVersion, c.body.metadata.resourceVersion);
});
