// 410s as kube-apiserver words them: a watch from a compacted resourceVersion and an expired
// continue token are "Expired" (NewResourceExpired; the token's Status also carries a fresh,
// inconsistent continue token, as etcd3's handleCompactedErrorForPaging does); a list with
// resourceVersionMatch=Exact at a compacted revision stays "Gone".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api, raw } = await startTestApiServer('expired');
const secrets = '/api/v1/namespaces/default/secrets';
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque' });

function watchLines(path: string): Promise<{ status: number; lines: any[] }> {
  return new Promise((resolve, reject) => {
    http.get(new URL(path, api.url), (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, lines: text.trim().split('\n').map((l) => JSON.parse(l)) }));
    }).on('error', reject);
  });
}

test('a watch, a continue token and an Exact list from a compacted revision: Expired, Expired with a token, Gone', async () => {
  const first = await requestJSON(api, 'POST', secrets, secret('a'));
  for (const n of ['b', 'c']) assert.equal((await requestJSON(api, 'POST', secrets, secret(n))).status, 201);
  const page = await requestJSON(api, 'GET', `${secrets}?limit=1`);
  assert.ok(page.body.metadata.continue);
  for (const n of ['d', 'e']) assert.equal((await requestJSON(api, 'POST', secrets, secret(n))).status, 201);
  raw.compact(0);

  const watched = await watchLines(`${secrets}?watch=1&resourceVersion=${first.body.metadata.resourceVersion}`);
  assert.equal(watched.status, 200);
  const error = watched.lines.at(-1);
  assert.equal(error.type, 'ERROR');
  assert.equal(error.object.code, 410);
  assert.equal(error.object.reason, 'Expired');

  const cont = await requestJSON(api, 'GET', `${secrets}?limit=1&continue=${encodeURIComponent(page.body.metadata.continue)}`);
  assert.equal(cont.status, 410, JSON.stringify(cont.body));
  assert.equal(cont.body.reason, 'Expired');
  assert.match(cont.body.message, /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response/);
  const token = cont.body.metadata.continue;
  assert.ok(token, 'a fresh continue token');
  // the fresh token carries on from where the expired one stopped, at the current revision
  const rest = await requestJSON(api, 'GET', `${secrets}?limit=10&continue=${encodeURIComponent(token)}`);
  assert.equal(rest.status, 200, JSON.stringify(rest.body));
  assert.deepEqual(rest.body.items.map((i: any) => i.metadata.name), ['b', 'c', 'd', 'e']);

  const exact = await requestJSON(api, 'GET', `${secrets}?resourceVersion=${first.body.metadata.resourceVersion}&resourceVersionMatch=Exact`);
  assert.equal(exact.status, 410);
  assert.equal(exact.body.reason, 'Gone');
});
