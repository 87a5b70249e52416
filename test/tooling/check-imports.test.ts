// scripts/check-imports.ts (run by `npm run lint`) on small trees written to a temp dir: it
// reports each layer violation and each import cycle (type-only and re-export ones included),
// and stays quiet on a clean tree. Lives under test/ because `npm test` only finds tests in src
// and test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkImports, importCycles, reportLines, type Graph } from '../../scripts/check-imports.ts';

/** Writes `files` (repository-relative path → source) under a fresh temp dir and checks it. */
function check(files: Record<string, string>, t: { after: (fn: () => void) => void }) {
  const root = mkdtempSync(path.join(tmpdir(), 'check-imports-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return checkImports(root);
}

const cleanTree = {
  'src/api/types.ts': 'export interface Certificate { name: string }\n',
  'src/shared/revisions.ts': "import type { Certificate } from '../api/types.ts';\nexport const revisionOf = (c: Certificate) => c.name;\n",
  'src/controllers/certificates/gather.ts': "import { revisionOf } from '../../shared/revisions.ts';\nexport const gather = revisionOf;\n",
  'src/controllers/manager.ts': "import { gather } from './certificates/gather.ts';\nexport const start = () => gather;\n",
  'src/cli/server.ts': "import { start } from '../controllers/manager.ts';\nimport { revisionOf } from '../shared/revisions.ts';\nimport ts from 'typescript';\nexport { start, revisionOf, ts };\n",
  // tests may drive a controller from the CLI's side
  'src/cli/status.test.ts': "import { gather } from '../controllers/certificates/gather.ts';\nvoid gather;\n",
  'test/lifecycle/harness.ts': "import { start } from '../../src/controllers/manager.ts';\nexport { start };\n",
  'bench/issue.ts': "import { start } from '../src/controllers/manager.ts';\nvoid start;\n",
  // declaration files, dot-folders and node_modules are not scanned
  'src/api/ambient.d.ts': "import './types.ts';\n",
  'src/.cache/loop.ts': "import './loop.ts';\n",
  'src/node_modules/x/index.ts': "import './index.ts';\n",
};

test('a clean tree: no layer violation, no cycle, and the CLI all-clear line', (t) => {
  const r = check(cleanTree, t);
  assert.deepEqual(r, { files: 8, layers: [], cycles: [] });
  assert.deepEqual(reportLines(r), { stderr: [], stdout: ['check-imports: 8 files, no layer violations, no import cycles'] });
});

test('layer rules: the CLI never imports a controller folder, controllers never import the CLI, in every import form', (t) => {
  const r = check({
    ...cleanTree,
    'src/cli/status.ts': "import type { gather } from '../controllers/certificates/gather.ts';\nexport type G = typeof gather;\n",
    'src/cli/renew.ts': "export { gather } from '../controllers/certificates/gather.ts';\n",
    'src/cli/inspect.ts': "export const load = () => import('../controllers/certificates/gather.ts');\n",
    'src/controllers/certificates/flags.ts': "import { revisionOf } from '../../cli/server.ts';\nexport { revisionOf };\n",
  }, t);
  assert.deepEqual(r.layers.sort(), [
    "src/cli/inspect.ts imports src/controllers/certificates/gather.ts: the CLI uses src/shared, src/api and the ground floor, never a controller's folder",
    "src/cli/renew.ts imports src/controllers/certificates/gather.ts: the CLI uses src/shared, src/api and the ground floor, never a controller's folder",
    "src/cli/status.ts imports src/controllers/certificates/gather.ts: the CLI uses src/shared, src/api and the ground floor, never a controller's folder",
    'src/controllers/certificates/flags.ts imports src/cli/server.ts: controllers never import the CLI',
  ]);
  // flags.ts -> cli/server.ts -> manager.ts -> gather.ts does not return to flags.ts: no cycle
  assert.deepEqual(r.cycles, []);
});

test('cycles: a type-only cycle, a re-export cycle with a shortest path and its whole knot, a dynamic import, a self-import', (t) => {
  const r = check({
    ...cleanTree,
    // the controller-context knot of issue 13: types only, both ways
    'src/controllers/context.ts': "import type { Manager } from './manager-types.ts';\nexport interface Context { manager: Manager }\n",
    'src/controllers/manager-types.ts': "import type { Context } from './context.ts';\nexport interface Manager { context: Context }\n",
    // p -> q -> p is the shortest way round; r is in the same knot through `export *`
    'src/api/p.ts': "import { q } from './q.ts';\nexport const p = q;\n",
    'src/api/q.ts': "import './r.ts';\nimport { p } from './p.ts';\nexport const q = () => p;\n",
    'src/api/r.ts': "export * from './p.ts';\n",
    'src/shared/lazy-a.ts': "export const b = () => import('./lazy-b.ts');\n",
    'src/shared/lazy-b.ts': "import { b } from './lazy-a.ts';\nexport { b };\n",
    'test/rig/self.ts': "import './self.ts';\n",
  }, t);
  assert.deepEqual(r.layers, []);
  const byStart = Object.fromEntries(r.cycles.map((c) => [c.path[0], c]));
  assert.equal(r.cycles.length, 4);
  assert.deepEqual(byStart['src/controllers/context.ts'], {
    path: ['src/controllers/context.ts', 'src/controllers/manager-types.ts', 'src/controllers/context.ts'],
    files: ['src/controllers/context.ts', 'src/controllers/manager-types.ts'],
  });
  assert.deepEqual(byStart['src/api/p.ts'], { path: ['src/api/p.ts', 'src/api/q.ts', 'src/api/p.ts'], files: ['src/api/p.ts', 'src/api/q.ts', 'src/api/r.ts'] });
  assert.deepEqual(byStart['src/shared/lazy-a.ts'].files, ['src/shared/lazy-a.ts', 'src/shared/lazy-b.ts']);
  assert.deepEqual(byStart['test/rig/self.ts'], { path: ['test/rig/self.ts', 'test/rig/self.ts'], files: ['test/rig/self.ts'] });

  const { stderr, stdout } = reportLines(r);
  assert.deepEqual(stdout, []);
  assert.ok(stderr.includes('import cycle: src/api/p.ts -> src/api/q.ts -> src/api/p.ts'));
  assert.ok(stderr.includes('  3 files import each other in a loop: src/api/p.ts, src/api/q.ts, src/api/r.ts'));
  // a two-file cycle names both files in its path already: no knot line for it
  assert.ok(!stderr.some((l) => l.includes('2 files import each other')));
  assert.equal(stderr.at(-1), `check-imports: 0 layer violation(s), 4 import cycle(s) in ${r.files} files`);
});

test('a layer violation alone also fails, with the summary line last', (t) => {
  const r = check({ ...cleanTree, 'src/controllers/certificates/flags.ts': "import '../../cli/server.ts';\n" }, t);
  assert.deepEqual(reportLines(r), {
    stderr: [
      'layer rule: src/controllers/certificates/flags.ts imports src/cli/server.ts: controllers never import the CLI',
      'check-imports: 1 layer violation(s), 0 import cycle(s) in 9 files',
    ],
    stdout: [],
  });
});

test('a chain deeper than the call stack is walked without overflow', () => {
  const n = 50_000;
  const graph: Graph = {};
  for (let i = 0; i < n; i++) graph[`f${i}`] = [`f${i + 1}`];
  graph[`f${n}`] = [];
  assert.deepEqual(importCycles(graph), []);
  graph[`f${n}`] = ['f0'];
  const [cycle] = importCycles(graph);
  assert.equal(cycle.files.length, n + 1);
  assert.equal(cycle.path.length, n + 2);
});
