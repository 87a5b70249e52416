// Foreground cascading deletion as kube's garbage collector does it: the owner is kept, with
// the foregroundDeletion finalizer and a deletionTimestamp, until every dependent that blocks it
// (ownerReferences[].blockOwnerDeletion) is gone; dependents that do not block never hold it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('foreground');

const request = (method: string, path: string, body?: unknown, contentType?: string) => requestJSON(api, method, path, body, contentType);

const secrets = '/api/v1/namespaces/default/secrets';

async function owner(name: string): Promise<{ apiVersion: string; kind: string; name: string; uid: string }> {
  const r = await request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name } });
  assert.equal(r.status, 201);
  return { apiVersion: 'v1', kind: 'Secret', name, uid: r.body.metadata.uid };
}

async function dependent(name: string, ref: object, blockOwnerDeletion: boolean, finalizers?: string[]) {
  const r = await request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name, ownerReferences: [{ ...ref, blockOwnerDeletion }], ...(finalizers ? { finalizers } : {}) } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

test('a dependent that blocks its owner and is held by a finalizer keeps the owner, marked, until it goes', async () => {
  const ref = await owner('fg-owner');
  await dependent('fg-held', ref, true, ['example.com/hold']);
  await dependent('fg-free', ref, true);
  const deleted = await request('DELETE', `${secrets}/fg-owner`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
  assert.equal(deleted.status, 200);
  assert.deepEqual(deleted.body.metadata.finalizers, ['foregroundDeletion']);
  assert.ok(deleted.body.metadata.deletionTimestamp);
  const kept = await request('GET', `${secrets}/fg-owner`);
  assert.equal(kept.status, 200, 'the owner waits for its blocking dependent');
  assert.deepEqual(kept.body.metadata.finalizers, ['foregroundDeletion']);
  assert.equal((await request('GET', `${secrets}/fg-free`)).status, 404);
  assert.ok((await request('GET', `${secrets}/fg-held`)).body.metadata.deletionTimestamp);
  // the last blocking dependent goes: the garbage collector lets the owner go
  assert.equal((await request('PATCH', `${secrets}/fg-held`, { metadata: { finalizers: null } }, 'application/merge-patch+json')).status, 200);
  assert.equal((await request('GET', `${secrets}/fg-held`)).status, 404);
  assert.equal((await request('GET', `${secrets}/fg-owner`)).status, 404);
});

test('a dependent that does not block (blockOwnerDeletion false) never holds the owner; nor does a foreground delete without dependents', async () => {
  const ref = await owner('nb-owner');
  await dependent('nb-held', ref, false, ['example.com/hold']);
  assert.equal((await request('DELETE', `${secrets}/nb-owner?propagationPolicy=Foreground`)).status, 200);
  assert.equal((await request('GET', `${secrets}/nb-owner`)).status, 404);
  assert.ok((await request('GET', `${secrets}/nb-held`)).body.metadata.deletionTimestamp, 'the dependent is deleted, and waits for its own finalizer');
  await owner('alone');
  assert.equal((await request('DELETE', `${secrets}/alone?propagationPolicy=Foreground`)).status, 200);
  assert.equal((await request('GET', `${secrets}/alone`)).status, 404);
});

test('an owner with a finalizer of its own keeps it after the foreground finalizer goes', async () => {
  const r = await request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'own-fin', finalizers: ['example.com/mine'] } });
  const ref = { apiVersion: 'v1', kind: 'Secret', name: 'own-fin', uid: r.body.metadata.uid };
  await dependent('own-fin-dep', ref, true, ['example.com/hold']);
  const deleted = await request('DELETE', `${secrets}/own-fin?propagationPolicy=Foreground`);
  assert.deepEqual(deleted.body.metadata.finalizers, ['example.com/mine', 'foregroundDeletion']);
  await request('PATCH', `${secrets}/own-fin-dep`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
  const left = await request('GET', `${secrets}/own-fin`);
  assert.equal(left.status, 200);
  assert.deepEqual(left.body.metadata.finalizers, ['example.com/mine']);
});

test('finalizers and owner references are validated as kube\'s ObjectMeta: qualified names, complete references, one controller', async () => {
  const refused = async (metadata: object, message: RegExp) => {
    const r = await request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'meta-checked', ...metadata } });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.match(r.body.message, message);
    assert.equal((await request('GET', `${secrets}/meta-checked`)).status, 404);
  };
  await refused({ finalizers: ['bad finalizer'] }, /^Secret "meta-checked" is invalid: metadata\.finalizers: Invalid value: "bad finalizer": name part must consist of/);
  await refused({ finalizers: ['orphan', 'foregroundDeletion'] }, /metadata\.finalizers: Invalid value: .*: finalizer orphan and foregroundDeletion cannot be both set/);
  await refused({ ownerReferences: [{ apiVersion: '', kind: '', name: '', uid: '' }] },
    /^Secret "meta-checked" is invalid: \[metadata\.ownerReferences\.apiVersion: Invalid value: "": version must not be empty, metadata\.ownerReferences\.kind: Invalid value: "": kind must not be empty, metadata\.ownerReferences\.name: Invalid value: "": name must not be empty, metadata\.ownerReferences\.uid: Invalid value: "": uid must not be empty\]$/);
  const a = { apiVersion: 'v1', kind: 'Secret', name: 'a', uid: '1', controller: true };
  await refused({ ownerReferences: [a, { ...a, name: 'b', uid: '2' }] }, /Only one reference can have Controller set to true\. Found "true" in references for Secret\/a and Secret\/b/);
  await refused({ ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: '3' }] }, /is disallowed from being an owner/);
  assert.equal((await request('POST', secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'meta-ok', finalizers: ['example.com/hold', 'kubernetes'], ownerReferences: [a] } })).status, 201);
  const patched = await request('PATCH', `${secrets}/meta-ok`, { metadata: { finalizers: ['Not Valid'] } }, 'application/merge-patch+json');
  assert.equal(patched.status, 422);
  assert.deepEqual((await request('GET', `${secrets}/meta-ok`)).body.metadata.finalizers, ['example.com/hold', 'kubernetes']);
});
