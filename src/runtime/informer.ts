// A list-then-watch cache of one resource type, like client-go's shared informer: controllers
// read from it instead of the store, and its handlers turn changes into work-queue keys.
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { isGone, UnreadableValueError, type Store, type Watch, type WatchEvent } from '../store/store.ts';
import { matchesLabels, parseLabelSelector } from '../store/selectors.ts';
import { realClock, type Clock } from './clock.ts';
import { silentLogger, type Logger } from './logger.ts';
import { StringInterner } from './string-interner.ts';

export type IndexFunc<T> = (obj: T) => string[];
export type AddHandler<T> = (obj: T) => void;
export type UpdateHandler<T> = (oldObj: T, newObj: T) => void;
export type DeleteHandler<T> = (obj: T) => void;

export interface InformerOptions<T extends KubeObject> {
  /** watch one namespace only; omit for all */
  namespace?: string;
  labelSelector?: string;
  /**
   * Objects for which this returns false are cached as metadata only (no data, spec or
   * status): Secrets certsmith does not manage are most Secrets in a cluster, and holding
   * their payloads would cost memory for nothing. Handlers see the same trimmed object.
   * No cached object keeps metadata.managedFields (as cert-manager's informers strip them):
   * no controller reads them, and an update that leaves them out keeps the stored ones.
   */
  fullObjectsWhen?: (obj: T) => boolean;
  /** re-deliver every cached object as an update this often (client-go's resync); off when unset */
  resyncMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** first and largest delay before retrying a failed list */
  listRetryBaseMs?: number;
  listRetryMaxMs?: number;
}

/** The key an informer caches an object under: "namespace/name", or "name" when cluster scoped. */
export function cacheKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function keyOf(o: KubeObject): string {
  return cacheKey(o.metadata.namespace, o.metadata.name ?? '');
}

/**
 * Strings of cached objects, shared by content (issue 17: memory per Certificate at 100,000).
 * A generation of 16,384 strings lasts for the writes of a few hundred issuances, long enough
 * for a leaf in its request's status to meet the copy in its Secret's tls.crt.
 */
const sharedStrings = new StringInterner(16_384);

/**
 * JSON.parse already shares string values of up to 10 characters (V8 internalizes them, as it
 * does keys): a namespace, "True", a short name. Looking those up again in a parsed object costs
 * a hash and a Map probe each, about half the time of filling the caches on a restart (issue 17).
 * A copy (an observed write, a watch event) has them as separate strings, from structuredClone
 * or the writer's own: there they are shared too (a Certificate's conditions alone held a dozen
 * "True", "Ready" and reason strings of 24 bytes each), through an interner of their own, small:
 * the few that recur ("True", a namespace) stay, the many seen once (a name, a resourceVersion)
 * pass through it quickly instead of crowding the PEMs out of the long strings' generations.
 */
const PARSER_SHARED_LENGTH = 10;
const shortStrings = new StringInterner(1024);

function sharedString(s: string, parsed: boolean): string {
  if (s.length > PARSER_SHARED_LENGTH) return sharedStrings.intern(s);
  return parsed ? s : shortStrings.intern(s);
}

/**
 * A record for the key sequence `keys`, from a constructor of that sequence's own (issue 17).
 * V8 gives an object literal four in-object fields and puts the rest in a properties array grown
 * in steps (metadata, conditions), while an object made by `new` is sized, after its
 * constructor's first few instances, to exactly the fields they got (up to ten): as JSON.parse
 * makes them, and about a fifth smaller per cached object than a literal filled field by field.
 * The constructors hang off a trie of key sequences, bounded: keys that vary without end (labels,
 * annotations) fall back to a literal once it is full.
 */
interface Shape { make?: new () => Record<string, unknown>; next?: Map<string, Shape> }
const shapes: Shape = {};
const MAX_SHAPES = 4096;
let shapeCount = 0;

function recordShaped(keys: string[]): Record<string, unknown> {
  let shape = shapes;
  for (const k of keys) {
    let next = shape.next?.get(k);
    if (!next) {
      if (shapeCount >= MAX_SHAPES) return {};
      shapeCount++;
      next = {};
      (shape.next ??= new Map()).set(k, next);
    }
    shape = next;
  }
  if (!shape.make) {
    // a plain object still: Object.prototype is its prototype, as a literal's
    const make = function () {} as unknown as { new (): Record<string, unknown>; prototype: object };
    make.prototype = Object.prototype;
    shape.make = make;
  }
  return new shape.make();
}

/**
 * Fields whose strings no other cached object holds: a request's CSR, a Secret's private key.
 * Interning them only cost a hash of a kilobyte each and pushed the strings that do recur (a
 * leaf in its request's status and its Secret) out of the interner's generations sooner.
 */
const NEVER_SHARED = new Set(['request', 'tls.key']);

/** every cached empty object (labels: {}) is this one: frozen, nothing can tell them apart */
const EMPTY = Object.freeze({});

/** Sets record[k], also where k is "__proto__" (JSON.parse makes that an own property; plain assignment would set the prototype). */
function setField(record: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(record, k, { value: v, enumerable: true, writable: true, configurable: true });
  else record[k] = v;
}

/**
 * A store's freshly parsed JSON, deep-frozen in place with its strings shared (see
 * sharedString). What filling the caches on a restart spends most on after parsing (issue 17),
 * so it walks keys with for-in (no array of them per object) and writes back only the strings it
 * interned and the objects it replaced: about a fifth less time than the copying walk below
 * took when it also ran in place.
 */
function frozenInPlace<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const field: unknown = value[i];
      if (typeof field === 'string') {
        if (field.length > PARSER_SHARED_LENGTH) value[i] = sharedStrings.intern(field);
      } else if (field !== null && typeof field === 'object') {
        const v = frozenInPlace(field);
        if (v !== field) value[i] = v;
      }
    }
    return Object.freeze(value);
  }
  const proto: unknown = Object.getPrototypeOf(value);
  // not JSON data (a Date, a Buffer), which no store's parse makes: frozen as it is
  if (proto !== Object.prototype && proto !== null) return Object.freeze(value);
  const record = value as Record<string, unknown>;
  let empty = true;
  for (const k in record) {
    empty = false;
    const field = record[k];
    if (typeof field === 'string') {
      // (strings compare by content: the interned one is written back whether or not it is this one)
      if (field.length > PARSER_SHARED_LENGTH && !NEVER_SHARED.has(k)) setField(record, k, sharedStrings.intern(field));
    } else if (field !== null && typeof field === 'object') {
      const v = frozenInPlace(field);
      if (v !== field) setField(record, k, v);
    }
  }
  return (empty ? EMPTY : Object.freeze(record)) as T;
}

/**
 * A copy of value, deep-frozen with its strings shared: plain objects and arrays are copied,
 * strings are immutable and kept. structuredClone copied every string too, and a deep copy here
 * costs a fraction of its serialise-and-parse.
 */
function frozenCopySharingStrings<T>(value: T): T {
  if (typeof value === 'string') return sharedString(value, false) as T;
  if (!value || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = frozenCopySharingStrings(value[i]);
    return Object.freeze(out) as T;
  }
  const proto = Object.getPrototypeOf(value);
  // not JSON data (a Date, a Buffer): copied whole, as structuredClone did
  if (proto !== Object.prototype && proto !== null) return Object.freeze(structuredClone(value));
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0 && proto === Object.prototype) return EMPTY as T;
  const out = recordShaped(keys);
  for (const k of keys) {
    const field = record[k];
    setField(out, k, typeof field === 'string' && NEVER_SHARED.has(k) ? field : frozenCopySharingStrings(field));
  }
  return Object.freeze(out) as T;
}

/**
 * True when a's resourceVersion is below b's. Versions are opaque to clients in general; ours and
 * etcd-backed API servers' are integers, and only then are they compared (as client-go's
 * integer mutation cache does); anything else is never "older".
 */
function olderRevision(a: KubeObject, b: KubeObject): boolean {
  const x = a.metadata.resourceVersion;
  const y = b.metadata.resourceVersion;
  if (!x || !y || !/^[0-9]{1,15}$/.test(x) || !/^[0-9]{1,15}$/.test(y)) return false;
  return Number(x) < Number(y);
}

const namespaceIndex = '__namespace';
const LIST_PAGE_SIZE = 500;

/**
 * Cache keys by index value. Most values (an owner's uid, a Secret's name) name one object, so
 * one key is held as the string itself: a Set for each would cost more than the key (issue 17).
 */
interface Index<T> { fn: IndexFunc<T>; byValue: Map<string, string | Set<string>> }

/**
 * Cached objects are deep-frozen and shared between every reader: clone before changing
 * one (`structuredClone(obj)`), and write the clone through the store.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly indices = new Map<string, Index<T>>();
  private readonly addHandlers = new Set<AddHandler<T>>();
  private readonly updateHandlers = new Set<UpdateHandler<T>>();
  private readonly deleteHandlers = new Set<DeleteHandler<T>>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private watch?: Watch;
  /** bumped on every (re)list so that callbacks of an abandoned watch are ignored */
  private generation = 0;
  private started = false;
  private stopped = false;
  private synced = false;
  private listing = false;
  private listFailures = 0;
  private cancelRetry?: () => void;
  private cancelResync?: () => void;
  private syncWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private activity = 0;
  private labels?: ReturnType<typeof parseLabelSelector>;

  constructor(readonly store: Store, readonly type: ResourceType, private readonly opts: InformerOptions<T> = {}) {
    this.clock = opts.clock ?? realClock;
    this.log = (opts.logger ?? silentLogger).child({ informer: type.plural });
    this.indices.set(namespaceIndex, { fn: (o) => [o.metadata.namespace ?? ''], byValue: new Map() });
  }

  /** Adds a secondary index, e.g. CertificateRequests by owner uid; may be called after start. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indices.has(name)) throw new Error(`informer ${this.type.plural}: index ${name} already exists`);
    const index: Index<T> = { fn, byValue: new Map() };
    this.indices.set(name, index);
    for (const [key, obj] of this.cache) this.indexAdd(index, key, obj);
  }

  hasIndex(name: string): boolean {
    return this.indices.has(name);
  }

  /** A handler added after the cache has filled is told about every cached object at once (as in client-go). */
  onAdd(fn: AddHandler<T>): () => void {
    this.addHandlers.add(fn);
    if (this.synced) for (const obj of this.cache.values()) this.emit(() => fn(obj));
    return () => this.addHandlers.delete(fn);
  }

  onUpdate(fn: UpdateHandler<T>): () => void {
    this.updateHandlers.add(fn);
    return () => this.updateHandlers.delete(fn);
  }

  onDelete(fn: DeleteHandler<T>): () => void {
    this.deleteHandlers.add(fn);
    return () => this.deleteHandlers.delete(fn);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(cacheKey(this.type.namespaced ? namespace : undefined, name));
  }

  list(namespace?: string): T[] {
    if (!namespace) return [...this.cache.values()];
    return this.byIndex(namespaceIndex, namespace);
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`informer ${this.type.plural}: no index ${indexName}`);
    const keys = index.byValue.get(value);
    if (keys === undefined) return [];
    if (typeof keys === 'string') {
      const o = this.cache.get(keys);
      return o ? [o] : [];
    }
    const out: T[] = [];
    for (const k of keys) {
      const o = this.cache.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`informer ${this.type.plural} stopped before it synced`));
    return new Promise((resolve, reject) => this.syncWaiters.push({ resolve, reject }));
  }

  /** True when synced and no list is in flight: nothing the informer knows of is undelivered. */
  isIdle(): boolean {
    return this.synced && !this.listing;
  }

  /** Grows with every delivered change; lets whenIdle() tell a quiet informer from a busy one. */
  activityCount(): number {
    return this.activity;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    void this.relist();
    if (this.opts.resyncMs) this.scheduleResync(this.opts.resyncMs);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.generation++;
    this.watch?.stop();
    this.watch = undefined;
    this.cancelRetry?.();
    this.cancelResync?.();
    for (const w of this.syncWaiters.splice(0)) w.reject(new Error(`informer ${this.type.plural} stopped before it synced`));
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    const gen = ++this.generation;
    this.watch?.stop();
    this.watch = undefined;
    this.listing = true;
    this.activity++;
    let result;
    try {
      result = await this.listInPages();
    } catch (err) {
      if (gen !== this.generation) return;
      this.listing = false;
      // a value the store cannot read (encrypted with a key it is not given) stays unreadable:
      // the controllers waiting for this informer fail to start, naming it, instead of waiting forever
      if (err instanceof UnreadableValueError && !this.synced) {
        for (const w of this.syncWaiters.splice(0)) w.reject(err);
        this.log.error({ err: err.message }, 'list failed, and cannot succeed as the store is configured');
        return;
      }
      this.scheduleRelist(err as Error);
      return;
    }
    if (gen !== this.generation) return;
    this.listFailures = 0;
    this.replace(result.items, result.resourceVersion);
    this.listing = false;
    this.startWatch(gen, result.resourceVersion);
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w.resolve();
    }
  }

  /**
   * Lists in pages and trims each page as it arrives: one response holding every Secret of a
   * large cluster (hundreds of MB of JSON) would cost far more memory than the cache itself.
   */
  private async listInPages(): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let resourceVersion = '';
    let cont: string | undefined;
    do {
      const page = await this.store.list<T>(this.type, {
        namespace: this.opts.namespace, labelSelector: this.opts.labelSelector, limit: LIST_PAGE_SIZE, continue: cont,
      });
      // a list's items are this call's own (every Store parses them for it): no copy needed
      for (const item of page.items) items.push(this.prepare(item, true));
      // the first page's revision is the snapshot every later page belongs to
      resourceVersion ||= page.resourceVersion;
      cont = page.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }

  private scheduleRelist(err: Error): void {
    const base = this.opts.listRetryBaseMs ?? 1000;
    const max = this.opts.listRetryMaxMs ?? 30_000;
    const delay = Math.min(max, base * 2 ** this.listFailures++);
    this.log.warn({ err: err.message, retryInMs: delay }, 'list failed');
    this.cancelRetry?.();
    this.cancelRetry = this.clock.setTimer(delay, () => void this.relist());
  }

  private startWatch(gen: number, resourceVersion: string): void {
    this.watch = this.store.watch<T>(
      this.type,
      { namespace: this.opts.namespace, labelSelector: this.opts.labelSelector, resourceVersion, allowBookmarks: true },
      (e) => { if (gen === this.generation) this.handleEvent(e); },
      (err) => {
        if (gen !== this.generation || this.stopped) return;
        if (isGone(err)) this.log.debug({ err: err.message }, 'watch expired, relisting');
        else this.log.warn({ err: err.message }, 'watch failed, relisting');
        void this.relist();
      },
    );
  }

  /**
   * Read-your-writes, as client-go's mutation cache: an object a controller has just written,
   * as the store returned it, enters the cache (and reaches the handlers) at once instead of
   * when its watch event arrives; that event is then recognised as not newer and skipped. Without
   * this a controller re-reconciling before its own watch event decides on what it just replaced.
   */
  observe(obj: T): void {
    if (!this.synced || this.stopped || !this.inScope(obj)) return;
    this.handleEvent({ type: 'MODIFIED', object: obj });
  }

  private inScope(obj: T): boolean {
    if (this.opts.namespace && obj.metadata.namespace !== this.opts.namespace) return false;
    if (!this.opts.labelSelector) return true;
    this.labels ??= parseLabelSelector(this.opts.labelSelector);
    return matchesLabels(this.labels, obj.metadata.labels);
  }

  private handleEvent(e: WatchEvent<T>): void {
    if (e.type === 'BOOKMARK') return;
    this.activity++;
    const incoming = e.object;
    const key = keyOf(incoming);
    const old = this.cache.get(key);
    // the watch event of an observed write, or one older than it, changes nothing
    if (old && ((e.type !== 'DELETED' && old.metadata.resourceVersion === incoming.metadata.resourceVersion) || olderRevision(incoming, old))) return;
    if (e.type === 'DELETED') {
      if (!old) return;
      this.remove(key, old);
      this.emit(() => { for (const h of this.deleteHandlers) h(old); });
      return;
    }
    const obj = this.prepare(incoming);
    this.put(key, obj, old);
    if (old) this.emit(() => { for (const h of this.updateHandlers) h(old, obj); });
    else this.emit(() => { for (const h of this.addHandlers) h(obj); });
  }

  /** Swaps in a fresh list (already prepared), telling handlers about what changed while we were not watching. */
  private replace(items: T[], resourceVersion: string): void {
    // the first list (a start, or a restart with every object stored) has nothing to compare
    // with and nothing gone: no Set of every key among it, no pass for deletions
    const seen = this.cache.size === 0 ? undefined : new Set<string>();
    for (const item of items) {
      const key = keyOf(item);
      seen?.add(key);
      const old = this.cache.get(key);
      if (old && (old.metadata.resourceVersion === item.metadata.resourceVersion || olderRevision(item, old))) continue;
      const obj = item;
      this.put(key, obj, old);
      if (old) this.emit(() => { for (const h of this.updateHandlers) h(old, obj); });
      else this.emit(() => { for (const h of this.addHandlers) h(obj); });
    }
    if (!seen) return;
    const snapshot = { metadata: { resourceVersion } } as KubeObject;
    for (const [key, old] of [...this.cache]) {
      // written (and observed) after the list's snapshot: not gone, just newer than the list
      if (seen.has(key) || olderRevision(snapshot, old)) continue;
      this.remove(key, old);
      this.emit(() => { for (const h of this.deleteHandlers) h(old); });
    }
  }

  /**
   * The object as cached: frozen, its strings shared, without managedFields (and trimmed to
   * metadata unless fullObjectsWhen). Copied first unless `owned`: watch events and observed
   * writes may be held by others too (the writer that gets its result back).
   */
  private prepare(obj: T, owned = false): T {
    const full = !this.opts.fullObjectsWhen || this.opts.fullObjectsWhen(obj);
    const { managedFields: _managedFields, ...metadata } = obj.metadata;
    const cached = (full ? { ...obj, metadata } : { apiVersion: obj.apiVersion, kind: obj.kind, metadata }) as T;
    return owned ? frozenInPlace(cached) : frozenCopySharingStrings(cached);
  }

  private put(key: string, obj: T, old: T | undefined): void {
    if (old) for (const index of this.indices.values()) this.indexRemove(index, key, old);
    this.cache.set(key, obj);
    for (const index of this.indices.values()) this.indexAdd(index, key, obj);
  }

  private remove(key: string, old: T): void {
    this.cache.delete(key);
    for (const index of this.indices.values()) this.indexRemove(index, key, old);
  }

  private indexAdd(index: Index<T>, key: string, obj: T): void {
    for (const v of index.fn(obj)) {
      const keys = index.byValue.get(v);
      if (keys === undefined) index.byValue.set(v, key);
      else if (typeof keys !== 'string') keys.add(key);
      else if (keys !== key) index.byValue.set(v, new Set([keys, key]));
    }
  }

  private indexRemove(index: Index<T>, key: string, obj: T): void {
    for (const v of index.fn(obj)) {
      const keys = index.byValue.get(v);
      if (keys === undefined) continue;
      if (typeof keys === 'string') {
        if (keys === key) index.byValue.delete(v);
        continue;
      }
      keys.delete(key);
      if (keys.size === 1) index.byValue.set(v, keys.values().next().value as string);
      else if (keys.size === 0) index.byValue.delete(v);
    }
  }

  private emit(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'event handler threw');
    }
  }

  private scheduleResync(every: number): void {
    this.cancelResync = this.clock.setTimer(every, () => {
      if (this.stopped) return;
      if (this.synced) for (const obj of this.cache.values()) this.emit(() => { for (const h of this.updateHandlers) h(obj, obj); });
      this.scheduleResync(every);
    });
  }
}

/** One informer per resource type for a store, shared by every controller that reads the type. */
export class InformerFactory {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private started = false;

  constructor(readonly store: Store, private readonly defaults: { clock?: Clock; logger?: Logger; namespace?: string; resyncMs?: number } = {}) {}

  /**
   * The shared informer for type. Options apply when the informer is first created; a later
   * caller gets the existing one (so the first caller decides e.g. fullObjectsWhen).
   */
  informerFor<T extends KubeObject = KubeObject>(type: ResourceType, opts: InformerOptions<T> = {}): Informer<T> {
    const id = `${type.group}/${type.version}/${type.plural}`;
    let informer = this.informers.get(id) as Informer<T> | undefined;
    if (!informer) {
      informer = new Informer<T>(this.store, type, {
        clock: this.defaults.clock, logger: this.defaults.logger,
        namespace: type.namespaced ? this.defaults.namespace : undefined, resyncMs: this.defaults.resyncMs, ...opts,
      });
      this.informers.set(id, informer as unknown as Informer<KubeObject>);
      if (this.started) informer.start();
    }
    return informer;
  }

  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /**
   * store, with every acknowledged create, update and patch also fed to the informer of its type
   * (Informer.observe): what the controllers write through, so each reads its own writes.
   * Deletes are left to the watch: their result does not say whether the object is gone.
   */
  observing(store: Store): Store {
    const seen = <T extends KubeObject>(type: ResourceType, p: Promise<T>, opts?: { dryRun?: boolean }): Promise<T> => p.then((obj) => {
      if (opts?.dryRun) return obj;
      const informer = this.informers.get(`${type.group}/${type.version}/${type.plural}`);
      if (informer && obj?.metadata) informer.observe(obj);
      return obj;
    });
    return {
      get: (t, ns, n) => store.get(t, ns, n),
      ...(store.getForUpdate ? { getForUpdate: <T extends KubeObject>(t: ResourceType, ns: string | undefined, n: string) => store.getForUpdate!<T>(t, ns, n) } : {}),
      list: (t, o) => store.list(t, o),
      watch: (t, o, e, err) => store.watch(t, o, e, err),
      create: (t, o, w) => seen(t, store.create(t, o, w), w),
      update: (t, o, w) => seen(t, store.update(t, o, w), w),
      updateStatus: (t, o, w) => seen(t, store.updateStatus(t, o, w), w),
      patch: (t, ns, n, pt, p, o) => seen(t, store.patch(t, ns, n, pt, p, o), o),
      delete: (t, ns, n, o) => store.delete(t, ns, n, o),
      close: () => store.close(),
    };
  }

  /** Starts every informer made so far, and any made later. */
  start(): void {
    this.started = true;
    for (const i of this.informers.values()) i.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.all().map((i) => i.waitForSync()));
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop();
  }
}
