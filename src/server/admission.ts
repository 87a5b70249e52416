// Admission in front of a Store: defaulting and validation of certsmith kinds on every write,
// and dry-run for every kind. The HTTP API and the in-process controllers both write through
// it, so an object that reached the store has always passed the same checks.
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { validate, invalidObjectMessage, fieldErrorText } from '../api/validation.ts';
import { applyDefaults } from '../api/defaults.ts';
import { applyMergePatch, applyJSONPatch } from '../store/patch.ts';
import { checkObjectUpdate } from '../store/object-checks.ts';
import { applyConfiguration, managedFieldsForCreate, recordUpdate as recordOwnership, type ApplyRequest } from './ssa/apply.ts';
import { normalizeSecret } from '../store/sqlite/admission.ts';
import {
  StoreError, isConflict, isNotFound,
  type Store, type WriteOptions, type PatchOptions, type PatchType, type ListOptions, type WatchOptions, type WatchEvent, type DeleteOptions,
} from '../store/store.ts';

const admittedGroups = new Set(['cert-manager.io', 'acme.cert-manager.io']);

/** true for the kinds whose schema certsmith owns (and so validates and defaults) */
export function isAdmitted(type: ResourceType): boolean {
  return admittedGroups.has(type.group);
}

const clone = <T>(o: T): T => structuredClone(o);

/** Defaults then validates `obj` as it would be stored; throws a 422 StoreError listing every problem. */
export function admit<T extends KubeObject>(type: ResourceType, obj: T, old?: T): T {
  if (!isAdmitted(type)) return obj;
  // what no kind may hold (non-string annotations, lone surrogates, deep nesting) is refused
  // before defaulting and validation ever see it
  checkObjectUpdate(type, obj, old);
  const defaulted = applyDefaults(type, clone(obj));
  const errors = validate(type, defaulted, old);
  if (errors.length) {
    const name = defaulted.metadata?.name ?? defaulted.metadata?.generateName ?? '';
    throw new StoreError('Invalid', invalidObjectMessage(type, name, errors), errors.map((e) => {
      // a cause carries the field apart, as metav1.StatusCause does
      const text = fieldErrorText(e);
      return { field: e.field, message: text.startsWith(`${e.field}: `) ? text.slice(e.field.length + 2) : text, reason: e.reason };
    }));
  }
  return defaulted;
}

/** What a status write leaves in place: everything but status comes from the stored object. */
function withStatusOf<T extends KubeObject>(stored: T, incoming: T): T {
  const out = clone(stored);
  if (incoming.status === undefined) delete (out as KubeObject).status;
  else (out as KubeObject).status = clone(incoming.status);
  if (incoming.metadata.resourceVersion) out.metadata.resourceVersion = incoming.metadata.resourceVersion;
  return out;
}

/** What a main-resource write leaves in place: the stored status, for kinds with a status subresource. */
function withoutStatusChange<T extends KubeObject>(type: ResourceType, stored: T, incoming: T): T {
  if (!type.statusSubresource) return incoming;
  const out = clone(incoming);
  if (stored.status === undefined) delete (out as KubeObject).status;
  else (out as KubeObject).status = clone(stored.status);
  return out;
}

function notFound(type: ResourceType, name: string): StoreError {
  const resource = type.group ? `${type.plural}.${type.group}` : type.plural;
  return new StoreError('NotFound', `${resource} "${name}" not found`);
}

function checkPrecondition(type: ResourceType, stored: KubeObject, incoming: KubeObject) {
  const rv = incoming.metadata.resourceVersion;
  if (rv && rv !== stored.metadata.resourceVersion) {
    const resource = type.group ? `${type.plural}.${type.group}` : type.plural;
    throw new StoreError('Conflict', `Operation cannot be fulfilled on ${resource} "${stored.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`);
  }
}

function namespaceOf(type: ResourceType, obj: KubeObject): string | undefined {
  return type.namespaced ? obj.metadata.namespace : undefined;
}

function patched(type: ResourceType, current: KubeObject, patchType: PatchType, patch: unknown): KubeObject {
  let out: KubeObject;
  try {
    out = patchType === 'json'
      ? applyJSONPatch(clone(current), patch as any) as KubeObject
      // server-side apply is approximated as a merge of the applied configuration
      : applyMergePatch(clone(current), patch as any) as KubeObject;
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw new StoreError(patchType === 'json' ? 'Invalid' : 'BadRequest', `the patch could not be applied: ${(e as Error).message}`);
  }
  if (!out || typeof out !== 'object' || !out.metadata) throw new StoreError('BadRequest', 'the patch removed the object metadata');
  // identity is the request's, whatever the patch says
  out.metadata.name = current.metadata.name;
  if (type.namespaced) out.metadata.namespace = current.metadata.namespace;
  out.apiVersion = current.apiVersion;
  out.kind = current.kind;
  return out;
}

/**
 * An update that does not mention managedFields (`kubectl replace`, a client that drops them)
 * keeps the stored ones, as kube-apiserver does: field ownership is not lost by omission.
 * An explicit list (even empty) replaces them.
 */
function withManagedFieldsOf<T extends KubeObject>(stored: T, incoming: T): T {
  if (incoming.metadata?.managedFields !== undefined || stored.metadata.managedFields === undefined) return incoming;
  return { ...incoming, metadata: { ...incoming.metadata, managedFields: clone(stored.metadata.managedFields) } };
}

/** identity is the request's, whatever the patch says */
function withIdentityOf(type: ResourceType, current: KubeObject, out: KubeObject): KubeObject {
  out.metadata.name = current.metadata.name;
  if (type.namespaced) out.metadata.namespace = current.metadata.namespace;
  out.apiVersion = current.apiVersion;
  out.kind = current.kind;
  return out;
}

const now = () => new Date();

/** Ownership of a non-apply write, computed on the object as it will be stored (a Secret's stringData is data by then). */
function recordUpdate<T extends KubeObject>(type: ResourceType, stored: T | undefined, next: T, manager: string): T {
  const normalized = clone(next);
  normalizeSecret(type, normalized);
  return recordOwnership(stored, normalized, manager, type.statusSubresource, now);
}

export function withAdmission(inner: Store): Store {
  const store: Store = {
    get: (type, namespace, name) => inner.get(type, namespace, name),
    list: (type, opts?: ListOptions) => inner.list(type, opts),
    watch: <T extends KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => void, onError: (err: Error) => void) =>
      inner.watch<T>(type, opts, onEvent, onError),
    close: () => inner.close(),
    storageProblem: () => inner.storageProblem?.(),

    // dry runs go down to the storage layer with the admitted object: only it knows what a
    // write really stores (Secret stringData folded into data, system fields, generation), and
    // `kubectl diff` compares exactly that with the live object
    async create<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
      // the writer owns what it created (an apply that creates has set its own entry)
      const owned = opts?.fieldManager && obj.metadata?.managedFields === undefined ? recordUpdate(type, undefined, obj, opts.fieldManager) : obj;
      return inner.create(type, admit(type, owned), opts);
    },

    async update<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
      const name = obj.metadata?.name ?? '';
      const stored = await inner.get<T>(type, namespaceOf(type, obj), name);
      if (!stored && !isAdmitted(type)) return inner.update(type, obj, opts);
      if (!stored) throw notFound(type, name);
      let incoming = withManagedFieldsOf(stored, obj);
      if (opts?.fieldManager) incoming = recordUpdate(type, stored, incoming, opts.fieldManager);
      if (!isAdmitted(type)) return inner.update(type, incoming, opts);
      checkPrecondition(type, stored, incoming);
      return inner.update(type, admit(type, withoutStatusChange(type, stored, incoming), stored), opts);
    },

    async updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
      if (!isAdmitted(type)) return inner.updateStatus(type, obj, opts);
      const name = obj.metadata?.name ?? '';
      const stored = await inner.get<T>(type, namespaceOf(type, obj), name);
      if (!stored) throw notFound(type, name);
      checkPrecondition(type, stored, obj);
      return inner.updateStatus(type, admit(type, withStatusOf(stored, obj), stored), opts);
    },

    async patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, opts?: PatchOptions): Promise<T> {
      // server-side apply with a field manager tracks ownership (ssa/apply.ts) for every kind;
      // without one (in-process callers) it stays a merge of the applied configuration
      const ssa: ApplyRequest | undefined = patchType === 'apply' && opts?.fieldManager ? {
        manager: opts.fieldManager, force: !!opts.force, scope: opts.subresource === 'status' ? 'status' : 'main',
        hasStatusSubresource: type.statusSubresource, now: () => new Date(),
        resource: type.group ? `${type.plural}.${type.group}` : type.plural,
      } : undefined;
      if (!isAdmitted(type) && !ssa && !opts?.fieldManager) return inner.patch<T>(type, namespace, name, patchType, patch, opts);
      if (ssa && (!patch || typeof patch !== 'object' || Array.isArray(patch))) throw new StoreError('BadRequest', 'apply patch must be an object');
      const pinned = (patch as KubeObject | undefined)?.metadata?.resourceVersion;
      // a patch without a resourceVersion is meant to apply to whatever is current, so a
      // concurrent writer is not the caller's conflict: recompute and retry, as kube-apiserver does
      for (let attempt = 0; ; attempt++) {
        const stored = await inner.get<T>(type, type.namespaced ? namespace : undefined, name);
        if (!stored) {
          if (patchType !== 'apply' || opts?.subresource) throw notFound(type, name);
          const fresh = clone(patch as T);
          fresh.metadata = { ...fresh.metadata, name, ...(type.namespaced && namespace ? { namespace } : {}) };
          if (ssa) fresh.metadata.managedFields = managedFieldsForCreate(patch as Record<string, unknown>, ssa);
          return store.create(type, fresh, opts);
        }
        let next = (ssa ? withIdentityOf(type, stored, applyConfiguration(stored, patch as Record<string, unknown>, ssa)) : patched(type, stored, patchType, patch)) as T;
        if (!ssa && opts?.fieldManager && opts.subresource !== 'status') next = recordUpdate(type, stored, next, opts.fieldManager);
        next.metadata.resourceVersion = pinned ?? stored.metadata.resourceVersion;
        checkPrecondition(type, stored, next);
        next = opts?.subresource === 'status' ? withStatusOf(stored, next) : withoutStatusChange(type, stored, next);
        const admitted = admit(type, next, stored);
        try {
          return opts?.subresource === 'status'
            ? await inner.updateStatus(type, admitted, opts)
            : await inner.update(type, admitted, opts);
        } catch (e) {
          if (isConflict(e) && !pinned && attempt < 5) continue;
          if (isNotFound(e) && attempt < 5) continue;
          throw e;
        }
      }
    },

    async delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, opts?: DeleteOptions & { dryRun?: boolean }): Promise<T | undefined> {
      if (!opts?.dryRun) return inner.delete<T>(type, namespace, name, opts);
      const stored = await inner.get<T>(type, type.namespaced ? namespace : undefined, name);
      if (!stored) throw notFound(type, name);
      return stored;
    },
  };
  return store;
}
