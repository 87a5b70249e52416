// Periodic bookmarks, as kube-apiserver's watch cache sends them to a watch with
// allowWatchBookmarks=true: about once a minute (here an injected 150 ms) and not just at the
// start, each carrying the current resourceVersion, so a watcher that sees no change resumes
// from a revision that was not compacted away. Without allowWatchBookmarks, none.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { withAdmission } from './admission.ts';
import { startApiServer } from './api-server.ts';
import { requestJSON, watchLines } from './testing/test-api-server.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-watch-bookmarks-'));
const raw = openSqliteStore({ path: join(dataDir, 'state.db') });
const api = await startApiServer({ store: withAdmission(raw), watchBookmarkIntervalMs: 150 });
after(async () => {
  await api.close();
  await raw.close();
  rmSync(dataDir, { recursive: true, force: true });
});


test('a quiet watch with allowWatchBookmarks gets bookmarks while it is open, carrying the current resourceVersion', async () => {
  const secrets = '/api/v1/namespaces/default/secrets';
  const start = (await requestJSON(api, 'GET', secrets)).body.metadata.resourceVersion;
  let written = 0;
  const lines = await watchLines(api, `${secrets}?watch=1&allowWatchBookmarks=true&resourceVersion=${start}&timeoutSeconds=30`,
    (ls) => ls.filter((l) => l.type === 'BOOKMARK' && Number(l.object.metadata.resourceVersion) >= written && written > 0).length >= 1,
    async () => {
      // a change the watch does not see (another kind): the bookmark still moves past it
      const r = await requestJSON(api, 'POST', '/apis/cert-manager.io/v1/namespaces/default/issuers',
        { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'quiet' }, spec: { selfSigned: {} } });
      assert.equal(r.status, 201);
      written = Number(r.body.metadata.resourceVersion);
    });
  assert.ok(lines.every((l) => l.type === 'BOOKMARK'), JSON.stringify(lines));
  assert.equal(lines[0].object.metadata.resourceVersion, start);
  assert.ok(lines.length >= 2, 'more than the first bookmark');
  assert.equal(lines.at(-1).object.kind, 'Secret');
});

test('without allowWatchBookmarks a quiet watch gets no bookmark', async () => {
  const lines = await watchLines(api, '/api/v1/namespaces/default/secrets?watch=1&timeoutSeconds=1', () => false, async () => {});
  assert.deepEqual(lines, []);
});
