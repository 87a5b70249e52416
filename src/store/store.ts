// The store contract every backend honours (embedded SQLite, and a Kubernetes cluster):
// Kubernetes semantics, because controllers are written once against them.
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';

export type PatchType = 'merge' | 'json' | 'apply';

export interface ListOptions {
  /** omit (or '') for all namespaces */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
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
}

export interface Watch {
  stop(): void;
}

export interface WriteOptions {
  /** who writes, recorded as the field manager and used in logs */
  fieldManager?: string;
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
}

export interface Store {
  get<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined>;
  list<T extends KubeObject = KubeObject>(type: ResourceType, opts?: ListOptions): Promise<ListResult<T>>;
  /**
   * Streams changes. onError receives a StoreError with code 410 when resourceVersion is
   * older than the backend keeps; the watch is then over and the caller relists.
   */
  watch<T extends KubeObject = KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => void, onError: (err: Error) => void): Watch;
  create<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  /** Replaces metadata and spec (and everything else for kinds without a status subresource). 409 when resourceVersion is stale. */
  update<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  /** Replaces only status. 409 when resourceVersion is set and stale. */
  updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, opts?: PatchOptions): Promise<T>;
  /** Marks for deletion (when finalizers remain) or removes; cascades to dependents by owner uid. Returns the object as last seen. */
  delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<T | undefined>;
  close(): Promise<void>;
}

export type StoreErrorReason = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Gone' | 'Invalid' | 'BadRequest' | 'Forbidden' | 'Unauthorized' | 'MethodNotAllowed' | 'InternalError';

export interface StatusCause {
  field: string;
  message: string;
  reason?: string;
}

const codes: Record<StoreErrorReason, number> = {
  NotFound: 404, AlreadyExists: 409, Conflict: 409, Gone: 410, Invalid: 422, BadRequest: 400,
  Forbidden: 403, Unauthorized: 401, MethodNotAllowed: 405, InternalError: 500,
};

/** An error shaped like a Kubernetes metav1.Status failure. */
export class StoreError extends Error {
  readonly code: number;
  constructor(readonly reason: StoreErrorReason, message: string, readonly causes: StatusCause[] = []) {
    super(message);
    this.code = codes[reason];
    this.name = 'StoreError';
  }

  toStatus(kind?: string, name?: string) {
    return {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message,
      reason: this.reason, code: this.code,
      ...(kind || name || this.causes.length ? { details: { name, kind, causes: this.causes.length ? this.causes : undefined } } : {}),
    };
  }
}

export const isNotFound = (e: unknown) => e instanceof StoreError && e.reason === 'NotFound';
export const isConflict = (e: unknown) => e instanceof StoreError && e.code === 409;
export const isGone = (e: unknown) => e instanceof StoreError && e.reason === 'Gone';
