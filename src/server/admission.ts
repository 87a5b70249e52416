// Admission in front of a Store: defaulting and validation of certsmith kinds on every write,
// and dry-run for every kind. The HTTP API and the in-process controllers both write through
// it, so an object that reached the store has always passed the same checks.
import type { KubeObject, UserInfo } from '../api/meta.ts';
import { isNamespaceType, type ResourceType } from '../api/resources.ts';
import { validate, type FieldError } from '../api/validation.ts';
import { withRequester, withStorageDefaults } from '../api/defaults.ts';
import { inProcessUser } from './users.ts';
import { applyMergePatch, applyJSONPatch } from '../store/patch.ts';
import { checkObjectUpdate, isMap } from '../store/object-checks.ts';
import { applyConfiguration, managedFieldsForCreate, recordUpdate as recordOwnership, type ApplyRequest } from './ssa/apply.ts';
import { checkPatchedIdentity, normalizeSecret } from '../store/sqlite/admission.ts';
import { immortalNamespaces } from './namespaces.ts';
import type { AdmissionCall, ExternalAdmission } from './admission-webhooks/dispatcher.ts';
import { isWebhookConfigurationType, validateWebhookConfiguration } from './admission-webhooks/config-validation.ts';
import { defaultWebhookConfiguration } from './admission-webhooks/config-defaults.ts';
import {
  StoreError, invalidObjectError, isConflict, isNotFound, getForUpdate,
  type Store, type WriteOptions, type PatchOptions, type PatchType, type ListOptions, type WatchOptions, type WatchEvent, type DeleteOptions,
} from '../store/store.ts';
import { plainCopy } from '../api/plain-copy.ts';

const admittedGroups = new Set(['cert-manager.io', 'acme.cert-manager.io']);

/** true for the kinds whose schema certsmith owns (and so validates and defaults) */
export function isAdmitted(type: ResourceType): boolean {
  return admittedGroups.has(type.group);
}

/**
 * Kinds validated on every write: certsmith's own, and the admission webhook configurations,
 * which kube-apiserver itself validates (so whatever `--no-builtin-admission` says).
 */
function validatedOnWrite(type: ResourceType): boolean {
  return isAdmitted(type) || isWebhookConfigurationType(type);
}

/** A 422 listing every problem, as kube-apiserver answers an invalid object. */
function invalidObject(type: ResourceType, obj: KubeObject, errors: FieldError[]): StoreError {
  return invalidObjectError(type, obj.metadata?.name ?? obj.metadata?.generateName ?? '', errors);
}

/** Defaults then validates `obj` as it would be stored; throws a 422 StoreError listing every problem. */
export function admit<T extends KubeObject>(type: ResourceType, obj: T, old?: T): T {
  if (isWebhookConfigurationType(type)) return admitWebhookConfiguration(type, obj, old);
  if (!isAdmitted(type)) return obj;
  // what no kind may hold (non-string annotations, lone surrogates, deep nesting) is refused
  // before defaulting and validation ever see it
  checkObjectUpdate(type, obj, old);
  // obj itself unless a default applies (sharing the rest with it): every store copies what it
  // is given before changing it
  const defaulted = withStorageDefaults(type, obj);
  const errors = validate(type, defaulted, old);
  if (errors.length) throw invalidObject(type, defaulted, errors);
  return defaulted;
}

/** kube-apiserver's v1 defaults and validation of a Validating/MutatingWebhookConfiguration. */
function admitWebhookConfiguration<T extends KubeObject>(type: ResourceType, obj: T, old?: T): T {
  const defaulted = defaultWebhookConfiguration(type, obj);
  const errors = validateWebhookConfiguration(type, defaulted, old);
  if (errors.length) throw invalidObject(type, defaulted, errors);
  return defaulted;
}

/**
 * With built-in admission off (`certsmith server --no-builtin-admission`, for cert-manager's
 * webhook to do it instead), certsmith's kinds still get the structural checks every kind gets.
 */
function admitStructure<T extends KubeObject>(type: ResourceType, obj: T, old?: T): T {
  if (isWebhookConfigurationType(type)) return admitWebhookConfiguration(type, obj, old);
  if (isAdmitted(type)) checkObjectUpdate(type, obj, old);
  return obj;
}

/** A mutating webhook's result with the request's identity, whatever its patch said (a create may have no name yet). */
function keepingIdentity<T extends KubeObject>(type: ResourceType, request: T, mutated: T): T {
  if (mutated === request) return mutated;
  const out = plainCopy(mutated);
  out.apiVersion = request.apiVersion;
  out.kind = request.kind;
  const keep = (field: 'name' | 'generateName' | 'namespace') => {
    if (request.metadata?.[field] === undefined) delete out.metadata[field];
    else out.metadata[field] = request.metadata[field];
  };
  keep('name');
  keep('generateName');
  if (type.namespaced) keep('namespace');
  return out;
}

/**
 * obj with its top level and metadata copied, the rest shared: what the checks normalize in place
 * (metadata, top-level fields) becomes the write's own without a deep copy, since the store copies
 * what it keeps (issue 17).
 */
function withOwnMetadata<T extends KubeObject>(obj: T): T {
  return { ...obj, metadata: isMap(obj.metadata) ? { ...obj.metadata } : obj.metadata };
}

/** What a status write leaves in place: everything but status comes from the stored object. */
function withStatusOf<T extends KubeObject>(stored: T, incoming: T): T {
  // stored is admission's own read and never modified; the incoming status is shared too:
  // admission only reads it, and the store copies the status it keeps
  const out = withOwnMetadata(stored);
  if (incoming.status === undefined) delete (out as KubeObject).status;
  else (out as KubeObject).status = incoming.status;
  if (incoming.metadata.resourceVersion) out.metadata.resourceVersion = incoming.metadata.resourceVersion;
  return out;
}

/** What a main-resource write leaves in place: the stored status, for kinds with a status subresource. */
function withoutStatusChange<T extends KubeObject>(type: ResourceType, stored: T, incoming: T): T {
  if (!type.statusSubresource) return incoming;
  // the stored status (admission's own read) is shared, since the store copies what it keeps
  const out = withOwnMetadata(incoming);
  if (stored.status === undefined) delete (out as KubeObject).status;
  else (out as KubeObject).status = stored.status;
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
      ? applyJSONPatch(plainCopy(current), patch as any) as KubeObject
      // server-side apply is approximated as a merge of the applied configuration
      : applyMergePatch(plainCopy(current), patch as any) as KubeObject;
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw new StoreError(patchType === 'json' ? 'Invalid' : 'BadRequest', `the patch could not be applied: ${(e as Error).message}`);
  }
  if (!out || typeof out !== 'object' || !out.metadata) throw new StoreError('BadRequest', 'the patch removed the object metadata');
  checkPatchedIdentity(type, out, current.metadata.namespace, current.metadata.name!);
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
  return { ...incoming, metadata: { ...incoming.metadata, managedFields: plainCopy(stored.metadata.managedFields) } };
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
  // normalizeSecret replaces top-level fields only, and the checks after this normalize metadata
  // in place: next stays as it is
  const normalized = withOwnMetadata(next);
  normalizeSecret(type, normalized);
  return recordOwnership(stored, normalized, manager, type.statusSubresource, now);
}

export interface AdmissionOptions {
  /** defaulting and validation of certsmith's kinds (default on); off, only the structural checks remain */
  builtin?: boolean;
  /** registered admission webhooks (src/server/admission-webhooks), called around the built-in checks */
  webhooks?: ExternalAdmission;
}

type Operation = AdmissionCall['operation'];

/** The meta.k8s.io/v1 options object an AdmissionReview carries. */
function requestOptions(kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', opts: PatchOptions | undefined): Record<string, unknown> {
  return {
    apiVersion: 'meta.k8s.io/v1', kind,
    ...(opts?.dryRun ? { dryRun: ['All'] } : {}),
    ...(opts?.fieldManager ? { fieldManager: opts.fieldManager } : {}),
    ...(kind === 'PatchOptions' && opts?.force ? { force: true } : {}),
  };
}

/** Who a write is from: the API's authenticated user, else certsmith's own controllers. */
const userOf = (opts?: { user?: UserInfo }): UserInfo => opts?.user ?? inProcessUser;

export function withAdmission(inner: Store, o: AdmissionOptions = {}): Store {
  const builtin = o.builtin !== false;
  const hooks = o.webhooks;
  const admitOne = <T extends KubeObject>(type: ResourceType, obj: T, old?: T): T => (builtin ? admit(type, obj, old) : admitStructure(type, obj, old));
  const wanted = (type: ResourceType, operation: Operation, subresource?: string) => !!hooks && hooks.interested(type, operation, subresource);
  /**
   * The old object an update is computed from, read inside the backend's open batch (the
   * backend re-checks its resourceVersion on write); a committed read when webhooks are to be
   * sent it, since they are outside parties and must not see an unacknowledged write.
   */
  const readForUpdate = <T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): Promise<T | undefined> =>
    (wanted(type, 'UPDATE', subresource) ? inner.get<T>(type, namespace, name) : getForUpdate<T>(inner, type, namespace, name));

  /**
   * kube-apiserver's order: mutating webhooks, then the built-in defaulting and validation of
   * what they left, then validating webhooks, then storage. `shape` keeps what the write may
   * change (a status write only status, identity always the request's) after the patches.
   */
  async function admitted<T extends KubeObject>(call: Omit<AdmissionCall, 'object'> & { object: T; oldObject?: T }, shape: (obj: T) => T): Promise<T> {
    const { type } = call;
    if (!hooks || !hooks.interested(type, call.operation, call.subresource)) return admitOne(type, call.object, call.oldObject);
    const mutated = await hooks.mutate(call) as T;
    const out = admitOne(type, shape(keepingIdentity(type, call.object, mutated)), call.oldObject);
    await hooks.validate({ ...call, object: out });
    return out;
  }

  /** a webhook configuration written here is in the dispatcher's cache before its watch event */
  function written<T extends KubeObject>(type: ResourceType, out: T, opts?: WriteOptions, deleted = false): T {
    if (hooks && !opts?.dryRun && out) hooks.observe(type, out, deleted && !out.metadata?.finalizers?.length);
    return out;
  }

  const store: Store = {
    get: (type, namespace, name) => inner.get(type, namespace, name),
    // for the API's own reads that feed a write (the namespace of a create)
    ...(inner.finalizeNamespace ? { finalizeNamespace: (name: string, finalizers: string[], opts?: WriteOptions) => inner.finalizeNamespace!(name, finalizers, opts) } : {}),
    ...(inner.getForUpdate ? { getForUpdate: <T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string) => inner.getForUpdate!<T>(type, namespace, name) } : {}),
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
      const ready = await admitted({
        type, operation: 'CREATE', name: owned.metadata?.name ?? '', namespace: owned.metadata?.namespace, userInfo: userOf(opts),
        object: builtin ? withRequester(type, owned, userOf(opts)) : owned, dryRun: !!opts?.dryRun, options: requestOptions('CreateOptions', opts),
      }, (x) => x);
      return written(type, await inner.create(type, ready, opts), opts);
    },

    async update<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
      const name = obj.metadata?.name ?? '';
      const stored = await readForUpdate<T>(type, namespaceOf(type, obj), name);
      if (!stored && !validatedOnWrite(type)) return written(type, await inner.update(type, obj, opts), opts);
      if (!stored) throw notFound(type, name);
      let incoming = withManagedFieldsOf(stored, obj);
      if (opts?.fieldManager) incoming = recordUpdate(type, stored, incoming, opts.fieldManager);
      if (!validatedOnWrite(type) && !wanted(type, 'UPDATE')) return written(type, await inner.update(type, incoming, opts), opts);
      checkPrecondition(type, stored, incoming);
      const ready = await admitted({
        type, operation: 'UPDATE', name, namespace: namespaceOf(type, obj), userInfo: userOf(opts),
        object: withoutStatusChange(type, stored, incoming), oldObject: stored, dryRun: !!opts?.dryRun, options: requestOptions('UpdateOptions', opts),
      }, (x) => withoutStatusChange(type, stored, x));
      return written(type, await inner.update(type, ready, opts), opts);
    },

    async updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T> {
      if (!isAdmitted(type) && !wanted(type, 'UPDATE', 'status')) return inner.updateStatus(type, obj, opts);
      const name = obj.metadata?.name ?? '';
      const stored = await readForUpdate<T>(type, namespaceOf(type, obj), name, 'status');
      if (!stored) throw notFound(type, name);
      checkPrecondition(type, stored, obj);
      const ready = await admitted({
        type, operation: 'UPDATE', subresource: 'status', name, namespace: namespaceOf(type, obj), userInfo: userOf(opts),
        object: withStatusOf(stored, obj), oldObject: stored, dryRun: !!opts?.dryRun, options: requestOptions('UpdateOptions', opts),
      }, (x) => withStatusOf(stored, x));
      return inner.updateStatus(type, ready, opts);
    },

    async patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, opts?: PatchOptions): Promise<T> {
      // server-side apply with a field manager tracks ownership (ssa/apply.ts) for every kind;
      // without one (in-process callers) it stays a merge of the applied configuration
      const ssa: ApplyRequest | undefined = patchType === 'apply' && opts?.fieldManager ? {
        manager: opts.fieldManager, force: !!opts.force, scope: opts.subresource === 'status' ? 'status' : 'main',
        hasStatusSubresource: type.statusSubresource, now: () => new Date(),
        resource: type.group ? `${type.plural}.${type.group}` : type.plural,
      } : undefined;
      if (!validatedOnWrite(type) && !ssa && !opts?.fieldManager && !wanted(type, 'UPDATE', opts?.subresource)) {
        return written(type, await inner.patch<T>(type, namespace, name, patchType, patch, opts), opts);
      }
      if (ssa && (!patch || typeof patch !== 'object' || Array.isArray(patch))) throw new StoreError('BadRequest', 'apply patch must be an object');
      // an applied configuration names its object: another name or namespace is refused, as kube's
      // checkName refuses it, not stored under the URL's
      if (ssa) checkPatchedIdentity(type, { ...(patch as KubeObject), metadata: isMap((patch as KubeObject).metadata) ? (patch as KubeObject).metadata : {} }, namespace, name);
      const pinned = (patch as KubeObject | undefined)?.metadata?.resourceVersion;
      // a patch without a resourceVersion is meant to apply to whatever is current, so a
      // concurrent writer is not the caller's conflict: recompute and retry, as kube-apiserver does
      for (let attempt = 0; ; attempt++) {
        const stored = await readForUpdate<T>(type, type.namespaced ? namespace : undefined, name, opts?.subresource);
        if (!stored) {
          if (patchType !== 'apply' || opts?.subresource) throw notFound(type, name);
          const fresh = plainCopy(patch as T);
          fresh.metadata = { ...fresh.metadata, name, ...(type.namespaced && namespace ? { namespace } : {}) };
          if (ssa) fresh.metadata.managedFields = managedFieldsForCreate(patch as Record<string, unknown>, ssa);
          return store.create(type, fresh, opts);
        }
        let next = (ssa ? withIdentityOf(type, stored, applyConfiguration(stored, patch as Record<string, unknown>, ssa)) : patched(type, stored, patchType, patch)) as T;
        if (!ssa && opts?.fieldManager && opts.subresource !== 'status') next = recordUpdate(type, stored, next, opts.fieldManager);
        next.metadata.resourceVersion = pinned ?? stored.metadata.resourceVersion;
        checkPrecondition(type, stored, next);
        const shape = (x: T) => (opts?.subresource === 'status' ? withStatusOf(stored, x) : withoutStatusChange(type, stored, x));
        const ready = await admitted({
          type, operation: 'UPDATE', subresource: opts?.subresource, name, namespace: type.namespaced ? namespace : undefined, userInfo: userOf(opts),
          object: shape(next), oldObject: stored, dryRun: !!opts?.dryRun, options: requestOptions('PatchOptions', opts),
        }, shape);
        try {
          return opts?.subresource === 'status'
            ? await inner.updateStatus(type, ready, opts)
            : written(type, await inner.update(type, ready, opts), opts);
        } catch (e) {
          if (isConflict(e) && !pinned && attempt < 5) continue;
          if (isNotFound(e) && attempt < 5) continue;
          throw e;
        }
      }
    },

    async delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, opts?: DeleteOptions & { dryRun?: boolean }): Promise<T | undefined> {
      if (isNamespaceType(type) && immortalNamespaces.includes(name)) throw new StoreError('Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`);
      if (hooks && wanted(type, 'DELETE')) {
        const stored = await inner.get<T>(type, type.namespaced ? namespace : undefined, name);
        if (stored) {
          const call: AdmissionCall = {
            type, operation: 'DELETE', name, namespace: type.namespaced ? namespace : undefined, userInfo: userOf(opts), oldObject: stored, dryRun: !!opts?.dryRun,
            options: {
              apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', ...(opts?.dryRun ? { dryRun: ['All'] } : {}),
              ...(opts?.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
              ...(opts?.preconditions ? { preconditions: opts.preconditions } : {}),
            },
          };
          await hooks.mutate(call);
          await hooks.validate(call);
        }
      }
      if (!opts?.dryRun) {
        const gone = await inner.delete<T>(type, namespace, name, opts);
        if (gone) written(type, gone, opts, true);
        return gone;
      }
      const stored = await inner.get<T>(type, type.namespaced ? namespace : undefined, name);
      if (!stored) throw notFound(type, name);
      return stored;
    },
  };
  return store;
}
