// Reading manifests: files, folders (sorted by name) or stdin; multi-document YAML or JSON,
// and `kind: List` documents unpacked, as kubectl reads them.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type * as YAMLModule from 'yaml';
import type { KubeObject } from '../api/meta.ts';

export interface Manifest {
  /** the file it came from ('-' for stdin) */
  file: string;
  obj: KubeObject;
}

export class ManifestError extends Error {
  constructor(readonly file: string, message: string) {
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
    throw new ManifestError(path, 'no such file or directory');
  }
  if (!st.isDirectory()) return [path];
  return readdirSync(path).filter((f) => manifestExtensions.test(f)).sort().map((f) => join(path, f));
}

// The YAML parser is loaded on first use, synchronously (its CommonJS build): `certsmith --help`
// and the commands that read no manifests would otherwise pay for it at start.
let yaml: typeof YAMLModule | undefined;
function yamlModule(): typeof YAMLModule {
  return (yaml ??= createRequire(import.meta.url)('yaml') as typeof YAMLModule);
}

/**
 * The documents of one file, each turned into its object as soon as it is parsed: the parsed
 * document (its syntax tree, several times the object's size) is dropped before the next one is
 * read. parseAllDocuments held every tree at once, about 100 MB for 10,000 Certificates, and a
 * tenth of `certsmith apply`'s time went to collecting them (issue 17).
 */
export function parseManifests(file: string, text: string): Manifest[] {
  const Y = yamlModule();
  const lines = new Y.LineCounter();
  const out: Manifest[] = [];
  for (const doc of new Y.Composer().compose(new Y.Parser(lines.addNewLine).parse(text))) {
    if (doc.errors.length) {
      const err = doc.errors[0];
      const at = err.pos[0] >= 0 ? lines.linePos(err.pos[0]) : undefined;
      throw new ManifestError(file, `invalid YAML: ${err.message.split('\n')[0]}${at ? ` at line ${at.line}, column ${at.col}` : ''}`);
    }
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new ManifestError(file, 'a document is not an object');
    const objs = value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const o of objs) {
      if (!o || typeof o !== 'object' || !o.apiVersion || !o.kind) {
        throw new ManifestError(file, 'a document has no apiVersion or kind');
      }
      o.metadata = o.metadata && typeof o.metadata === 'object' ? o.metadata : {};
      out.push({ file, obj: o as KubeObject });
    }
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
