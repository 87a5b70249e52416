// Import rules `npm run lint` enforces beyond ESLint (issue 13):
//   1. the layers (tests excepted): src/cli never imports a controller's folder (only src/shared, src/api and the
//      ground-floor modules, plus the composition entry points listed in CLI_MAY_IMPORT), and
//      nothing under src/controllers imports src/cli;
//   2. no import cycle between files, type-only imports included: a cycle of types still ties
//      the files' meanings together, and the next value import through it is a runtime cycle.
// Every import form counts: `import`, `import type`, `export … from`, `import('…')`.
// Prints each broken rule and each cycle, and exits 1 when there is any. The checks take the
// root directory as an argument so test/tooling/check-imports.test.ts can run them on fixture trees.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SCANNED = ['src', 'test', 'bench', 'scripts'];
/** Controller files the CLI may import: the composition entry that starts the controllers. */
const CLI_MAY_IMPORT = new Set(['src/controllers/manager.ts']);

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

export function layerViolations(graph: Graph): string[] {
  const out: string[] = [];
  for (const [from, tos] of Object.entries(graph)) {
    // tests may drive a command or a controller from either side; the rule is about the program
    if (from.endsWith('.test.ts')) continue;
    for (const to of tos) {
      if (from.startsWith('src/cli/') && to.startsWith('src/controllers/') && !CLI_MAY_IMPORT.has(to)) {
        out.push(`${from} imports ${to}: the CLI uses src/shared, src/api and the ground floor, never a controller's folder`);
      }
      if (from.startsWith('src/controllers/') && to.startsWith('src/cli/')) {
        out.push(`${from} imports ${to}: controllers never import the CLI`);
      }
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
export function checkImports(root = ROOT): ImportReport {
  const graph = buildGraph(root);
  return { files: Object.keys(graph).length, layers: layerViolations(graph), cycles: importCycles(graph) };
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
