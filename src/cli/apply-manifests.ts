// Create-or-update of a set of manifests, all or nothing at the validation step: every
// document is first checked with a dry run, and nothing is written if any one is refused.
// Used by `certsmith apply` (over HTTP) and `certsmith server --apply` (in process).
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../api/meta.ts';
import { NamespaceType, resourceTypeFor, type ResourceType } from '../api/resources.ts';
import { StoreError, isConflict, type Store } from '../store/store.ts';
import type { Manifest } from './manifests.ts';
import { qualifiedKind } from './client.ts';
import { builtInNamespaces } from '../server/namespaces.ts';
import type { FieldValidation } from '../api/unknown-fields.ts';

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

/** The stored object with the manifest laid over it: server-owned metadata and status survive. */
function desiredFrom(existing: KubeObject, obj: KubeObject): KubeObject {
  const out: KubeObject = structuredClone(obj);
  out.metadata = {
    ...existing.metadata,
    ...obj.metadata,
    annotations: { ...existing.metadata.annotations, ...obj.metadata.annotations },
    resourceVersion: existing.metadata.resourceVersion,
  };
  if (!Object.keys(out.metadata.annotations!).length) delete out.metadata.annotations;
  if (obj.status === undefined && existing.status !== undefined) out.status = existing.status;
  return out;
}

function comparable(o: KubeObject) {
  const c = structuredClone(o);
  delete c.metadata.resourceVersion;
  delete c.metadata.managedFields;
  delete c.metadata.generation;
  return c;
}

export async function applyManifests(store: Store, manifests: Manifest[], opts: ApplyOptions): Promise<ApplyReport> {
  const errors: string[] = [];
  const warnings: string[] = [];
  const plans: Plan[] = [];
  const fieldValidation = opts.fieldValidation ?? 'Strict';
  // loaded here: the served schemas it walks are not needed by every command that imports this module
  const { pruneUnknownFields, strictProblems } = await import('../api/unknown-fields.ts');
  // Namespaces first: nothing can be created in a namespace that does not exist yet
  const isNamespace = (m: Manifest) => resourceTypeFor(m.obj.apiVersion, m.obj.kind) === NamespaceType;
  const ordered = [...manifests.filter(isNamespace), ...manifests.filter((m) => !isNamespace(m))];
  const namespacesApplied = new Set(ordered.filter(isNamespace).map((m) => m.obj.metadata?.name));
  const namespaceExists = new Map<string, boolean>();
  const exists = async (ns: string) => {
    // the server makes these when it starts, also after an in-process `server --apply`
    if (builtInNamespaces.includes(ns)) return true;
    if (!namespaceExists.has(ns)) {
      try {
        namespaceExists.set(ns, !!(await store.get(NamespaceType, undefined, ns)));
      } catch (e) {
        // one who may not read Namespaces (a namespaced role on a cluster) leaves the check to the API server
        if (!(e instanceof StoreError) || e.code !== 403) throw e;
        namespaceExists.set(ns, true);
      }
    }
    return namespaceExists.get(ns)!;
  };
  for (const manifest of ordered) {
    const { file } = manifest;
    const type = resourceTypeFor(manifest.obj.apiVersion, manifest.obj.kind);
    if (!type) {
      errors.push(`error: ${file}: unknown kind "${manifest.obj.kind}" in apiVersion "${manifest.obj.apiVersion}"`);
      continue;
    }
    const obj = structuredClone(manifest.obj);
    if (type.namespaced) obj.metadata.namespace ||= opts.defaultNamespace;
    else delete obj.metadata.namespace;
    if (!obj.metadata.name) {
      errors.push(`error: ${file}: ${label(type, obj)}: metadata.name: Required value: name is required`);
      continue;
    }
    // checked here, not only by the server: `server --apply` writes in process, and a
    // cluster's API server may be older than fieldValidation
    const unknown = strictProblems([], pruneUnknownFields(type, obj));
    if (unknown.length && fieldValidation === 'Strict') {
      errors.push(`error: ${file}: ${label(type, obj)}: strict decoding error: ${unknown.join(', ')}`);
      continue;
    }
    if (fieldValidation === 'Warn') warnings.push(...unknown.map((p) => `Warning: ${p}`));
    const ns = type.namespaced ? obj.metadata.namespace! : undefined;
    if (ns && !(await exists(ns))) {
      if (!namespacesApplied.has(ns)) {
        errors.push(`error: ${file}: ${label(type, obj)}: namespaces "${ns}" not found`);
        continue;
      }
      // its Namespace comes with this apply, so the API server cannot check it before that is
      // written: it is checked when written
      plans.push({ manifest, type, obj, unchanged: false });
      continue;
    }
    try {
      const existing = await store.get(type, obj.metadata.namespace, obj.metadata.name);
      if (existing) {
        const result = await store.update(type, desiredFrom(existing, obj), { dryRun: true, fieldManager });
        plans.push({ manifest, type, obj, existing, unchanged: isDeepStrictEqual(comparable(result), comparable(existing)) });
      } else {
        await store.create(type, obj, { dryRun: true, fieldManager });
        plans.push({ manifest, type, obj, unchanged: false });
      }
    } catch (e) {
      if (!(e instanceof StoreError) || e.code === 401 || e.code === 403) throw e;
      errors.push(...errorLines(file, label(type, obj), e));
    }
  }
  if (errors.length) return { applied: [], errors, warnings };

  const applied: string[] = [];
  for (const plan of plans) {
    const { type, obj } = plan;
    const name = `${qualifiedKind(type)}/${obj.metadata.name}`;
    if (plan.unchanged) {
      applied.push(`${name} unchanged`);
      continue;
    }
    try {
      let existing = plan.existing;
      for (let attempt = 0; ; attempt++) {
        try {
          if (existing) await store.update(type, desiredFrom(existing, obj), { fieldManager });
          else await store.create(type, obj, { fieldManager });
          break;
        } catch (e) {
          // a controller wrote in between: lay the manifest over the newer object
          if (!isConflict(e) || attempt >= 3) throw e;
          existing = await store.get(type, obj.metadata.namespace, obj.metadata.name!);
        }
      }
      applied.push(`${name} ${plan.existing ? 'configured' : 'created'}`);
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      errors.push(...errorLines(plan.manifest.file, label(type, obj), e));
    }
  }
  return { applied, errors, warnings };
}
