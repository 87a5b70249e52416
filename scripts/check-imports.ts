// Import rules `npm run lint` enforces beyond ESLint (issue 13):
//   1. the layers of docs/architecture.md ("## Layers"), tests excepted: a file of src/ imports only
//      from its own layer and the layers above it in LAYERS (type imports included), but for the
//      named EXCEPTIONS; the CLI and the front ends never import a controller's folder (they reach
//      the controllers through src/composition); every folder of src/ has a layer;
//   2. no import cycle between files, type-only imports included: a cycle of types still ties
//      the files' meanings together, and the next value import through it is a runtime cycle.
// Every import form counts: `import`, `import type`, `export … from`, `import('…')`.
// Prints each broken rule and each cycle, and exits 1 when there is any. The checks take the
// root directory (and the rules) as arguments so test/tooling/check-imports.test.ts can run them
// on fixture trees.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SCANNED = ['src', 'test', 'bench', 'scripts'];

export interface Layer {
  name: string;
  /** repository-relative folders, each the whole of a top-level folder of src/ */
  folders: string[];
}

/** docs/architecture.md's table, in its order: each layer imports only from itself and those before it. */
export const LAYERS: Layer[] = [
  { name: 'ground floor', folders: ['src/api', 'src/pki', 'src/acme'] },
  { name: 'store', folders: ['src/store'] },
  // metrics: the registry the controller shell (runtime/controller.ts) counts reconciles in, on the runtime's clock
  { name: 'runtime', folders: ['src/runtime', 'src/metrics'] },
  // webhook: cert-manager's admission webhook served on its own (`certsmith webhook`), beside the embedded API server
  { name: 'server', folders: ['src/server', 'src/webhook'] },
  { name: 'shared', folders: ['src/shared'] },
  // notifications: the notifications controller's decision and delivery
  { name: 'controllers', folders: ['src/controllers', 'src/notifications'] },
  { name: 'composition', folders: ['src/composition'] },
  // what a command serves or prints from the store: `certsmith dashboard`, `certsmith doctor`
  { name: 'front ends', folders: ['src/dashboard', 'src/doctor'] },
  { name: 'CLI', folders: ['src/cli'] },
];

/** Layers that never import src/controllers/: like the CLI, they reach the controllers only through src/composition. */
export const NO_CONTROLLER_FOLDER = ['front ends', 'CLI'];

export interface LayerException {
  /** a file, or a folder (ending in '/') whose files all may */
  from: string;
  /** the file imported */
  to: string;
  /**
   * 'leaf': `to` must import nothing of ours, so the exception lets nothing else in;
   * 'move': a file that belongs elsewhere, kept until the files around it can change
   */
  kind: 'leaf' | 'move';
  reason: string;
}

/** The exceptions docs/architecture.md lists; each must still be used (else it is reported). */
export const EXCEPTIONS: LayerException[] = [
  { from: 'src/pki/', to: 'src/runtime/bounded-cache.ts', kind: 'leaf', reason: 'the parse memos of CSRs, DER and keys' },
  { from: 'src/acme/', to: 'src/runtime/retry-after.ts', kind: 'leaf', reason: "the ACME client's Retry-After parsing" },
  { from: 'src/store/', to: 'src/runtime/clock.ts', kind: 'leaf', reason: "the embedded store stamps creation, deletion and event times on the process's clock (FakeClock in tests)" },
];

export interface ImportRules {
  layers: Layer[];
  noControllerFolder: string[];
  exceptions: LayerException[];
}

export const RULES: ImportRules = { layers: LAYERS, noControllerFolder: NO_CONTROLLER_FOLDER, exceptions: EXCEPTIONS };

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...tsFiles(full));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** The repository-relative files a file imports (relative specifiers only; packages are not ours). */
export function importsOf(file: string, text: string, root = ROOT): string[] {
  const info = ts.preProcessFile(text, true, true);
  const targets: string[] = [];
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith('.')) continue;
    targets.push(path.relative(root, path.resolve(path.dirname(file), ref.fileName)).split(path.sep).join('/'));
  }
  return targets;
}

export interface Graph {
  [file: string]: string[];
}

export function buildGraph(root = ROOT): Graph {
  const graph: Graph = {};
  for (const dir of SCANNED) {
    for (const full of tsFiles(path.join(root, dir))) {
      const rel = path.relative(root, full).split(path.sep).join('/');
      graph[rel] = [...new Set(importsOf(full, readFileSync(full, 'utf8'), root))];
    }
  }
  return graph;
}

/** The index in `layers` of the layer holding a file, or -1 when none does. */
function layerIndex(layers: Layer[], file: string): number {
  return layers.findIndex((l) => l.folders.some((f) => file.startsWith(`${f}/`)));
}

const isTest = (file: string) => file.endsWith('.test.ts');

export function layerViolations(graph: Graph, rules: ImportRules = RULES): string[] {
  const { layers, exceptions } = rules;
  const out: string[] = [];
  const used = new Set<LayerException>();
  const exceptionFor = (from: string, to: string) =>
    exceptions.find((e) => e.to === to && (e.from.endsWith('/') ? from.startsWith(e.from) : from === e.from));
  const unplaced = new Set<string>();
  for (const [from, tos] of Object.entries(graph)) {
    // tests may drive a command or a controller from either side; the rule is about the program
    if (!from.startsWith('src/') || isTest(from)) continue;
    const fi = layerIndex(layers, from);
    if (fi < 0) {
      unplaced.add(from.split('/').slice(0, 2).join('/'));
      continue;
    }
    const fromLayer = layers[fi];
    for (const to of tos) {
      if (!to.startsWith('src/')) continue;
      const ti = layerIndex(layers, to);
      if (ti < 0) continue; // reported once for its own folder
      const toLayer = layers[ti];
      const upward = ti > fi;
      const intoControllers = rules.noControllerFolder.includes(fromLayer.name) && to.startsWith('src/controllers/');
      if (!upward && !intoControllers) continue;
      const exception = exceptionFor(from, to);
      if (exception) {
        used.add(exception);
        continue;
      }
      if (upward) {
        const allowed = layers.slice(0, fi + 1).map((l) => l.name).join(', ');
        out.push(`${from} imports ${to}: layer order: the ${fromLayer.name} layer imports only from ${allowed}, not from ${toLayer.name}`);
      } else {
        out.push(`${from} imports ${to}: the ${fromLayer.name} layer never imports a controller's folder (it reaches the controllers through src/composition)`);
      }
    }
  }
  for (const folder of [...unplaced].sort()) {
    out.push(`${folder} is in no layer: place it in LAYERS (scripts/check-imports.ts) and in docs/architecture.md's table`);
  }
  for (const e of exceptions) {
    if (!used.has(e)) {
      out.push(`exception ${e.from} -> ${e.to} is no longer needed: remove it from EXCEPTIONS (scripts/check-imports.ts) and docs/architecture.md`);
      continue;
    }
    // a leaf lets its importers reach nothing else of ours: what it imports would come in through it
    if (e.kind !== 'leaf') continue;
    for (const t of graph[e.to] ?? []) {
      if (t.startsWith('src/')) out.push(`${e.to} imports ${t}: exception ${e.from} -> ${e.to} holds only while ${e.to} imports nothing of ours (${e.reason})`);
    }
  }
  return out;
}

export interface ImportCycle {
  /** a shortest path through the files that returns to its start */
  path: string[];
  /** every file tied into the same knot (the strongly connected component) */
  files: string[];
}

/** One cycle per strongly connected component (Tarjan), with the component's files. */
export function importCycles(graph: Graph): ImportCycle[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strongConnect = (v: string) => {
    // iterative, so a deep import chain cannot overflow the call stack
    const work: { node: string; next: number }[] = [{ node: v, next: 0 }];
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    while (work.length) {
      const frame = work[work.length - 1];
      const edges = (graph[frame.node] ?? []).filter((t) => t in graph);
      if (frame.next < edges.length) {
        const w = edges[frame.next++];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, next: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== frame.node);
        const selfLoop = component.length === 1 && (graph[w] ?? []).includes(w);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  };
  for (const v of Object.keys(graph).sort()) if (!index.has(v)) strongConnect(v);
  return components.map((component) => ({ path: shortestCycle(graph, component), files: component.sort() }));
}

/** The shortest path from the component's first file (by name) back to itself, staying inside it. */
function shortestCycle(graph: Graph, component: string[]): string[] {
  const inside = new Set(component);
  const start = [...component].sort()[0];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph[v] ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const cycle = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = previous.get(u)) cycle.splice(1, 0, u);
        return [...cycle, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

export interface ImportReport {
  files: number;
  layers: string[];
  cycles: ImportCycle[];
}

/** Both rules over the files under `root`. */
export function checkImports(root = ROOT, rules: ImportRules = RULES): ImportReport {
  const graph = buildGraph(root);
  return { files: Object.keys(graph).length, layers: layerViolations(graph, rules), cycles: importCycles(graph) };
}

/** What the CLI prints: each problem and a summary on stderr (and it exits 1), or the all-clear on stdout. */
export function reportLines(r: ImportReport): { stderr: string[]; stdout: string[] } {
  const stderr: string[] = [];
  for (const v of r.layers) stderr.push(`layer rule: ${v}`);
  for (const c of r.cycles) {
    stderr.push(`import cycle: ${c.path.join(' -> ')}`);
    if (c.files.length > c.path.length - 1) stderr.push(`  ${c.files.length} files import each other in a loop: ${c.files.join(', ')}`);
  }
  if (stderr.length) {
    stderr.push(`check-imports: ${r.layers.length} layer violation(s), ${r.cycles.length} import cycle(s) in ${r.files} files`);
    return { stderr, stdout: [] };
  }
  return { stderr, stdout: [`check-imports: ${r.files} files, no layer violations, no import cycles`] };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const { stderr, stdout } = reportLines(checkImports());
  for (const line of stderr) console.error(line);
  for (const line of stdout) console.log(line);
  if (stderr.length) process.exit(1);
}
