// Streaming lists (kube 1.27+ WatchList, client-go's WatchListClient): a watch with
// sendInitialEvents=true starts with the current objects as ADDED, then a BOOKMARK annotated
// k8s.io/initial-events-end, then the changes; the options are validated as kube-apiserver does.
// A server that ignored sendInitialEvents left such a client waiting for a bookmark that never came.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer, watchLines } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('watch-list');
const watch = <L>(path: string, enough: (lines: L[]) => boolean, onOpen?: () => Promise<void>) => watchLines<L>(api, path, enough, onOpen);
const secrets = '/api/v1/namespaces/default/secrets';
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data: { k: 'dg==' } });

interface Line { type: string; object: { metadata: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } } }


test('sendInitialEvents=true: the current objects, the initial-events-end bookmark, then changes', async () => {
  for (const n of ['a', 'b']) assert.equal((await requestJSON(api, 'POST', secrets, secret(n))).status, 201);
  const list = await requestJSON(api, 'GET', secrets);
  const lines = await watch<Line>(`${secrets}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${list.body.metadata.resourceVersion}`,
    (ls) => ls.some((l) => l.type === 'ADDED' && l.object.metadata.name === 'c'),
    async () => { await new Promise((r) => setTimeout(r, 200)); await requestJSON(api, 'POST', secrets, secret('c')); });
  const end = lines.findIndex((l) => l.type === 'BOOKMARK');
  assert.ok(end >= 0, JSON.stringify(lines));
  assert.deepEqual(lines.slice(0, end).map((l) => `${l.type} ${l.object.metadata.name}`).sort(), ['ADDED a', 'ADDED b']);
  assert.equal(lines[end].object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
  assert.ok(Number(lines[end].object.metadata.resourceVersion) >= Number(list.body.metadata.resourceVersion));
  assert.deepEqual(lines.slice(end + 1).map((l) => `${l.type} ${l.object.metadata.name}`), ['ADDED c']);
});

test('sendInitialEvents=false with NotOlderThan: changes only, from the resourceVersion', async () => {
  const list = await requestJSON(api, 'GET', secrets);
  const lines = await watch<Line>(`${secrets}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${list.body.metadata.resourceVersion}`,
    (ls) => ls.some((l) => l.object.metadata.name === 'd'),
    async () => { await requestJSON(api, 'POST', secrets, secret('d')); });
  assert.deepEqual(lines.filter((l) => l.type !== 'BOOKMARK').map((l) => `${l.type} ${l.object.metadata.name}`), ['ADDED d']);
});

test('the options are checked as kube-apiserver checks them: 422 naming the field and the rule', async () => {
  const cases: [string, RegExp][] = [
    [`${secrets}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true`, /resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/],
    [`${secrets}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, /allowWatchBookmarks: Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is set to true/],
    [`${secrets}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1`, /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/],
    [`${secrets}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true`, /resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"/],
    [`${secrets}?sendInitialEvents=true`, /sendInitialEvents: Forbidden: sendInitialEvents is only supported on watch requests/],
  ];
  for (const [path, message] of cases) {
    const r = await requestJSON(api, 'GET', path);
    assert.equal(r.status, 422, `${path}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.reason, 'Invalid');
    assert.match(r.body.message, message, path);
  }
});

test('GET of one object with watch=1 watches that object alone, as kube-apiserver does (a metadata.name field selector)', async () => {
  for (const n of ['one', 'other']) assert.equal((await requestJSON(api, 'POST', secrets, secret(n))).status, 201);
  const lines = await watch<Line>(`${secrets}/one?watch=1`,
    (ls) => ls.some((l) => l.type === 'MODIFIED'),
    async () => {
      await requestJSON(api, 'PATCH', `${secrets}/other`, { metadata: { labels: { touched: 'yes' } } }, 'application/merge-patch+json');
      await requestJSON(api, 'PATCH', `${secrets}/one`, { metadata: { labels: { touched: 'yes' } } }, 'application/merge-patch+json');
    });
  assert.deepEqual(lines.map((l) => `${l.type} ${l.object.metadata.name}`), ['ADDED one', 'MODIFIED one']);
});

test('a watch with a selector kube cannot parse is a plain 400, as the list is, not a 200 with an ERROR event', async () => {
  for (const q of ['labelSelector=a%20in%20(', 'fieldSelector=spec.nope%3Dx']) {
    const list = await requestJSON(api, 'GET', `${secrets}?${q}`);
    assert.equal(list.status, 400, JSON.stringify(list.body));
    const watched = await requestJSON(api, 'GET', `${secrets}?watch=1&${q}`);
    assert.equal(watched.status, 400, JSON.stringify(watched.body));
    assert.deepEqual(watched.body, list.body);
  }
});
