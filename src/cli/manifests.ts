// Reading manifests: files, folders (sorted by name) or stdin; multi-document YAML or JSON,
// and `kind: List` documents unpacked, as kubectl reads them.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type * as JsYamlModule from 'js-yaml';
import type { KubeObject } from '../api/meta.ts';

export interface Manifest {
  /** the file it came from ('-' for stdin) */
  file: string;
  obj: KubeObject;
}

export class ManifestError extends Error {
  /** `missing`: the path itself does not exist (a mistake in the command line, not in a file) */
  constructor(readonly file: string, message: string, readonly missing = false) {
    super(message);
  }
}

const manifestExtensions = /\.(ya?ml|json)$/i;

/** Every manifest file a path names: the file itself, or a folder's YAML/JSON files sorted by name. */
export function manifestFiles(path: string): string[] {
  if (path === '-') return ['-'];
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new ManifestError(path, 'no such file or directory', true);
  }
  if (!st.isDirectory()) return [path];
  return readdirSync(path).filter((f) => manifestExtensions.test(f)).sort().map((f) => join(path, f));
}

// The YAML reader is loaded on first use, synchronously (its CommonJS build): `certsmith --help`
// and the commands that read no manifests would otherwise pay for it at start. js-yaml, not the
// `yaml` package the server and the printers use: it builds each document's objects directly,
// without a syntax tree, and read 10,000 Certificates in 0.2 s where `yaml` took 1.3-1.5 s, a
// tenth of `certsmith apply`'s time while the server waited (issue 17).
let jsYaml: typeof JsYamlModule | undefined;
let schema: JsYamlModule.Schema | undefined;
function yamlReader(): { Y: typeof JsYamlModule; schema: JsYamlModule.Schema } {
  const Y = (jsYaml ??= createRequire(import.meta.url)('js-yaml') as typeof JsYamlModule);
  // YAML 1.2's core schema (no timestamps: an unquoted date stays a string, as the API expects),
  // and merge keys, which kubectl's YAML reader resolves
  // (js-yaml exports its built-in types as `types`; @types/js-yaml does not declare it)
  schema ??= Y.CORE_SCHEMA.extend({ implicit: [(Y as unknown as { types: { merge: JsYamlModule.Type } }).types.merge] });
  return { Y, schema };
}

/**
 * Values a document's aliases may add once expanded: js-yaml shares an aliased value instead of
 * copying it, so a few lines can stand for 2^40 values (a "billion laughs") that sending the
 * object would write out; the `yaml` package refused these at 100 aliases. A document without
 * aliases adds none, however large (a List of every object of a cluster).
 */
const maxAliasedValues = 1_000_000;

/** Refuses a document whose aliases add more than maxAliasedValues values, or contain themselves (which no JSON can hold). */
function checkAliases(file: string, doc: unknown): void {
  const size = new Map<object, number>();
  const open = new Set<object>();
  let added = 0;
  const expanded = (v: unknown): number => {
    if (v === null || typeof v !== 'object') return 1;
    const seen = size.get(v);
    if (seen !== undefined) {
      // a value met again is an alias: its expansion is what the alias adds
      added += seen;
      if (added > maxAliasedValues) throw new ManifestError(file, `invalid YAML: aliases expand to more than ${maxAliasedValues.toLocaleString('en-US')} values`);
      return seen;
    }
    if (open.has(v)) throw new ManifestError(file, 'invalid YAML: an alias refers to a value that contains it');
    open.add(v);
    let n = 1;
    for (const child of Array.isArray(v) ? v : Object.values(v)) n += expanded(child);
    open.delete(v);
    size.set(v, n);
    return n;
  };
  expanded(doc);
}

/** The objects of one file's documents (a `kind: List` gives its items), in order; empty documents are skipped. */
export function parseManifests(file: string, text: string): Manifest[] {
  const { Y, schema } = yamlReader();
  const out: Manifest[] = [];
  const take = (value: unknown) => {
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || Array.isArray(value)) throw new ManifestError(file, 'a document is not an object');
    checkAliases(file, value);
    const list = value as { kind?: unknown; items?: unknown };
    const objs = list.kind === 'List' && Array.isArray(list.items) ? list.items : [value];
    for (const o of objs) {
      if (!o || typeof o !== 'object' || !o.apiVersion || !o.kind) {
        throw new ManifestError(file, 'a document has no apiVersion or kind');
      }
      o.metadata = o.metadata && typeof o.metadata === 'object' ? o.metadata : {};
      out.push({ file, obj: o as KubeObject });
    }
  };
  try {
    // js-yaml stops at 100 levels by default; cert-manager's own CRDs nest 38 deep and CRDs
    // that embed a PodSpec nest deeper. 1,000 is past any schema and still far from the stack's end.
    // (maxDepth is js-yaml's option; @types/js-yaml does not declare it)
    Y.loadAll(text, take, { schema, filename: file, maxDepth: 1000 } as JsYamlModule.LoadOptions);
  } catch (e) {
    if (!(e instanceof Y.YAMLException)) throw e;
    // the reason alone: the exception's message adds a multi-line snippet of the source
    const at = e.mark ? ` at line ${e.mark.line + 1}, column ${e.mark.column + 1}` : '';
    throw new ManifestError(file, `invalid YAML: ${e.reason}${at}`);
  }
  return out;
}

export function readManifests(paths: string[], stdin: () => string = () => readFileSync(0, 'utf8')): Manifest[] {
  const out: Manifest[] = [];
  for (const p of paths) {
    for (const file of manifestFiles(p)) {
      let text: string;
      try {
        text = file === '-' ? stdin() : readFileSync(file, 'utf8');
      } catch (e) {
        throw new ManifestError(file, `cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      out.push(...parseManifests(file, text));
    }
  }
  return out;
}
