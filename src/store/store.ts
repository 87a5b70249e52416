// The store contract every backend honours (embedded SQLite, and a Kubernetes cluster):
// Kubernetes semantics, because controllers are written once against them.
import type { KubeObject, UserInfo } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { fieldErrorText, invalidObjectMessage, type FieldError } from '../api/validation/field-errors.ts';

export type PatchType = 'merge' | 'json' | 'apply';

export interface ListOptions {
  /** omit (or '') for all namespaces */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  /**
   * resourceVersionMatch=Exact: the collection as it was at this revision (410 once compacted,
   * 504 when not reached yet); an API server is asked with resourceVersionMatch=Exact.
   */
  atRevision?: number;
}

export interface ListResult<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Events strictly after this revision; omit for "from now". '0' or '' means send the current state as ADDED first. */
  resourceVersion?: string;
  allowBookmarks?: boolean;
  /** with allowBookmarks and a resourceVersion of '0' or '': the bookmark after the current state carries k8s.io/initial-events-end (a streaming list) */
  initialEventsEnd?: boolean;
  /**
   * When true, onEvent returning false pauses delivery until Watch.resume() (where the backend
   * supports it). Opt-in, so a handler that happens to return false is never paused.
   */
  backpressure?: boolean;
}

export interface Watch {
  stop(): void;
  /**
   * Resumes delivery after onEvent returned false. Backends that support it pause a watcher
   * whose handler returns false (its consumer cannot take more yet) and close it, with a
   * WatchTooSlowError, if its backlog of live events then outgrows their bound.
   */
  resume?(): void;
  /**
   * The resourceVersion a BOOKMARK may carry now: every change up to it that this watcher is to
   * see has been delivered. Undefined while some are still on their way (and from backends that
   * cannot tell).
   */
  bookmarkRevision?(): string | undefined;
}

/** The watch was closed because its consumer fell too far behind; the caller re-lists. */
export class WatchTooSlowError extends Error {
  constructor(message = 'the watcher fell too far behind and was closed; re-list and watch again') {
    super(message);
    this.name = 'WatchTooSlowError';
  }
}

export interface WriteOptions {
  /** who writes, recorded as the field manager and used in logs */
  fieldManager?: string;
  /** who the API authenticated, for admission (a CertificateRequest's requester); absent for in-process writers */
  user?: UserInfo;
  /** validate only, store nothing */
  dryRun?: boolean;
}

export interface PatchOptions extends WriteOptions {
  subresource?: 'status';
  /** for apply patches: create when missing */
  force?: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  /** 'Background' (default) or 'Foreground' or 'Orphan' */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** as WriteOptions.user */
  user?: UserInfo;
}

export interface Store {
  get<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined>;
  /**
   * The object as the next write to it finds it, counting writes the backend has applied but
   * not yet acknowledged (the embedded store commits the writes of one event-loop turn
   * together). Only for computing a write that the backend then checks against the object's
   * resourceVersion, as admission reads the old object; a client's read is a get, which never
   * shows an unacknowledged write. A backend that acknowledges every write as it applies it
   * leaves this out, and get serves.
   */
  getForUpdate?<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined>;
  /**
   * A Namespace's /finalize subresource (the embedded store, which the API server serves): sets
   * spec.finalizers; a terminating namespace left with none goes at once, content or not.
   */
  finalizeNamespace?(name: string, finalizers: string[], opts?: WriteOptions): Promise<KubeObject>;
  list<T extends KubeObject = KubeObject>(type: ResourceType, opts?: ListOptions): Promise<ListResult<T>>;
  /**
   * Streams changes. onError receives a StoreError with code 410 when resourceVersion is
   * older than the backend keeps; the watch is then over and the caller relists.
   */
  watch<T extends KubeObject = KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => unknown, onError: (err: Error) => void): Watch;
  create<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  /** Replaces metadata and spec (and everything else for kinds without a status subresource). 409 when resourceVersion is stale. */
  update<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  /** Replaces only status. 409 when resourceVersion is set and stale. */
  updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, opts?: PatchOptions): Promise<T>;
  /** Marks for deletion (when finalizers remain) or removes; cascades to dependents by owner uid. Returns the object as last seen. */
  delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<T | undefined>;
  close(): Promise<void>;
  /** Why writes cannot succeed right now (a full disk), for /readyz; undefined when they can. */
  storageProblem?(): string | undefined;
}

export type StoreErrorReason = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Gone' | 'Expired' | 'Invalid' | 'BadRequest' | 'Forbidden' | 'Unauthorized' | 'MethodNotAllowed' | 'InternalError'
  | 'RequestEntityTooLarge' | 'Timeout' | 'InsufficientStorage';

export interface StatusCause {
  field: string;
  message: string;
  reason?: string;
}

const codes: Record<StoreErrorReason, number> = {
  NotFound: 404, AlreadyExists: 409, Conflict: 409, Gone: 410, Expired: 410, Invalid: 422, BadRequest: 400,
  Forbidden: 403, Unauthorized: 401, MethodNotAllowed: 405, InternalError: 500,
  RequestEntityTooLarge: 413, Timeout: 504, InsufficientStorage: 507,
};

/** An error shaped like a Kubernetes metav1.Status failure. */
export class StoreError extends Error {
  readonly code: number;
  /** a list's Status.metadata.continue: where an expired continue token may carry on (inconsistently) */
  listContinue?: string;
  constructor(readonly reason: StoreErrorReason, message: string, readonly causes: StatusCause[] = [], readonly retryAfterSeconds?: number) {
    super(message);
    this.code = codes[reason];
    this.name = 'StoreError';
  }

  toStatus(kind?: string, name?: string) {
    return {
      kind: 'Status', apiVersion: 'v1', metadata: this.listContinue ? { continue: this.listContinue } : {}, status: 'Failure', message: this.message,
      reason: this.reason, code: this.code,
      ...(kind || name || this.causes.length || this.retryAfterSeconds !== undefined
        ? { details: { name, kind, causes: this.causes.length ? this.causes : undefined, ...(this.retryAfterSeconds !== undefined ? { retryAfterSeconds: this.retryAfterSeconds } : {}) } }
        : {}),
    };
  }
}

/**
 * A stored value this store cannot read, and will not be able to until it is started otherwise
 * (encrypted with a key its encryption configuration does not have): retrying cannot help.
 */
export class UnreadableValueError extends StoreError {
  constructor(message: string) {
    super('InternalError', message);
  }
}

/** A 422 listing every problem, as kube-apiserver answers an invalid object: one cause per field error. */
export function invalidObjectError(type: ResourceType, name: string, errors: FieldError[]): StoreError {
  return new StoreError('Invalid', invalidObjectMessage(type, name, errors), errors.map((e) => {
    // a cause carries the field apart, as metav1.StatusCause does
    const text = fieldErrorText(e);
    return { field: e.field, message: text.startsWith(`${e.field}: `) ? text.slice(e.field.length + 2) : text, reason: e.reason };
  }));
}

/** kube-apiserver's storage.NewTooLargeResourceVersionError: 504 Timeout, retry in a second. */
export function tooLargeResourceVersion(requested: number | string, current: number | string): StoreError {
  return new StoreError('Timeout', `Too large resource version: ${requested}, current: ${current}`,
    [{ field: '', message: 'Too large resource version', reason: 'ResourceVersionTooLarge' }], 1);
}

/** The object as the next write finds it: the backend's getForUpdate where it has one, else get. */
export function getForUpdate<T extends KubeObject = KubeObject>(store: Store, type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined> {
  return store.getForUpdate ? store.getForUpdate<T>(type, namespace, name) : store.get<T>(type, namespace, name);
}

export const isNotFound = (e: unknown) => e instanceof StoreError && e.reason === 'NotFound';
export const isConflict = (e: unknown) => e instanceof StoreError && e.code === 409;
/** a 410, Gone or Expired (a compacted revision, an expired continue token): re-list */
export const isGone = (e: unknown) => e instanceof StoreError && e.code === 410;
