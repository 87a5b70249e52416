// resourceVersionMatch on a list, as kube-apiserver serves it: Exact lists the collection as it
// was at that revision (410 once compacted away), NotOlderThan lists it as it is now, and values
// kube refuses are 422s naming the rule. Exact answered the current objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('list-exact');
const secrets = '/api/v1/namespaces/default/secrets';
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque' });

test('Exact lists the collection as it was at that revision, with limit and continue too; NotOlderThan as it is now', async () => {
  for (const n of ['a', 'b']) assert.equal((await requestJSON(api, 'POST', secrets, secret(n))).status, 201);
  const then = (await requestJSON(api, 'GET', secrets)).body.metadata.resourceVersion;
  assert.equal((await requestJSON(api, 'POST', secrets, secret('c'))).status, 201);
  assert.equal((await requestJSON(api, 'DELETE', `${secrets}/a`)).status, 200);
  const names = (body: any) => body.items.map((i: any) => i.metadata.name);
  const exact = await requestJSON(api, 'GET', `${secrets}?resourceVersion=${then}&resourceVersionMatch=Exact`);
  assert.equal(exact.status, 200, JSON.stringify(exact.body));
  assert.deepEqual(names(exact.body), ['a', 'b']);
  assert.equal(exact.body.metadata.resourceVersion, then);
  const page = await requestJSON(api, 'GET', `${secrets}?resourceVersion=${then}&resourceVersionMatch=Exact&limit=1`);
  assert.deepEqual(names(page.body), ['a']);
  const rest = await requestJSON(api, 'GET', `${secrets}?limit=1&continue=${encodeURIComponent(page.body.metadata.continue)}`);
  assert.deepEqual(names(rest.body), ['b']);
  const now = await requestJSON(api, 'GET', `${secrets}?resourceVersion=${then}&resourceVersionMatch=NotOlderThan`);
  assert.deepEqual(names(now.body), ['b', 'c']);
  // a revision not reached yet
  const ahead = await requestJSON(api, 'GET', `${secrets}?resourceVersion=99999999&resourceVersionMatch=Exact`);
  assert.equal(ahead.status, 504);
});

test('resourceVersionMatch values kube refuses are 422s naming the rule', async () => {
  const rows: [string, string][] = [
    ['resourceVersion=5&resourceVersionMatch=Bogus', 'resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""'],
    ['resourceVersion=0&resourceVersionMatch=Exact', 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
    ['resourceVersionMatch=Exact', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ['resourceVersion=5&resourceVersionMatch=Exact&continue=abc', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided'],
  ];
  for (const [query, message] of rows) {
    const r = await requestJSON(api, 'GET', `${secrets}?${query}`);
    assert.equal(r.status, 422, query);
    assert.equal(r.body.message, `ListOptions.meta.k8s.io "" is invalid: ${message}`, query);
  }
});
