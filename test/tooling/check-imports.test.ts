// scripts/check-imports.ts (run by `npm run lint`) on small trees written to a temp dir: it
// reports each layer violation (the whole order of docs/architecture.md, the front ends' and the
// CLI's rule, folders with no layer, exceptions no longer needed) and each import cycle (type-only
// and re-export ones included), and stays quiet on a clean tree. Lives under test/ because
// `npm test` only finds tests in src and test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkImports, importCycles, reportLines, RULES, type Graph, type ImportRules, type LayerException } from '../../scripts/check-imports.ts';

/** The real layers without the real exceptions, which a fixture tree would report as no longer needed. */
const NO_EXCEPTIONS: ImportRules = { ...RULES, exceptions: [] };

/** Writes `files` (repository-relative path → source) under a fresh temp dir and checks it. */
function check(files: Record<string, string>, t: { after: (fn: () => void) => void }, rules = NO_EXCEPTIONS) {
  const root = mkdtempSync(path.join(tmpdir(), 'check-imports-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return checkImports(root, rules);
}

const cleanTree = {
  'src/api/types.ts': 'export interface Certificate { name: string }\n',
  'src/shared/revisions.ts': "import type { Certificate } from '../api/types.ts';\nexport const revisionOf = (c: Certificate) => c.name;\n",
  'src/controllers/certificates/gather.ts': "import { revisionOf } from '../../shared/revisions.ts';\nexport const gather = revisionOf;\n",
  'src/controllers/manager.ts': "import { gather } from './certificates/gather.ts';\nexport const start = () => gather;\n",
  'src/composition/index.ts': "import { start } from '../controllers/manager.ts';\nexport const compose = () => start;\n",
  'src/cli/server.ts': "import { compose } from '../composition/index.ts';\nimport { revisionOf } from '../shared/revisions.ts';\nimport ts from 'typescript';\nexport { compose, revisionOf, ts };\n",
  // tests may drive a controller from the CLI's side
  'src/cli/status.test.ts': "import { gather } from '../controllers/certificates/gather.ts';\nvoid gather;\n",
  'test/lifecycle/harness.ts': "import { start } from '../../src/controllers/manager.ts';\nexport { start };\n",
  'bench/issue.ts': "import { start } from '../src/controllers/manager.ts';\nvoid start;\n",
  // declaration files, dot-folders and node_modules are not scanned
  'src/api/ambient.d.ts': "import './types.ts';\n",
  'src/.cache/loop.ts': "import './loop.ts';\n",
  'src/node_modules/x/index.ts': "import './index.ts';\n",
};

const order = 'ground floor, store, runtime, server, shared, controllers, composition, front ends, CLI';
/** The message for an import against the layer order, as the script words it. */
function upward(from: string, to: string, fromLayer: string, toLayer: string) {
  const allowed = order.slice(0, order.indexOf(fromLayer) + fromLayer.length);
  return `${from} imports ${to}: layer order: the ${fromLayer} layer imports only from ${allowed}, not from ${toLayer}`;
}
/** assert.ok with a message: without one, node's assert re-reads the source line, which takes minutes on this file's long lines. */
function includes(lines: string[], line: string) {
  assert.ok(lines.includes(line), `expected among the messages: ${line}\ngot:\n${lines.join('\n')}`);
}
const noController = (from: string, to: string, layer: string) =>
  `${from} imports ${to}: the ${layer} layer never imports a controller's folder (it reaches the controllers through src/composition)`;

test('a clean tree: no layer violation, no cycle, and the CLI all-clear line', (t) => {
  const r = check(cleanTree, t);
  assert.deepEqual(r, { files: 9, layers: [], cycles: [] });
  assert.deepEqual(reportLines(r), { stderr: [], stdout: ['check-imports: 9 files, no layer violations, no import cycles'] });
});

test('the CLI and the front ends never import a controller folder, in every import form; controllers never import the CLI', (t) => {
  const r = check({
    ...cleanTree,
    'src/cli/status.ts': "import type { gather } from '../controllers/certificates/gather.ts';\nexport type G = typeof gather;\n",
    'src/cli/renew.ts': "export { gather } from '../controllers/certificates/gather.ts';\n",
    'src/cli/inspect.ts': "export const load = () => import('../controllers/certificates/gather.ts');\n",
    // the composition entry point is the CLI's way to the controllers, not manager.ts itself
    'src/cli/controller.ts': "import { start } from '../controllers/manager.ts';\nvoid start;\n",
    'src/doctor/diagnose.ts': "import { gather } from '../controllers/certificates/gather.ts';\nvoid gather;\n",
    'src/controllers/certificates/flags.ts': "import { revisionOf } from '../../cli/server.ts';\nexport { revisionOf };\n",
  }, t);
  assert.deepEqual(r.layers.sort(), [
    noController('src/cli/controller.ts', 'src/controllers/manager.ts', 'CLI'),
    noController('src/cli/inspect.ts', 'src/controllers/certificates/gather.ts', 'CLI'),
    noController('src/cli/renew.ts', 'src/controllers/certificates/gather.ts', 'CLI'),
    noController('src/cli/status.ts', 'src/controllers/certificates/gather.ts', 'CLI'),
    upward('src/controllers/certificates/flags.ts', 'src/cli/server.ts', 'controllers', 'CLI'),
    noController('src/doctor/diagnose.ts', 'src/controllers/certificates/gather.ts', 'front ends'),
  ]);
  // flags.ts -> cli/server.ts -> composition -> manager.ts -> gather.ts does not return to flags.ts: no cycle
  assert.deepEqual(r.cycles, []);
});

test('an import up the order fails, from every layer, type-only and dynamic ones too; down the order and within a layer pass', (t) => {
  const r = check({
    ...cleanTree,
    // down the order and across the folders of one layer: allowed
    'src/pki/keys.ts': "import type { Certificate } from '../api/types.ts';\nexport type K = Certificate;\n",
    'src/api/validation.ts': "import type { K } from '../pki/keys.ts';\nexport type V = K;\n",
    'src/runtime/controller.ts': "import { count } from '../metrics/registry.ts';\nexport const run = count;\n",
    'src/metrics/registry.ts': "import type { V } from '../api/validation.ts';\nexport const count = (v: V) => v;\n",
    'src/webhook/server.ts': "import '../server/admission.ts';\n",
    'src/server/admission.ts': "import { run } from '../runtime/controller.ts';\nexport { run };\n",
    'src/notifications/delivery.ts': "import { revisionOf } from '../shared/revisions.ts';\nexport { revisionOf };\n",
    'src/dashboard/index.ts': "import { compose } from '../composition/index.ts';\nimport '../notifications/delivery.ts';\nexport { compose };\n",
    // up the order: one from each layer
    'src/acme/client.ts': "import type { Store } from '../store/store.ts';\nexport type C = Store;\n",
    'src/store/store.ts': "export interface Store { get(): void }\n",
    'src/store/kube/token-request.ts': "import type { Options } from '../../shared/controller-options.ts';\nexport type T = Options;\n",
    'src/shared/controller-options.ts': "export interface Options { a?: string }\n",
    'src/runtime/informer.ts': "export const load = () => import('../server/admission.ts');\n",
    'src/server/discovery.ts': "export * from '../webhook/server.ts';\nexport * from '../shared/revisions.ts';\n",
    'src/shared/watch.ts': "import { start } from '../controllers/manager.ts';\nexport { start };\n",
    'src/controllers/context.ts': "import type { compose } from '../composition/index.ts';\nexport type C = typeof compose;\n",
    'src/composition/dashboard.ts': "import '../dashboard/index.ts';\n",
    'src/doctor/finding.ts': "import '../cli/server.ts';\n",
  }, t);
  assert.deepEqual(r.layers.sort(), [
    upward('src/acme/client.ts', 'src/store/store.ts', 'ground floor', 'store'),
    upward('src/composition/dashboard.ts', 'src/dashboard/index.ts', 'composition', 'front ends'),
    upward('src/controllers/context.ts', 'src/composition/index.ts', 'controllers', 'composition'),
    upward('src/doctor/finding.ts', 'src/cli/server.ts', 'front ends', 'CLI'),
    upward('src/runtime/informer.ts', 'src/server/admission.ts', 'runtime', 'server'),
    upward('src/server/discovery.ts', 'src/shared/revisions.ts', 'server', 'shared'),
    upward('src/shared/watch.ts', 'src/controllers/manager.ts', 'shared', 'controllers'),
    upward('src/store/kube/token-request.ts', 'src/shared/controller-options.ts', 'store', 'shared'),
  ]);
  assert.deepEqual(r.cycles, []);
  includes(r.layers, 'src/store/kube/token-request.ts imports src/shared/controller-options.ts: layer order: the store layer imports only from ground floor, store, not from shared');
});

test('an exception lets in exactly its importer and target; a leaf must stay a leaf; an unused one is reported', (t) => {
  const files = {
    ...cleanTree,
    'src/runtime/bounded-cache.ts': 'export class BoundedCache {}\n',
    'src/runtime/clock.ts': 'export const realClock = { now: () => new Date() };\n',
    // allowed: the documented leaf, from any file of the ground floor's pki
    'src/pki/csr.ts': "import { BoundedCache } from '../runtime/bounded-cache.ts';\nexport const memo = new BoundedCache();\n",
    'src/pki/der.ts': "import type { BoundedCache } from '../runtime/bounded-cache.ts';\nexport type D = BoundedCache;\n",
    // not allowed: another runtime file from pki, the same leaf from api
    'src/pki/sign.ts': "import { realClock } from '../runtime/clock.ts';\nexport const clock = realClock;\n",
    'src/api/defaults.ts': "import '../runtime/bounded-cache.ts';\n",
    // a file exception covers that file only
    'src/controllers/acme/orders/solver-selection.ts': 'export const selectSolver = () => undefined;\n',
    'src/doctor/diagnose.ts': "import { selectSolver } from '../controllers/acme/orders/solver-selection.ts';\nexport { selectSolver };\n",
    'src/doctor/checks/issuer.ts': "import { selectSolver } from '../../controllers/acme/orders/solver-selection.ts';\nexport { selectSolver };\n",
  };
  // the documented leaf, and a file exception of the 'move' kind (the doctor once had two)
  const fileException: LayerException = { from: 'src/doctor/diagnose.ts', to: 'src/controllers/acme/orders/solver-selection.ts', kind: 'move', reason: 'selectSolver belongs in src/shared' };
  const rules: ImportRules = { ...RULES, exceptions: [...RULES.exceptions.filter((e) => e.to === 'src/runtime/bounded-cache.ts'), fileException] };
  assert.deepEqual(check(files, t, rules).layers.sort(), [
    upward('src/api/defaults.ts', 'src/runtime/bounded-cache.ts', 'ground floor', 'runtime'),
    noController('src/doctor/checks/issuer.ts', 'src/controllers/acme/orders/solver-selection.ts', 'front ends'),
    upward('src/pki/sign.ts', 'src/runtime/clock.ts', 'ground floor', 'runtime'),
  ]);
  // without the exceptions, the imports they allow are reported
  const bare = check(files, t).layers;
  includes(bare, upward('src/pki/csr.ts', 'src/runtime/bounded-cache.ts', 'ground floor', 'runtime'));
  includes(bare, noController('src/doctor/diagnose.ts', 'src/controllers/acme/orders/solver-selection.ts', 'front ends'));

  // a leaf that starts importing ours would let the ground floor reach it through the exception
  const grown = check({ ...files, 'src/runtime/bounded-cache.ts': "import '../runtime/clock.ts';\nexport class BoundedCache {}\n" }, t, rules).layers;
  includes(grown, 'src/runtime/bounded-cache.ts imports src/runtime/clock.ts: exception src/pki/ -> src/runtime/bounded-cache.ts holds only while src/runtime/bounded-cache.ts imports nothing of ours (the parse memos of CSRs, DER and keys)');

  // once the import is gone (selectSolver moved to src/shared), the exception must go too
  const moved = check({ ...files, 'src/doctor/diagnose.ts': 'export const selectSolver = 1;\n', 'src/doctor/checks/issuer.ts': 'export {};\n' }, t, rules).layers;
  assert.deepEqual(moved.filter((l) => l.startsWith('exception ')), [
    'exception src/doctor/diagnose.ts -> src/controllers/acme/orders/solver-selection.ts is no longer needed: remove it from EXCEPTIONS (scripts/check-imports.ts) and docs/architecture.md',
  ]);
});

test('a folder of src with no layer is reported once, with where to place it', (t) => {
  const r = check({
    ...cleanTree,
    'src/reports/weekly.ts': "import '../api/types.ts';\n",
    'src/reports/monthly.ts': "import './weekly.ts';\n",
    'src/reports/weekly.test.ts': "import './weekly.ts';\n",
    'src/cli/reports.ts': "import '../reports/weekly.ts';\n",
  }, t);
  assert.deepEqual(r.layers, ["src/reports is in no layer: place it in LAYERS (scripts/check-imports.ts) and in docs/architecture.md's table"]);
});

test("every folder of the real src/ has a layer, and LAYERS and EXCEPTIONS are docs/architecture.md's table", () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const docs = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Layers'), docs.indexOf('\n## ', docs.indexOf('## Layers') + 1));
  // the table's Folder column, row by row, in order
  const rows = section.split('\n').filter((l) => /^\| [^-|]/.test(l)).slice(1).map((l) => l.split('|')[2]);
  const folders = rows.map((cell) => [...cell.matchAll(/`(src\/[a-z-]+)`/g)].map((m) => m[1]));
  assert.deepEqual(folders, RULES.layers.map((l) => l.folders));
  for (const e of RULES.exceptions) assert.ok(section.includes(e.to.replace(/^src\//, '')), `${e.to} is listed in docs/architecture.md`);
  // the layer rules hold on the real tree (npm run lint checks the same; here a failure names the test)
  assert.deepEqual(checkImports(root).layers, []);
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
  includes(stderr, 'import cycle: src/api/p.ts -> src/api/q.ts -> src/api/p.ts');
  includes(stderr, '  3 files import each other in a loop: src/api/p.ts, src/api/q.ts, src/api/r.ts');
  // a two-file cycle names both files in its path already: no knot line for it
  assert.ok(!stderr.some((l) => l.includes('2 files import each other')), stderr.join('\n'));
  assert.equal(stderr.at(-1), `check-imports: 0 layer violation(s), 4 import cycle(s) in ${r.files} files`);
});

test('a layer violation alone also fails, with the summary line last', (t) => {
  const r = check({ ...cleanTree, 'src/controllers/certificates/flags.ts': "import '../../cli/server.ts';\n" }, t);
  assert.deepEqual(reportLines(r), {
    stderr: [
      `layer rule: ${upward('src/controllers/certificates/flags.ts', 'src/cli/server.ts', 'controllers', 'CLI')}`,
      'check-imports: 1 layer violation(s), 0 import cycle(s) in 10 files',
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
