// Server-side apply with field ownership, as structured-merge-diff does it on kube-apiserver,
// for the shapes these kinds have: maps (objects) are granular, one field per key; lists are
// atomic (cert-manager's CRDs declare theirs `x-kubernetes-list-type: atomic`), so a list is
// one field. Each apply manager owns the fields its last applied configuration set
// (`metadata.managedFields`, operation Apply, FieldsV1); applying a value another apply
// manager owns with a different value is a conflict unless forced; a field a manager stops
// applying is removed unless another manager still owns it.
// A write that is not an apply records what it set or changed as its manager's (operation
// Update, recordUpdate), so appliers conflict with it as they do on kube-apiserver.
import { isDeepStrictEqual } from 'node:util';
import { StoreError } from '../../store/store.ts';
import type { KubeObject } from '../../api/meta.ts';
import { rfc3339 } from '../../api/time.ts';
import { plainCopy } from '../../api/plain-copy.ts';

type Path = string[];
type Json = Record<string, unknown>;

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Json;
  subresource?: string;
}

const isMap = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const key = (p: Path) => JSON.stringify(p);

/** metadata fields an applier owns; the rest of metadata is the server's or the object's identity */
const ownableMetadata = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences']);

/** The leaf fields a configuration sets: scalars, lists and empty objects; maps are walked. */
export function fieldsOf(config: Json, scope: 'main' | 'status', hasStatusSubresource: boolean): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: Path) => {
    if (isMap(v) && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    } else out.push(path);
  };
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k === 'metadata') {
      if (scope === 'main' && isMap(v)) for (const [mk, mv] of Object.entries(v)) if (ownableMetadata.has(mk)) walk(mv, ['metadata', mk]);
      continue;
    }
    if (scope === 'status' ? k !== 'status' : k === 'status' && hasStatusSubresource) continue;
    walk(v, [k]);
  }
  return out;
}

/** FieldsV1 as kube writes it: {"f:spec":{"f:secretName":{}}} */
export function encodeFieldsV1(paths: Path[]): Json {
  const root: Json = {};
  for (const p of paths) {
    let node = root;
    for (const k of p) node = (node[`f:${k}`] ??= {}) as Json;
  }
  return root;
}

/** The leaf paths of a FieldsV1 set (markers such as "." and list keys are kept as opaque leaves). */
export function decodeFieldsV1(fields: unknown): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, path: Path) => {
    const children = isMap(node) ? Object.keys(node).filter((k) => k !== '.') : [];
    if (children.length === 0) {
      if (path.length) out.push(path);
      return;
    }
    for (const k of children) walk((node as Json)[k], [...path, k.startsWith('f:') ? k.slice(2) : k]);
  };
  walk(fields, []);
  return out;
}

const related = (a: Path, b: Path) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

function valueAt(obj: unknown, path: Path): unknown {
  let v = obj;
  for (const k of path) {
    if (!isMap(v)) return undefined;
    v = v[k];
  }
  return v;
}

function setAt(obj: Json, path: Path, value: unknown) {
  let node = obj;
  for (const k of path.slice(0, -1)) {
    if (!isMap(node[k])) node[k] = {};
    node = node[k] as Json;
  }
  node[path[path.length - 1]] = plainCopy(value);
}

/** Removes a leaf and the maps it leaves empty, up to (not including) the top level. */
function removeAt(obj: Json, path: Path) {
  const parents: Json[] = [obj];
  let node: unknown = obj;
  for (const k of path.slice(0, -1)) {
    if (!isMap(node) || !isMap(node[k])) return;
    node = node[k];
    parents.push(node as Json);
  }
  delete (node as Json)[path[path.length - 1]];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]).length > 0) break;
    delete parents[i - 1][path[i - 1]];
  }
}

/** a string or boolean differs from anything it is not identical to; the rest compare as JSON */
const plain = (v: unknown) => v === undefined || typeof v === 'string' || typeof v === 'boolean';
// recordUpdate compares every leaf of every write, a Secret's whole PEM among them (issue 17)
const equal = (a: unknown, b: unknown) => a === b || (!(plain(a) && plain(b)) && JSON.stringify(a) === JSON.stringify(b));

export interface ApplyRequest {
  manager: string;
  force: boolean;
  /** 'status' for an apply to the status subresource */
  scope: 'main' | 'status';
  hasStatusSubresource: boolean;
  now: () => Date;
  /** for the conflict message: "certificates.cert-manager.io" */
  resource: string;
}

function entryFor(req: ApplyRequest, apiVersion: string | undefined, paths: Path[]): ManagedFieldsEntry {
  return {
    manager: req.manager, operation: 'Apply', ...(apiVersion ? { apiVersion } : {}),
    time: rfc3339(req.now()), fieldsType: 'FieldsV1', fieldsV1: encodeFieldsV1(paths),
    ...(req.scope === 'status' ? { subresource: 'status' } : {}),
  };
}

const sameScope = (e: ManagedFieldsEntry, req: ApplyRequest) => (e.subresource ?? '') === (req.scope === 'status' ? 'status' : '');

/** A new object's managedFields: the applier owns what it applied. */
export function managedFieldsForCreate(config: Json, req: ApplyRequest): ManagedFieldsEntry[] {
  return [entryFor(req, config.apiVersion as string | undefined, fieldsOf(config, req.scope, req.hasStatusSubresource))];
}

/**
 * A conflicting manager as kube's printManager names it: an updater with the apiVersion it wrote
 * (and its subresource), an applier by its name alone.
 */
function managerInWords(e: ManagedFieldsEntry): string {
  let words = JSON.stringify(e.manager ?? '');
  if (e.subresource) words += ` with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === 'Update' && e.apiVersion ? `${words} using ${e.apiVersion}` : words;
}

/**
 * `live` after applying `config` as `req.manager`: the object to store, managedFields included.
 * Throws a 409 naming every conflicting field and its owner unless forced.
 */
export function applyConfiguration(live: KubeObject, config: Json, req: ApplyRequest): KubeObject {
  const entries = ((live.metadata.managedFields ?? []) as ManagedFieldsEntry[]).map((e) => plainCopy(e));
  const applied = fieldsOf(config, req.scope, req.hasStatusSubresource);
  const mine = entries.find((e) => e.manager === req.manager && e.operation === 'Apply' && sameScope(e, req));
  const previous = mine ? decodeFieldsV1(mine.fieldsV1) : [];
  // every other manager counts, appliers and writers (operation Update) alike, as on kube-apiserver
  const others = entries.filter((e) => e !== mine && sameScope(e, req))
    .map((e) => ({ entry: e, paths: decodeFieldsV1(e.fieldsV1) }));

  // a field another applier owns may be applied again with its value (both then own it), not changed
  const conflicts: { entry: ManagedFieldsEntry; path: Path }[] = [];
  for (const other of others) {
    for (const p of other.paths) {
      const clash = applied.find((a) => related(a, p) && !equal(valueAt(config, a.length <= p.length ? a : p), valueAt(live, a.length <= p.length ? a : p)));
      if (clash) conflicts.push({ entry: other.entry, path: p });
    }
  }
  if (conflicts.length && !req.force) {
    const field = (p: Path) => '.' + p.join('.');
    const list = conflicts.map((c) => `conflict with ${managerInWords(c.entry)}: ${field(c.path)}`);
    const message = conflicts.length === 1
      ? `Apply failed with 1 conflict: ${list[0]}`
      : `Apply failed with ${conflicts.length} conflicts: ${list.join('\n')}`;
    throw new StoreError('Conflict', message, conflicts.map((c) => ({ field: field(c.path), message: `conflict with ${managerInWords(c.entry)}`, reason: 'FieldManagerConflict' })));
  }
  // forced: the fields change hands
  for (const c of conflicts) {
    const other = others.find((o) => o.entry.manager === c.entry.manager)!;
    other.paths = other.paths.filter((p) => key(p) !== key(c.path));
    other.entry.fieldsV1 = encodeFieldsV1(other.paths);
  }

  const next = plainCopy(live) as KubeObject & Json;
  const ownedByOthers = (p: Path) => others.some((o) => o.paths.some((q) => related(p, q)));
  const appliedKeys = new Set(applied.map(key));
  for (const p of previous) {
    if (!appliedKeys.has(key(p)) && !applied.some((a) => related(a, p)) && !ownedByOthers(p)) removeAt(next, p);
  }
  for (const p of applied) setAt(next, p, valueAt(config, p));

  const mineNext = entryFor(req, (config.apiVersion as string | undefined) ?? live.apiVersion, applied);
  // an applier forced out of every field no longer appears; the applier keeps its place
  const updated = entries
    .map((e) => (e === mine ? mineNext : e))
    .filter((e) => e === mineNext || !(sameScope(e, req) && decodeFieldsV1(e.fieldsV1).length === 0));
  if (!mine) updated.push(mineNext);
  // nothing changed but the applier's timestamp: the live object as it is, so nothing is written
  // (no new resourceVersion, no watch event), as kube-apiserver does since kubernetes#88875
  if (mine && isDeepStrictEqual(withoutManagedFields(next), withoutManagedFields(live))
    && isDeepStrictEqual(updated.map((e) => (e === mineNext ? { ...e, time: mine.time } : e)), live.metadata.managedFields)) {
    return plainCopy(live);
  }
  next.metadata.managedFields = updated as KubeObject['metadata']['managedFields'];
  return next;
}

function withoutManagedFields(o: KubeObject): KubeObject {
  const { managedFields: _m, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/**
 * Ownership after a write that is not an apply (create, update, merge/JSON patch) by `manager`:
 * it gets (operation Update) every field it set or changed, which every other manager loses,
 * and a field it removed is nobody's. A write that changes nothing leaves managedFields alone,
 * so a no-op stays a no-op. Returns the object to store.
 */
export function recordUpdate<T extends KubeObject>(stored: KubeObject | undefined, next: T, manager: string, hasStatusSubresource: boolean, now: () => Date): T {
  const before = stored ? fieldsOf(stored as unknown as Json, 'main', hasStatusSubresource) : [];
  const after = fieldsOf(next as unknown as Json, 'main', hasStatusSubresource);
  const changed = after.filter((p) => !equal(valueAt(next, p), valueAt(stored, p)));
  const removed = before.filter((p) => valueAt(next, p) === undefined);
  if (changed.length === 0 && removed.length === 0) return next;
  const touched = [...changed, ...removed];
  const entries = ((next.metadata.managedFields ?? []) as ManagedFieldsEntry[]).map((e) => plainCopy(e));
  const mine = entries.find((e) => e.manager === manager && e.operation === 'Update' && !e.subresource);
  const updated: ManagedFieldsEntry[] = [];
  for (const e of entries) {
    if (e === mine || e.subresource) {
      updated.push(e);
      continue;
    }
    const kept = decodeFieldsV1(e.fieldsV1).filter((p) => !touched.some((t) => related(t, p)));
    if (kept.length) updated.push({ ...e, fieldsV1: encodeFieldsV1(kept) });
  }
  const removedKeys = new Set(removed.map(key));
  const own = [...(mine ? decodeFieldsV1(mine.fieldsV1) : []).filter((p) => !touched.some((t) => related(t, p))), ...changed]
    .filter((p) => !removedKeys.has(key(p)));
  const entry: ManagedFieldsEntry = {
    manager, operation: 'Update', ...(next.apiVersion ? { apiVersion: next.apiVersion } : {}),
    time: rfc3339(now()), fieldsType: 'FieldsV1', fieldsV1: encodeFieldsV1(own),
  };
  const at = mine ? updated.indexOf(mine) : -1;
  if (at >= 0) updated.splice(at, 1, ...(own.length ? [entry] : []));
  else if (own.length) updated.push(entry);
  if (updated.length) return { ...next, metadata: { ...next.metadata, managedFields: updated } };
  const { managedFields: _gone, ...metadata } = next.metadata;
  return { ...next, metadata };
}
