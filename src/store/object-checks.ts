// What kube-apiserver's decoder and generic ObjectMeta validation refuse, for every kind: a
// store that took these would hand controllers objects they cannot handle (a number where an
// annotation string belongs, a lone surrogate that no certificate can encode) or that starve
// the server (megabytes of annotations, an object past etcd's size limit, nesting deep enough
// to overflow a recursive copy). One module so the HTTP boundary, admission and the SQLite
// store apply the same rules with the same messages.
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { loneSurrogate } from '../api/unicode.ts';
import { maxAnnotationBytes, soundValue } from '../api/validation/metadata.ts';
import { jsonEqual } from './patch.ts';
import { qualifiedNameError } from '../api/names.ts';
import { StoreError, invalidObjectError } from './store.ts';

/** etcd's default request limit, which bounds every object kube-apiserver stores */
export const maxObjectBytes = 1_572_864;
/**
 * Levels of objects and arrays a body may nest. Go's decoder allows 10000, but our copies and
 * patches recurse and V8 overflows near 2000; the deepest legitimate object (a CRD's OpenAPI
 * schema) needs well under 100.
 */
export const maxNestingDepth = 200;

/** Go's name for a JSON value's type, as its "cannot unmarshal X into ..." errors print it. */
function goJSONType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number': return 'number';
    case 'boolean': return 'bool';
    case 'string': return 'string';
    default: return 'object';
  }
}

function decodeError(message: string): StoreError {
  return new StoreError('BadRequest', message);
}

export const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A map[string]string as Go decodes it: the map itself may be null/absent; a null value
 * becomes "" (Go's zero value); anything else that is not a string is a decode error.
 */
function decodeStringMap(holder: Record<string, unknown>, key: string, goField: string): void {
  const m = holder[key];
  if (m === undefined || m === null) return;
  if (!isMap(m)) throw decodeError(`json: cannot unmarshal ${goJSONType(m)} into Go struct field ${goField} of type map[string]string`);
  for (const [k, v] of Object.entries(m)) {
    if (v === null) m[k] = '';
    else if (typeof v !== 'string') throw decodeError(`json: cannot unmarshal ${goJSONType(v)} into Go struct field ${goField} of type string`);
  }
}

/** The first byte Go's base64.StdEncoding would reject, or -1. Go skips CR and LF. */
export function base64Problem(s: string): number {
  let n = 0;
  let padAt = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || c === 13) continue;
    const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (c === 61) {
      if (padAt < 0) {
        // padding may only complete a quantum of 2 or 3 characters
        if (n % 4 < 2) return i;
        padAt = n;
      }
      n++;
      continue;
    }
    if (!alpha || padAt >= 0) return i;
    n++;
  }
  if (n % 4 !== 0) return s.length;
  if (padAt >= 0 && n - padAt > 2) return s.length;
  return -1;
}

function checkSecretData(obj: Record<string, unknown>): void {
  const data = obj.data;
  if (data !== undefined && data !== null) {
    if (!isMap(data)) throw decodeError(`json: cannot unmarshal ${goJSONType(data)} into Go struct field Secret.data of type map[string][]uint8`);
    for (const [k, v] of Object.entries(data)) {
      if (v === null) {
        data[k] = '';
        continue;
      }
      if (typeof v !== 'string') throw decodeError(`json: cannot unmarshal ${goJSONType(v)} into Go struct field Secret.data of type []uint8`);
      const at = base64Problem(v);
      if (at >= 0) throw decodeError(`illegal base64 data at input byte ${at} (Secret.data[${JSON.stringify(k)}])`);
    }
  }
  decodeStringMap(obj, 'stringData', 'Secret.stringData');
}

/** A field path in kube's notation: a.b[2].c, with keys that are not identifiers bracketed. */
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

function surrogateError(path: string, code: number, isKey: boolean): StoreError {
  const hex = code.toString(16).toUpperCase();
  const what = isKey ? 'a key of this map' : 'the value';
  const message = `${path || '<root>'}: Invalid value: ${what} is not well-formed Unicode: it contains a lone UTF-16 surrogate (U+${hex}); every string must be valid UTF-8`;
  return new StoreError('Invalid', message, [{ field: path, message: `Invalid value: ${what} contains a lone UTF-16 surrogate (U+${hex})`, reason: 'FieldValueInvalid' }]);
}

export function nestingError(limit = maxNestingDepth): StoreError {
  return new StoreError('BadRequest', `the object is nested too deeply: more than ${limit} levels of objects and arrays`);
}

/**
 * One pass over a decoded value: refuses nesting past the limit and any string or key that is
 * not well-formed Unicode, naming its field path. Iterative, so no input can overflow it.
 */
export function checkValueShape(value: unknown, limit = maxNestingDepth): void {
  // the common case: nothing to report, so no field paths to build
  if (soundValue(value, limit)) return;
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: value, path: '', depth: 0 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const bad = loneSurrogate(v);
      if (bad !== undefined) throw surrogateError(path, bad, false);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) throw nestingError(limit);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: childPath(path, i), depth: depth + 1 });
    } else {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i];
        const bad = loneSurrogate(k);
        if (bad !== undefined) throw surrogateError(path, bad, true);
        stack.push({ v: child, path: childPath(path, k), depth: depth + 1 });
      }
    }
  }
}

/**
 * Decoding as kube-apiserver's typed decoder does: metadata.labels and metadata.annotations are
 * map[string]string for every kind, Secret data is base64 and stringData strings. Normalizes
 * null map values to "" in place, as Go's decoder does; throws 400 for what Go cannot decode.
 */
export function normalizeLikeGoDecoder(type: ResourceType, obj: KubeObject): void {
  const meta = obj.metadata as unknown;
  if (meta !== undefined && meta !== null) {
    if (!isMap(meta)) throw decodeError(`json: cannot unmarshal ${goJSONType(meta)} into Go struct field ${type.kind}.metadata of type v1.ObjectMeta`);
    decodeStringMap(meta, 'labels', 'ObjectMeta.metadata.labels');
    decodeStringMap(meta, 'annotations', 'ObjectMeta.metadata.annotations');
    for (const f of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'] as const) {
      const v = meta[f];
      if (v !== undefined && v !== null && typeof v !== 'string') {
        throw decodeError(`json: cannot unmarshal ${goJSONType(v)} into Go struct field ObjectMeta.metadata.${f} of type string`);
      }
    }
  }
  if (type.group === '' && type.kind === 'Secret') checkSecretData(obj as unknown as Record<string, unknown>);
}

/** kube's ValidateAnnotations: qualified-name keys, at most 256 KiB of keys and values together. */
export function checkAnnotations(type: ResourceType, obj: KubeObject): void {
  const annotations = obj.metadata?.annotations;
  if (!annotations) return;
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    total += Buffer.byteLength(k) + Buffer.byteLength(String(v));
    // kube checks an annotation key as a qualified name, case aside
    const problem = qualifiedNameError(k.toLowerCase());
    if (problem) throw invalidObjectError(type, obj.metadata.name ?? '', [{ field: 'metadata.annotations', value: k, message: problem, reason: 'FieldValueInvalid' }]);
  }
  if (total > maxAnnotationBytes) {
    throw new StoreError('Invalid', `${type.kind} "${obj.metadata.name ?? ''}" is invalid: metadata.annotations: Too long: must have at most ${maxAnnotationBytes} bytes`,
      [{ field: 'metadata.annotations', message: `Too long: must have at most ${maxAnnotationBytes} bytes`, reason: 'FieldValueTooLong' }]);
  }
}

/** Everything above, for an object about to be admitted or stored. */
export function checkObject(type: ResourceType, obj: KubeObject): void {
  checkValueShape(obj);
  normalizeLikeGoDecoder(type, obj);
  checkAnnotations(type, obj);
}

/**
 * checkObject for a write that replaces `old`: parts the write leaves exactly as stored (which
 * may predate these rules) are not checked again, as kube-apiserver ratchets new validation;
 * whatever the write changes is.
 */
export function checkObjectUpdate(type: ResourceType, next: KubeObject, old: KubeObject | undefined): void {
  if (!old || next === null || typeof next !== 'object') return checkObject(type, next);
  const o = old as unknown as Record<string, unknown>;
  const n = next as unknown as Record<string, unknown>;
  const probe: Record<string, unknown> = {};
  for (const k of Object.keys(n)) if (k !== 'metadata' && !jsonEqual(n[k], o[k])) probe[k] = n[k];
  if (isMap(n.metadata)) {
    // the name stays, for messages that name the object
    const meta: Record<string, unknown> = { name: n.metadata.name };
    const oldMeta = isMap(o.metadata) ? o.metadata : {};
    for (const k of Object.keys(n.metadata)) if (!jsonEqual(n.metadata[k], oldMeta[k])) meta[k] = n.metadata[k];
    probe.metadata = meta;
  } else probe.metadata = n.metadata;
  checkObject(type, probe as unknown as KubeObject);
  // what Go's decoder normalizes (null map values) is normalized in the object itself too
  if (isMap(n.metadata) && isMap(probe.metadata)) Object.assign(n.metadata, probe.metadata);
  for (const k of ['data', 'stringData']) if (k in probe) n[k] = probe[k];
}

/** etcd's limit on one stored object; `json` is the object as it would be stored. */
export function checkObjectSize(kind: string, name: string | undefined, json: string): void {
  // a UTF-16 code unit is at most 3 bytes of UTF-8: most objects need no count
  if (json.length * 3 <= maxObjectBytes) return;
  const bytes = Buffer.byteLength(json);
  if (bytes > maxObjectBytes) {
    throw new StoreError('RequestEntityTooLarge',
      `Request entity too large: ${kind} "${name ?? ''}" is ${bytes} bytes, more than etcd stores in one object; limit is ${maxObjectBytes}`);
  }
}

/**
 * Whether JSON (or YAML flow) text opens more than `limit` levels of brackets: checked before
 * parsing, so a hostile body costs one linear scan and no recursion. Brackets inside
 * double-quoted strings do not count.
 */
export function textNestsDeeperThan(text: string, limit = maxNestingDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if ((c === 93 || c === 125) && depth > 0) depth--;
  }
  return false;
}
