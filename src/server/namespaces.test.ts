// Namespaces as on kube-apiserver (issue 15): default, kube-system, kube-public and
// cert-manager exist from the start; an object in a namespace that does not exist is refused
// with kube's 404, by create and by a server-side apply that creates, dry run or not. And the
// namespace lifecycle: kube's three cannot be deleted, every namespace carries its name label,
// and a deleted one stays Terminating while finalizers hold content in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { NamespaceType } from '../api/resources.ts';
import { startApiServer } from './api-server.ts';
import { waitFor } from '../../test/e2e/harness.ts';

const { api } = await startTestApiServer('ns');

const request = (method: string, path: string, body?: string, contentType?: string) => requestJSON(api, method, path, body, contentType);


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

// NamespaceLifecycle's immortal namespaces (plugin/pkg/admission/namespace/lifecycle): kube's
// own three cannot be deleted, dry run or not, and what is in them stays.
test('default, kube-system and kube-public cannot be deleted, with kube\'s 403', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces/default/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keep' } }))).status, 201);
  for (const ns of ['default', 'kube-system', 'kube-public']) {
    for (const q of ['', '?dryRun=All']) {
      const r = await request('DELETE', `/api/v1/namespaces/${ns}${q}`);
      assert.equal(r.status, 403, `${ns}${q}`);
      assert.deepEqual(r.body, {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `namespaces "${ns}" is forbidden: this namespace may not be deleted`,
        reason: 'Forbidden', details: { name: ns, kind: 'namespaces' }, code: 403,
      });
    }
    assert.equal((await request('GET', `/api/v1/namespaces/${ns}`)).body.status.phase, 'Active');
  }
  assert.equal((await request('GET', '/api/v1/namespaces/default/secrets/keep')).status, 200);
});

test('every namespace carries kubernetes.io/metadata.name, which follows its name, and spec.finalizers [kubernetes]', async () => {
  const created = await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'labelled', labels: { team: 'a', 'kubernetes.io/metadata.name': 'other' } }, spec: { finalizers: ['example.com/x'] } }));
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.metadata.labels, { team: 'a', 'kubernetes.io/metadata.name': 'labelled' });
  assert.deepEqual(created.body.spec, { finalizers: ['example.com/x', 'kubernetes'] });
  const patched = await request('PATCH', '/api/v1/namespaces/labelled', JSON.stringify({ metadata: { labels: { 'kubernetes.io/metadata.name': 'other' } }, spec: { finalizers: [] } }), 'application/merge-patch+json');
  assert.equal(patched.status, 200);
  assert.equal(patched.body.metadata.labels['kubernetes.io/metadata.name'], 'labelled');
  // spec.finalizers changes only through the finalize subresource, as on kube
  assert.deepEqual(patched.body.spec, { finalizers: ['example.com/x', 'kubernetes'] });
  for (const ns of ['default', 'kube-system', 'kube-public', 'cert-manager']) {
    const got = (await request('GET', `/api/v1/namespaces/${ns}`)).body;
    assert.equal(got.metadata.labels?.['kubernetes.io/metadata.name'], ns, ns);
  }
  const selected = await request('GET', `/api/v1/namespaces?labelSelector=${encodeURIComponent('kubernetes.io/metadata.name=labelled')}`);
  assert.deepEqual(selected.body.items.map((n: { metadata: { name: string } }) => n.metadata.name), ['labelled']);
});

test('a namespace whose content has finalizers stays Terminating until the content is gone, and refuses new content meanwhile', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ending' } }))).status, 201);
  const held = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'held', finalizers: ['example.com/hold'] } };
  assert.equal((await request('POST', '/api/v1/namespaces/ending/secrets', JSON.stringify(held))).status, 201);
  assert.equal((await request('POST', '/api/v1/namespaces/ending/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain' } }))).status, 201);
  const deleted = await request('DELETE', '/api/v1/namespaces/ending');
  assert.equal(deleted.status, 200);
  assert.equal(deleted.body.status.phase, 'Terminating');
  assert.ok(deleted.body.metadata.deletionTimestamp);
  const ns = (await request('GET', '/api/v1/namespaces/ending')).body;
  assert.equal(ns.status.phase, 'Terminating');
  assert.ok(ns.metadata.deletionTimestamp);
  await waitFor('the content without finalizers deleted', async () => (await request('GET', '/api/v1/namespaces/ending/secrets/plain')).status === 404, 5000, 50);
  assert.ok((await request('GET', '/api/v1/namespaces/ending/secrets/held')).body.metadata.deletionTimestamp);
  // what holds it, where `kubectl get ns ending -o yaml` shows it, as kube's namespace controller says it
  const conditions = Object.fromEntries(((await request('GET', '/api/v1/namespaces/ending')).body.status.conditions as { type: string; status: string; message: string }[]).map((c) => [c.type, c]));
  assert.equal(conditions.NamespaceContentRemaining.status, 'True');
  assert.equal(conditions.NamespaceContentRemaining.message, 'Some resources are remaining: secrets. has 1 resource instances');
  assert.equal(conditions.NamespaceFinalizersRemaining.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
  assert.equal(conditions.NamespaceDeletionDiscoveryFailure.status, 'False');
  const refused = await request('POST', '/api/v1/namespaces/ending/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'late' } }));
  assert.equal(refused.status, 403);
  assert.deepEqual(refused.body, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'secrets "late" is forbidden: unable to create new content in namespace ending because it is being terminated',
    reason: 'Forbidden',
    details: { name: 'late', kind: 'secrets', causes: [{ reason: 'NamespaceTerminating', message: 'namespace ending is being terminated', field: 'metadata.namespace' }] },
    code: 403,
  });
  // the last finalizer goes: the Secret, then the namespace, are removed
  const released = await request('PATCH', '/api/v1/namespaces/ending/secrets/held', JSON.stringify({ metadata: { finalizers: null } }), 'application/merge-patch+json');
  assert.equal(released.status, 200);
  assert.equal((await request('GET', '/api/v1/namespaces/ending/secrets/held')).status, 404);
  assert.equal((await request('GET', '/api/v1/namespaces/ending')).status, 404);
});

// kube's namespace controller deletes the content asynchronously: `kubectl delete -f` of a
// manifest that lists its Namespace first deletes the objects after it one by one, and finds them
// (it failed with NotFound for each and exit 1 when the content went with the namespace at once)
test('a namespace with nothing holding it is Terminating at once and removed a moment later; its objects can still be deleted meanwhile; it can be made again', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'brief' } }))).status, 201);
  assert.equal((await request('POST', '/api/v1/namespaces/brief/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }))).status, 201);
  assert.equal((await request('POST', '/api/v1/namespaces/brief/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 't' } }))).status, 201);
  assert.equal((await request('DELETE', '/api/v1/namespaces/brief')).body.status.phase, 'Terminating');
  assert.equal((await request('DELETE', '/api/v1/namespaces/brief/secrets/s')).status, 200, 'kubectl delete -f: the next object');
  await waitFor('the namespace removed', async () => (await request('GET', '/api/v1/namespaces/brief')).status === 404, 5000, 50);
  assert.equal((await request('GET', '/api/v1/namespaces/brief/secrets/t')).status, 404);
  assert.equal((await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'brief' } }))).status, 201);
  assert.equal((await request('GET', '/api/v1/namespaces/brief/secrets/s')).status, 404);
});

test('a namespace stored without kubernetes.io/metadata.name (by an older certsmith) gets it when the server starts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-ns-legacy-'));
  try {
    const path = join(dir, 'state.db');
    const first = openSqliteStore({ path });
    await first.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'legacy', labels: { team: 'a' } } });
    await first.close();
    const raw = new Database(path);
    raw.prepare(`UPDATE log SET value = json_remove(value, '$.metadata.labels."kubernetes.io/metadata.name"')
      WHERE id IN (SELECT rev FROM current WHERE plural = 'namespaces')`).run();
    raw.close();
    const store = openSqliteStore({ path });
    assert.deepEqual((await store.get(NamespaceType, undefined, 'legacy'))?.metadata.labels, { team: 'a' });
    const server = await startApiServer({ store });
    try {
      assert.deepEqual((await store.get(NamespaceType, undefined, 'legacy'))?.metadata.labels, { team: 'a', 'kubernetes.io/metadata.name': 'legacy' });
      assert.equal((await store.get(NamespaceType, undefined, 'default'))?.metadata.labels?.['kubernetes.io/metadata.name'], 'default');
    } finally {
      await server.close();
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bad name or annotation key is refused with kube\'s rule in the cause, which is what kubectl prints', async () => {
  const label = 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')';
  const ns = await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Bad_Name' } }));
  assert.equal(ns.status, 422);
  assert.equal(ns.body.message, `Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ${label}`);
  assert.deepEqual(ns.body.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: "Bad_Name": ${label}`, field: 'metadata.name' }]);
  const subdomain = await request('POST', '/apis/cert-manager.io/v1/namespaces/default/issuers', JSON.stringify({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'Bad_Name' }, spec: { selfSigned: {} } }));
  assert.equal(subdomain.status, 422);
  assert.match(subdomain.body.message, /^Issuer\.cert-manager\.io "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of /);
  assert.match(subdomain.body.details.causes[0].message, /^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of /);
  const annotated = await request('POST', '/api/v1/namespaces/default/secrets', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', annotations: { 'bad key': '1' } } }));
  assert.equal(annotated.status, 422);
  assert.match(annotated.body.details.causes[0].message, /^Invalid value: "bad key": name part must consist of alphanumeric characters/);
});

// kube-apiserver's namespace storage has no DeleteCollection: a collection DELETE is 405 and
// removes nothing, and discovery does not list the verb (one request took cert-manager, where
// ClusterIssuers' Secrets live, and stopped at default).
test('namespaces have no deletecollection: a collection DELETE is 405, deletes nothing, and discovery leaves the verb out', async () => {
  assert.equal((await request('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'aaa-keep' } }))).status, 201);
  const r = await request('DELETE', '/api/v1/namespaces');
  assert.equal(r.status, 405);
  assert.equal(r.body.reason, 'MethodNotAllowed');
  const names = (await request('GET', '/api/v1/namespaces')).body.items.map((n: { metadata: { name: string; deletionTimestamp?: string } }) => n.metadata.deletionTimestamp ? `${n.metadata.name} (deleting)` : n.metadata.name);
  for (const ns of ['aaa-keep', 'cert-manager', 'default']) assert.ok(names.includes(ns), `${ns} still there: ${names}`);
  const discovery = await request('GET', '/api/v1');
  const verbs = discovery.body.resources.find((x: { name: string }) => x.name === 'namespaces').verbs;
  assert.deepEqual(verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
});
