// Create-or-update of a set of manifests, all or nothing at the validation step: every
// document is first checked with a dry run, and nothing is written if any one is refused.
// Used by `certsmith apply` (over HTTP) and `certsmith server --apply` (in process).
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../api/meta.ts';
import { ClusterIssuer, CustomResourceDefinitionType, Issuer, NamespaceType, SecretType, resourceTypeFor, type ResourceType } from '../api/resources.ts';
import { StoreError, isConflict, type Store } from '../store/store.ts';
import type { Manifest } from './manifests.ts';
import { qualifiedKind } from './client.ts';
import { builtInNamespaces } from '../server/namespaces.ts';
import type { FieldValidation } from '../api/unknown-fields.ts';
import { lastAppliedAnnotation, lastAppliedConfiguration, lastAppliedOf } from './last-applied.ts';
import { plainCopy } from '../api/plain-copy.ts';

export type ApplyAction = 'created' | 'configured' | 'unchanged';

interface Plan {
  manifest: Manifest;
  type: ResourceType;
  obj: KubeObject;
  existing?: KubeObject;
  unchanged: boolean;
}

export interface ApplyReport {
  /** "certificate.cert-manager.io/foo created", Namespaces first, then in manifest order */
  applied: string[];
  /** "error: <file>: <Kind> <ns>/<name>: <field>: <message>", one per problem */
  errors: string[];
  /** 'Warning: unknown field "spec.x"', as kubectl prints the server's warnings (fieldValidation Warn) */
  warnings: string[];
}

export interface ApplyOptions {
  defaultNamespace: string;
  /**
   * What to do with fields the schema does not know, as kubectl's --validate: Strict (the
   * default) refuses the document, Warn drops the fields and says so, Ignore drops them.
   */
  fieldValidation?: FieldValidation;
  /**
   * The namespace was given on the command line (`-n`): as kubectl, a document naming another
   * namespace is refused instead of going there.
   */
  enforceNamespace?: boolean;
}

const fieldManager = 'certsmith-apply';

function label(type: ResourceType, obj: KubeObject) {
  const name = obj.metadata.name ?? '';
  return `${type.kind} ${type.namespaced ? `${obj.metadata.namespace}/` : ''}${name}`;
}

function errorLines(file: string, what: string, e: unknown): string[] {
  if (e instanceof StoreError && e.causes.length) {
    return e.causes.map((c) => `error: ${file}: ${what}: ${c.field ? `${c.field}: ` : ''}${c.message}`);
  }
  return [`error: ${file}: ${what}: ${(e as Error).message}`];
}

/**
 * The stored object with the manifest laid over it: server-owned metadata and status survive, and
 * so do labels and annotations others set; those the previous apply set (its last-applied
 * record) and this manifest drops go, as kubectl's three-way merge removes them.
 */
function desiredFrom(existing: KubeObject, obj: KubeObject): KubeObject {
  const out: KubeObject = plainCopy(obj);
  const previous = lastAppliedOf(existing)?.metadata;
  const merged = (field: 'labels' | 'annotations'): Record<string, string> | undefined => {
    const kept: Record<string, string> = { ...existing.metadata[field] };
    const now = obj.metadata[field] ?? {};
    for (const k of Object.keys(previous?.[field] ?? {})) if (!(k in now)) delete kept[k];
    const all = { ...kept, ...now };
    return Object.keys(all).length ? all : undefined;
  };
  // a resourceVersion the manifest carries (an edited export) is a precondition, as kubectl's
  // patch carries it: a newer object refuses it as a conflict instead of losing the newer change
  const resourceVersion = obj.metadata.resourceVersion ?? existing.metadata.resourceVersion;
  out.metadata = { ...existing.metadata, ...obj.metadata, labels: merged('labels'), annotations: merged('annotations'), resourceVersion };
  if (!out.metadata.labels) delete out.metadata.labels;
  if (!out.metadata.annotations) delete out.metadata.annotations;
  if (obj.status === undefined && existing.status !== undefined) out.status = existing.status;
  return out;
}

function comparable(o: KubeObject) {
  const c = plainCopy(o);
  delete c.metadata.resourceVersion;
  delete c.metadata.managedFields;
  delete c.metadata.generation;
  return c;
}

/**
 * Requests in flight at once, over the client's keep-alive connections: a manifest of thousands
 * of objects is bound by round trips when sent one at a time (about 110 objects/s), while a
 * bounded number keeps a server (or a cluster's API priority and fairness) from being flooded.
 * 48, not 16: the embedded server commits the writes that arrive together in one transaction and
 * answers them together, so with 16 in flight client and server took turns (each idle about a
 * third of the time); 48 keeps both busy (10,000 Certificates: 8.1-8.3 s against 8.5-11.2 s).
 */
export const applyConcurrency = 48;

/** fn over every item, at most `limit` at a time; results in the items' order. The first failure rejects. */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * A group of a manifest's documents this large is looked up with one list of its namespace
 * instead of a request per document: re-applying a manifest (every object already there) then
 * costs one dry-run update each, not a dry-run create, a read and a dry-run update.
 */
const listFirstMinimum = 50;
/** ... unless the namespace holds many more objects of the kind than the manifest names (and a page): then reading them all costs more than it saves */
const listFirstMaxRatio = 4;
const listPageSize = 500;

/** The stored objects of one kind in one namespace that `names` lists, or undefined when listing them did not pay (or was refused). */
async function storedAmong(store: Store, type: ResourceType, namespace: string | undefined, names: ReadonlySet<string>): Promise<Map<string, KubeObject> | undefined> {
  const found = new Map<string, KubeObject>();
  let listed = 0;
  let cont: string | undefined;
  try {
    do {
      const page = await store.list(type, { namespace, limit: listPageSize, continue: cont });
      listed += page.items.length;
      if (listed > names.size * listFirstMaxRatio + listPageSize) return undefined;
      for (const o of page.items) if (names.has(o.metadata.name!)) found.set(o.metadata.name!, o);
      cont = page.continue || undefined;
    } while (cont);
  } catch (e) {
    // one who may get but not list (a role with get only), or a list that expired: asked one at a time
    if (e instanceof StoreError) return undefined;
    throw e;
  }
  return found;
}

/** What the check of one document found: its plan, or why it is refused; warnings either way. */
interface Checked {
  plan?: Plan;
  errors: string[];
  warnings: string[];
}

/** Namespaces first (nothing can be created in a namespace that does not exist yet), then CRDs (their kinds may follow), then the rest in manifest order. */
/**
 * What a create sends: kubectl's clears the resourceVersion an exported document carries
 * (resource.Helper with modify), which the API server would refuse.
 */
function creatable(obj: KubeObject): KubeObject {
  if (!obj.metadata.resourceVersion) return obj;
  const { resourceVersion: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/**
 * When a document is written: Namespaces, then CRDs, then what Certificates use (Secrets,
 * Issuers, ClusterIssuers), then the rest. A Certificate written before its imported Secret finds
 * none and is issued again, overwriting the Secret that arrives a moment later.
 */
const WRITE_STAGES = [0, 1, 2, 3];
function writeStage(type: ResourceType | undefined): number {
  if (type === NamespaceType) return 0;
  if (type === CustomResourceDefinitionType) return 1;
  return type === SecretType || type === Issuer || type === ClusterIssuer ? 2 : 3;
}

export async function applyManifests(store: Store, manifests: Manifest[], opts: ApplyOptions): Promise<ApplyReport> {
  const fieldValidation = opts.fieldValidation ?? 'Strict';
  // loaded here: the served schemas it walks are not needed by every command that imports this module
  const { pruneUnknownFields, strictProblems } = await import('../api/unknown-fields.ts');
  const typed = manifests.map((manifest) => ({ manifest, type: resourceTypeFor(manifest.obj.apiVersion, manifest.obj.kind) }));
  const ordered = WRITE_STAGES.flatMap((stage) => typed.filter((t) => writeStage(t.type) === stage));
  const namespacesApplied = new Set(ordered.filter((t) => t.type === NamespaceType).map((t) => t.manifest.obj.metadata?.name));
  // one lookup per namespace, however many objects in it are checked at the same time
  const namespaceExists = new Map<string, Promise<boolean>>();
  const exists = (ns: string): Promise<boolean> => {
    // the server makes these when it starts, also after an in-process `server --apply`
    if (builtInNamespaces.includes(ns)) return Promise.resolve(true);
    let known = namespaceExists.get(ns);
    if (!known) {
      known = store.get(NamespaceType, undefined, ns).then((n) => !!n, (e) => {
        // one who may not read Namespaces (a namespaced role on a cluster) leaves the check to the API server
        if (e instanceof StoreError && e.code === 403) return true;
        throw e;
      });
      namespaceExists.set(ns, known);
    }
    return known;
  };

  // large groups of documents are looked up with one list each (see listFirstMinimum), lazily:
  // a group whose namespace does not exist yet is never listed
  const groupKey = (type: ResourceType, ns: string | undefined) => `${qualifiedKind(type)}\0${ns ?? ''}`;
  /** where a document goes: its own namespace, else the default; none for a cluster-scoped kind */
  const namespaceOf = (type: ResourceType, obj: KubeObject) => (type.namespaced ? obj.metadata.namespace || opts.defaultNamespace : undefined);
  const groups = new Map<string, { type: ResourceType; ns: string | undefined; names: Set<string> }>();
  for (const { manifest, type } of ordered) {
    const name = manifest.obj.metadata?.name;
    if (!type || !name) continue;
    const ns = namespaceOf(type, manifest.obj);
    const key = groupKey(type, ns);
    let group = groups.get(key);
    if (!group) groups.set(key, group = { type, ns, names: new Set() });
    group.names.add(name);
  }
  const listings = new Map<string, Promise<Map<string, KubeObject> | undefined>>();
  const listedIn = async (type: ResourceType, ns: string | undefined): Promise<Map<string, KubeObject> | undefined> => {
    const key = groupKey(type, ns);
    const group = groups.get(key);
    if (!group || group.names.size < listFirstMinimum) return undefined;
    let listing = listings.get(key);
    if (!listing) listings.set(key, listing = storedAmong(store, group.type, group.ns, group.names));
    return listing;
  };

  // one object twice would be written twice, the second write refused after the first was stored:
  // a duplicate is an error of the apply, found before anything is written
  const firstFile = new Map<string, string>();
  /** each document that repeats an earlier one, with the earlier one's file */
  const duplicates = new Map<(typeof typed)[number], string>();
  for (const t of typed) {
    if (!t.type || !t.manifest.obj.metadata?.name) continue;
    const key = `${groupKey(t.type, namespaceOf(t.type, t.manifest.obj))}\0${t.manifest.obj.metadata.name}`;
    const first = firstFile.get(key);
    if (first === undefined) firstFile.set(key, t.manifest.file);
    else duplicates.set(t, first);
  }

  const check = async (t: (typeof ordered)[number]): Promise<Checked> => {
    const { manifest, type } = t;
    const { file } = manifest;
    if (!type) return { errors: [`error: ${file}: unknown kind "${manifest.obj.kind}" in apiVersion "${manifest.obj.apiVersion}"`], warnings: [] };
    const obj = plainCopy(manifest.obj);
    const ns = namespaceOf(type, manifest.obj);
    if (ns === undefined) delete obj.metadata.namespace;
    else obj.metadata.namespace = ns;
    if (!obj.metadata.name) return { errors: [`error: ${file}: ${label(type, obj)}: metadata.name: Required value: name is required`], warnings: [] };
    const own = manifest.obj.metadata?.namespace;
    if (opts.enforceNamespace && type.namespaced && own && own !== opts.defaultNamespace) {
      return { errors: [`error: ${file}: ${label(type, obj)}: the namespace from the provided object "${own}" does not match the namespace "${opts.defaultNamespace}". You must pass '--namespace=${own}' to perform this operation.`], warnings: [] };
    }
    const first = duplicates.get(t);
    if (first !== undefined) return { errors: [`error: ${file}: ${label(type, obj)}: also in ${first}: one apply holds each object once`], warnings: [] };
    // the document as written (unknown fields too, as kubectl records it), before they are pruned
    const lastApplied = lastAppliedConfiguration(obj);
    // checked here, not only by the server: `server --apply` writes in process, and a
    // cluster's API server may be older than fieldValidation
    const unknown = strictProblems([], pruneUnknownFields(type, obj));
    if (unknown.length && fieldValidation === 'Strict') {
      return { errors: [`error: ${file}: ${label(type, obj)}: strict decoding error: ${unknown.join(', ')}`], warnings: [] };
    }
    const warnings = fieldValidation === 'Warn' ? unknown.map((p) => `Warning: ${p}`) : [];
    obj.metadata.annotations = { ...obj.metadata.annotations, [lastAppliedAnnotation]: lastApplied };
    if (ns && !(await exists(ns))) {
      if (!namespacesApplied.has(ns)) return { errors: [`error: ${file}: ${label(type, obj)}: namespaces "${ns}" not found`], warnings };
      // its Namespace comes with this apply, so the API server cannot dry-run it before that is
      // written: cert-manager's defaulting and validation are run here instead, so that an
      // invalid object is refused before its Namespace, or anything else, is stored
      const { admit } = await import('../server/admission.ts');
      try {
        admit(type, plainCopy(obj));
      } catch (e) {
        if (!(e instanceof StoreError)) throw e;
        return { errors: errorLines(file, label(type, obj), e), warnings };
      }
      return { plan: { manifest, type, obj, unchanged: false }, errors: [], warnings };
    }
    try {
      let existing = (await listedIn(type, ns))?.get(obj.metadata.name);
      // not known to exist: a dry-run create first, so a new object (the common case) costs one
      // request here, not a lookup and then a dry run; one that exists answers AlreadyExists
      if (!existing) {
        try {
          await store.create(type, creatable(obj), { dryRun: true, fieldManager });
          return { plan: { manifest, type, obj, unchanged: false }, errors: [], warnings };
        } catch (e) {
          if (!(e instanceof StoreError) || e.reason !== 'AlreadyExists') throw e;
        }
      }
      for (let attempt = 0; ; attempt++) {
        existing ??= await store.get(type, obj.metadata.namespace, obj.metadata.name);
        if (!existing) {
          // deleted in between: check it as new again
          await store.create(type, creatable(obj), { dryRun: true, fieldManager });
          return { plan: { manifest, type, obj, unchanged: false }, errors: [], warnings };
        }
        try {
          const result = await store.update(type, desiredFrom(existing, obj), { dryRun: true, fieldManager });
          return { plan: { manifest, type, obj, existing, unchanged: isDeepStrictEqual(comparable(result), comparable(existing)) }, errors: [], warnings };
        } catch (e) {
          // a controller wrote it (its status, an annotation) after the lookup: look again, a few times
          if (!isConflict(e) || attempt >= 3) throw e;
          existing = undefined;
        }
      }
    } catch (e) {
      if (!(e instanceof StoreError) || e.code === 401 || e.code === 403) throw e;
      return { errors: errorLines(file, label(type, obj), e), warnings };
    }
  };
  const checked = await mapBounded(ordered, applyConcurrency, check);
  const warnings = checked.flatMap((c) => c.warnings);
  const errors = checked.flatMap((c) => c.errors);
  if (errors.length) return { applied: [], errors, warnings };
  const plans = checked.map((c) => c.plan!);

  const write = async (plan: Plan): Promise<{ applied?: string; errors: string[] }> => {
    const { type, obj } = plan;
    const name = `${qualifiedKind(type)}/${obj.metadata.name}`;
    if (plan.unchanged) return { applied: `${name} unchanged`, errors: [] };
    try {
      let existing = plan.existing;
      for (let attempt = 0; ; attempt++) {
        try {
          if (existing) await store.update(type, desiredFrom(existing, obj), { fieldManager });
          else await store.create(type, creatable(obj), { fieldManager });
          break;
        } catch (e) {
          // a controller wrote in between: lay the manifest over the newer object
          if (!isConflict(e) || attempt >= 3) throw e;
          existing = await store.get(type, obj.metadata.namespace, obj.metadata.name!);
        }
      }
      return { applied: `${name} ${plan.existing ? 'configured' : 'created'}`, errors: [] };
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      return { errors: errorLines(plan.manifest.file, label(type, obj), e) };
    }
  };
  // each stage is written before the next starts: an object's Namespace (or CRD) is stored before it
  const written: Array<{ applied?: string; errors: string[] }> = [];
  for (const stage of WRITE_STAGES) {
    written.push(...await mapBounded(plans.filter((p) => writeStage(p.type) === stage), applyConcurrency, write));
  }
  return {
    applied: written.flatMap((w) => (w.applied ? [w.applied] : [])),
    errors: written.flatMap((w) => w.errors),
    warnings,
  };
}
