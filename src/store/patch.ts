// JSON merge patch (RFC 7386) and JSON patch (RFC 6902) as pure functions, so that every
// backend and the API server apply patches the same way. Inputs are never mutated.
import { StoreError } from './store.ts';
import { plainCopy } from '../api/plain-copy.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality of JSON values; object key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  // undefined-valued keys do not survive JSON, so they count as absent
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}

/** RFC 7386: objects merge recursively, null removes a member, anything else replaces. */
export function applyMergePatch<T = unknown>(target: unknown, patch: unknown): T {
  if (!isPlainObject(patch)) return plainCopy(patch) as T;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = applyMergePatch(result[k], v);
  }
  // members not touched by the patch were copied shallowly above; detach them from the input
  for (const k of Object.keys(result)) if (!(k in patch)) result[k] = plainCopy(result[k]);
  return result as T;
}

export interface JSONPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

/**
 * A JSON patch that does not apply to the object (a missing path, a failed test): kube-apiserver
 * answers a generic 422 (NewGenericServerResponse) that names no object and carries the patch
 * library's error as its one cause, which is what kubectl prints.
 */
export class PatchNotApplicable extends StoreError {
  constructor(message: string) {
    super('Invalid', message);
  }

  override toStatus(): ReturnType<StoreError['toStatus']> {
    const status = {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request',
      reason: this.reason, code: this.code, details: { causes: [{ reason: 'UnexpectedServerResponse', message: this.message }] },
    };
    // a cause with no field, as kube's: StatusCause's field is optional on the wire
    return status as unknown as ReturnType<StoreError['toStatus']>;
  }
}

const ops = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

function parsePointer(p: unknown, what: string): string[] {
  if (typeof p !== 'string') throw new StoreError('BadRequest', `json patch: ${what} must be a string`);
  if (p === '') return [];
  if (!p.startsWith('/')) throw new StoreError('BadRequest', `json patch: ${what} "${p}" must start with "/"`);
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(token: string, length: number, allowEnd: boolean, path: string): number {
  if (allowEnd && token === '-') return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchNotApplicable(`json patch: "${token}" in "${path}" is not an array index`);
  const i = Number(token);
  if (i > length || (!allowEnd && i === length)) throw new PatchNotApplicable(`json patch: index ${i} out of range in "${path}"`);
  return i;
}

/** Walks to the container of the last token; the container must exist. */
function parentOf(doc: Json, tokens: string[], path: string): Json {
  let cur: Json = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(t, cur.length, false, path)];
    else if (isPlainObject(cur) && Object.prototype.hasOwnProperty.call(cur, t)) cur = (cur as Record<string, Json>)[t];
    else throw new PatchNotApplicable(`json patch: path "${path}" does not exist`);
  }
  if (typeof cur !== 'object' || cur === null) throw new PatchNotApplicable(`json patch: path "${path}" does not exist`);
  return cur;
}

function getAt(doc: Json, tokens: string[], path: string): Json {
  if (tokens.length === 0) return doc;
  const parent = parentOf(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false, path)];
  const obj = parent as Record<string, Json>;
  if (!Object.prototype.hasOwnProperty.call(obj, last)) throw new PatchNotApplicable(`json patch: path "${path}" does not exist`);
  return obj[last];
}

function removeAt(doc: Json, tokens: string[], path: string): Json {
  if (tokens.length === 0) throw new PatchNotApplicable('json patch: cannot remove the whole document');
  const parent = parentOf(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false, path), 1)[0];
  const obj = parent as Record<string, Json>;
  if (!Object.prototype.hasOwnProperty.call(obj, last)) throw new PatchNotApplicable(`json patch: path "${path}" does not exist`);
  const old = obj[last];
  delete obj[last];
  return old;
}

/** Returns the new document (the root can be replaced). */
function addAt(doc: Json, tokens: string[], value: Json, path: string, replace: boolean): Json {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, !replace, path);
    if (replace) parent[i] = value;
    else parent.splice(i, 0, value);
  } else {
    const obj = parent as Record<string, Json>;
    if (replace && !Object.prototype.hasOwnProperty.call(obj, last)) throw new PatchNotApplicable(`json patch: path "${path}" does not exist`);
    obj[last] = value;
  }
  return doc;
}

/**
 * RFC 6902. A malformed operation is BadRequest (400); an operation that cannot be applied
 * (missing path, failed test) is Invalid (422), as the Kubernetes API server answers.
 */
/** kube-apiserver's bounds on one JSON patch: its operations, and what its copies add in all (its request size limit). */
export const maxJSONPatchOperations = 10_000;
export const maxJSONPatchCopyBytes = 3 * 1024 * 1024;

export function applyJSONPatch<T = unknown>(target: unknown, operations: unknown): T {
  if (!Array.isArray(operations)) throw new StoreError('BadRequest', 'json patch must be an array of operations');
  if (operations.length > maxJSONPatchOperations) {
    throw new StoreError('RequestEntityTooLarge', `The allowed maximum operations in a JSON patch is ${maxJSONPatchOperations}, got ${operations.length}`);
  }
  // copies are the one operation that grows the document beyond the request: each doubling a value doubles the next
  let copied = 0;
  let doc = plainCopy(target) as Json;
  for (const raw of operations) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || !ops.has(raw.op)) {
      throw new StoreError('BadRequest', `json patch: invalid operation ${JSON.stringify(raw)}`);
    }
    const op = raw as unknown as JSONPatchOperation;
    const path = parsePointer(op.path, 'path');
    const needsValue = op.op === 'add' || op.op === 'replace' || op.op === 'test';
    if (needsValue && !('value' in raw)) throw new StoreError('BadRequest', `json patch: "${op.op}" needs a value`);
    switch (op.op) {
      case 'add':
        doc = addAt(doc, path, plainCopy(op.value) as Json, op.path, false);
        break;
      case 'replace':
        doc = addAt(doc, path, plainCopy(op.value) as Json, op.path, true);
        break;
      case 'remove':
        removeAt(doc, path, op.path);
        break;
      case 'move': {
        const from = parsePointer(op.from, 'from');
        if (op.path.startsWith(`${op.from}/`)) throw new PatchNotApplicable(`json patch: cannot move "${op.from}" into itself`);
        if (op.from === op.path) break;
        const v = removeAt(doc, from, op.from!);
        doc = addAt(doc, path, v, op.path, false);
        break;
      }
      case 'copy': {
        const from = parsePointer(op.from, 'from');
        const value = getAt(doc, from, op.from!);
        copied += JSON.stringify(value)?.length ?? 0;
        if (copied > maxJSONPatchCopyBytes) {
          throw new StoreError('RequestEntityTooLarge', `Unable to copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxJSONPatchCopyBytes}`);
        }
        doc = addAt(doc, path, plainCopy(value), op.path, false);
        break;
      }
      case 'test':
        if (!jsonEqual(getAt(doc, path, op.path), op.value)) {
          throw new PatchNotApplicable(`json patch: test failed at "${op.path}"`);
        }
        break;
    }
  }
  return doc as T;
}
