// Unknown and duplicate fields, found and pruned as kube-apiserver does for structural schemas
// (fieldValidation=Strict|Warn|Ignore). A field the schema does not declare is pruned on every
// write, unless it sits under `x-kubernetes-preserve-unknown-fields` or in a map
// (`additionalProperties`); Strict refuses the write instead, Warn says so in Warning headers.
// The schemas are the ones the server publishes at /openapi/v3, so what kubectl explains is
// exactly what is kept.
import type { ResourceType } from './resources.ts';
import * as R from './resources.ts';
import { componentName, openAPIV3Document } from './openapi.ts';
import type { JSONSchemaObject } from './crdgen.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** One field the schema does not know: as kube prints it ("spec.ports[0].x") and as a JSON pointer's tokens. */
export interface UnknownField {
  path: string;
  pointer: string[];
}

/**
 * The kinds whose served schema lists every field they have: cert-manager's CRDs and the core
 * kinds whose top level is complete (their spec or status may be open). The others certsmith
 * stores (webhook configurations, APIService, CRDs, Gateway API) are served without a schema
 * for their content, so nothing of theirs is pruned.
 */
const checkedKinds = new Set<ResourceType>([
  R.Certificate, R.CertificateRequest, R.Issuer, R.ClusterIssuer, R.Order, R.Challenge,
  R.SecretType, R.NamespaceType, R.EventType, R.LeaseType, R.PodType, R.ServiceType, R.IngressType,
]);

interface Resolved {
  schemas: Record<string, JSONSchemaObject>;
  root: JSONSchemaObject;
}

const cache = new Map<ResourceType, Resolved | undefined>();

function resolvedFor(type: ResourceType): Resolved | undefined {
  if (cache.has(type)) return cache.get(type);
  let out: Resolved | undefined;
  if (checkedKinds.has(type)) {
    const doc = openAPIV3Document(type.group, type.version) as { components?: { schemas?: Record<string, JSONSchemaObject> } } | undefined;
    const schemas = doc?.components?.schemas;
    const root = schemas?.[componentName(type)];
    if (schemas && root) out = { schemas, root };
  }
  cache.set(type, out);
  return out;
}

/** Whether writes of this kind are checked for unknown fields. */
export function hasFieldSchema(type: ResourceType): boolean {
  return resolvedFor(type) !== undefined;
}

function deref(s: JSONSchemaObject | undefined, schemas: Record<string, JSONSchemaObject>): JSONSchemaObject | undefined {
  for (let i = 0; s && i < 8; i++) {
    const ref = (s.$ref ?? (Array.isArray(s.allOf) && s.allOf.length === 1 ? (s.allOf[0] as JSONSchemaObject).$ref : undefined)) as string | undefined;
    if (!ref) return s;
    s = schemas[ref.replace('#/components/schemas/', '')];
  }
  return s;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Removes from `value` (in place) every field its schema does not declare and returns them,
 * in kube's order (sorted by path). `mergePatch` walks a merge patch instead of an object: a
 * null there deletes, so an unknown field set to null is dropped without being reported.
 */
function prune(value: unknown, schema: JSONSchemaObject | undefined, schemas: Record<string, JSONSchemaObject>, opts: { mergePatch: boolean }): UnknownField[] {
  const out: UnknownField[] = [];
  const walk = (v: unknown, raw: JSONSchemaObject | undefined, path: string, pointer: string[]) => {
    const s = deref(raw, schemas);
    if (!s) return;
    if (Array.isArray(v)) {
      if (s.type !== undefined && s.type !== 'array') return;
      const items = s.items as JSONSchemaObject | undefined;
      if (items) v.forEach((item, i) => walk(item, items, `${path}[${i}]`, [...pointer, String(i)]));
      return;
    }
    // a value of the wrong type is validation's to refuse, not pruning's to empty
    if (!isPlainObject(v) || (s.type !== undefined && s.type !== 'object')) return;
    const props = (s.properties ?? {}) as Record<string, JSONSchemaObject>;
    const additional = isPlainObject(s.additionalProperties) ? s.additionalProperties as JSONSchemaObject : undefined;
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    for (const key of Object.keys(v)) {
      const childPath = path ? `${path}.${key}` : key;
      const childPointer = [...pointer, key];
      if (Object.hasOwn(props, key)) walk(v[key], props[key], childPath, childPointer);
      else if (additional) walk(v[key], additional, childPath, childPointer);
      else if (!preserve) {
        if (!(opts.mergePatch && v[key] === null)) out.push({ path: childPath, pointer: childPointer });
        delete v[key];
      }
    }
  };
  walk(value, schema, '', []);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Prunes an object of `type` in place; the fields removed, sorted. Kinds without a full schema are left alone. */
export function pruneUnknownFields(type: ResourceType, obj: unknown): UnknownField[] {
  const r = resolvedFor(type);
  return r ? prune(obj, r.root, r.schemas, { mergePatch: false }) : [];
}

/** Prunes a JSON merge patch (or a strategic merge patch, whose directives certsmith's kinds do not use) for `type` in place. */
export function pruneUnknownPatchFields(type: ResourceType, patch: unknown): UnknownField[] {
  const r = resolvedFor(type);
  return r ? prune(patch, r.root, r.schemas, { mergePatch: true }) : [];
}

/** A JSON pointer from its tokens (RFC 6901 escaping). */
export function jsonPointer(tokens: string[]): string {
  return tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

/**
 * Paths of keys that occur twice in the same object of a JSON text, in the order they appear
 * ("metadata.name", "spec.ports[0].hostPort"), as kube's strict decoder reports them.
 * `text` must already have parsed as JSON.
 */
export function duplicateFields(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  // every request body of a write is scanned (issue 17: a fifth of the server's admission time
  // went here): the closing quote is found with indexOf, and a string is decoded only when it is
  // a key that holds an escape
  const skipString = () => {
    for (let end = text.indexOf('"', i + 1); ; end = text.indexOf('"', end + 1)) {
      if (end < 0) {
        i = text.length;
        return;
      }
      let slashes = 0;
      while (text.charCodeAt(end - 1 - slashes) === 92) slashes++;
      if (slashes % 2 === 0) {
        i = end + 1;
        return;
      }
    }
  };
  const str = (): string => {
    const start = i;
    skipString();
    const raw = text.slice(start + 1, i - 1);
    return raw.includes('\\') ? JSON.parse(text.slice(start, i)) as string : raw;
  };
  const value = (path: string) => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const key = str();
        const childPath = path ? `${path}.${key}` : key;
        if (seen.has(key)) out.push(childPath);
        seen.add(key);
        ws();
        i++; // ':'
        value(childPath);
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`);
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      skipString();
    } else {
      while (i < text.length && !',}] \n\r\t'.includes(text[i])) i++;
    }
  };
  value('');
  return out;
}

/** kube's problem list: duplicates first, in the order they appear, then unknown fields. */
export function strictProblems(duplicates: string[], unknown: UnknownField[]): string[] {
  return [...duplicates.map((p) => `duplicate field "${p}"`), ...unknown.map((u) => `unknown field "${u.path}"`)];
}

/** `fieldValidation` as kube-apiserver reads it: absent means Warn. */
export function parseFieldValidation(value: string | null | undefined): FieldValidation | undefined {
  if (value === null || value === undefined || value === '') return 'Warn';
  return value === 'Strict' || value === 'Warn' || value === 'Ignore' ? value : undefined;
}
