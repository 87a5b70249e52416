// Test-only Store double: one global revision, watch history, 410 below the compacted
// revision, asynchronous delivery (like a real backend). Enough Kubernetes semantics for
// the runtime's tests; the real backends are under src/store/.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../api/meta.ts';
import type { ResourceType } from '../../api/resources.ts';
import {
  StoreError, type ListOptions, type ListResult, type PatchType, type Store, type Watch, type WatchEvent, type WatchOptions,
} from '../../store/store.ts';

interface HistoryEntry { rev: number; type: ResourceType; event: WatchEvent }
interface Watcher { type: ResourceType; opts: WatchOptions; onEvent: (e: WatchEvent) => void; onError: (e: Error) => void; stopped: boolean }

function matchesLabels(obj: KubeObject, selector?: string): boolean {
  if (!selector) return true;
  const labels = obj.metadata.labels ?? {};
  return selector.split(',').every((term) => {
    const t = term.trim();
    if (t.includes('!=')) { const [k, v] = t.split('!='); return labels[k] !== v; }
    if (t.includes('=')) { const [k, v] = t.split(/==?/); return labels[k] === v; }
    if (t.startsWith('!')) return !(t.slice(1) in labels);
    return t in labels;
  });
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class MemoryStore implements Store {
  private objects = new Map<string, KubeObject>();
  private history: HistoryEntry[] = [];
  private watchers = new Set<Watcher>();
  private rev = 0;
  private compactedRev = 0;
  /** Makes the next writes of a kind fail, for failure-path tests. */
  failWrites?: (verb: string, type: ResourceType, obj?: KubeObject) => Error | undefined;

  private k(type: ResourceType, ns: string | undefined, name: string) {
    return `${type.group}/${type.plural}/${type.namespaced ? ns ?? '' : ''}/${name}`;
  }

  private copy<T>(o: T): T { return structuredClone(o); }

  private emit(type: ResourceType, eventType: WatchEvent['type'], obj: KubeObject) {
    const entry = { rev: this.rev, type, event: { type: eventType, object: this.copy(obj) } };
    this.history.push(entry);
    for (const w of this.watchers) this.deliver(w, entry);
  }

  private deliver(w: Watcher, entry: HistoryEntry) {
    if (entry.type !== w.type) return;
    const o = entry.event.object;
    if (w.opts.namespace && o.metadata.namespace !== w.opts.namespace) return;
    if (!matchesLabels(o, w.opts.labelSelector)) return;
    const event = this.copy(entry.event);
    setImmediate(() => { if (!w.stopped) w.onEvent(event); });
  }

  async get<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined> {
    const o = this.objects.get(this.k(type, namespace, name));
    return o ? (this.copy(o) as T) : undefined;
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<ListResult<T>> {
    const prefix = `${type.group}/${type.plural}/`;
    const items = [...this.objects.entries()]
      .filter(([key, o]) => key.startsWith(prefix) && (!opts.namespace || o.metadata.namespace === opts.namespace) && matchesLabels(o, opts.labelSelector))
      .map(([, o]) => this.copy(o) as T);
    return { items, resourceVersion: String(this.rev) };
  }

  watch<T extends KubeObject = KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => void, onError: (err: Error) => void): Watch {
    const w: Watcher = { type, opts, onEvent: onEvent as (e: WatchEvent) => void, onError, stopped: false };
    const from = opts.resourceVersion ? Number(opts.resourceVersion) : this.rev;
    if (from < this.compactedRev) {
      setImmediate(() => onError(new StoreError('Gone', `too old resource version: ${from} (${this.compactedRev})`)));
      return { stop: () => { w.stopped = true; } };
    }
    for (const entry of this.history) if (entry.rev > from) this.deliver(w, entry);
    this.watchers.add(w);
    return { stop: () => { w.stopped = true; this.watchers.delete(w); } };
  }

  async create<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    this.checkFail('create', type, obj);
    const ns = type.namespaced ? obj.metadata.namespace ?? 'default' : undefined;
    const name = obj.metadata.name ?? `${obj.metadata.generateName ?? 'obj-'}${randomUUID().slice(0, 5)}`;
    const key = this.k(type, ns, name);
    if (this.objects.has(key)) throw new StoreError('AlreadyExists', `${type.plural} "${name}" already exists`);
    this.rev++;
    const stored = this.copy(obj) as KubeObject;
    stored.metadata = { ...stored.metadata, name, namespace: ns, uid: randomUUID(), resourceVersion: String(this.rev), generation: 1, creationTimestamp: new Date().toISOString() };
    this.objects.set(key, stored);
    this.emit(type, 'ADDED', stored);
    return this.copy(stored) as T;
  }

  private replace(type: ResourceType, obj: KubeObject, mutate: (current: KubeObject) => KubeObject): KubeObject {
    const key = this.k(type, obj.metadata.namespace, obj.metadata.name!);
    const current = this.objects.get(key);
    if (!current) throw new StoreError('NotFound', `${type.plural} "${obj.metadata.name}" not found`);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw new StoreError('Conflict', `Operation cannot be fulfilled on ${type.plural} "${obj.metadata.name}": the object has been modified`);
    }
    this.rev++;
    const next = mutate(current);
    next.metadata = { ...next.metadata, uid: current.metadata.uid, creationTimestamp: current.metadata.creationTimestamp, resourceVersion: String(this.rev) };
    this.objects.set(key, next);
    this.emit(type, 'MODIFIED', next);
    return this.copy(next);
  }

  async update<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    this.checkFail('update', type, obj);
    return this.replace(type, obj, (cur) => {
      const next = this.copy(obj) as KubeObject;
      if (type.statusSubresource) next.status = cur.status;
      return next;
    }) as T;
  }

  async updateStatus<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    this.checkFail('updateStatus', type, obj);
    return this.replace(type, obj, (cur) => ({ ...this.copy(cur), status: this.copy(obj.status) })) as T;
  }

  async patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown): Promise<T> {
    if (patchType !== 'merge') throw new StoreError('BadRequest', 'the memory store only does merge patches');
    const ref = { apiVersion: '', kind: type.kind, metadata: { namespace: type.namespaced ? namespace : undefined, name } };
    this.checkFail('patch', type, ref);
    return this.replace(type, ref, (cur) => mergePatch(cur, patch) as KubeObject) as T;
  }

  async delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined> {
    const key = this.k(type, type.namespaced ? namespace : undefined, name);
    const current = this.objects.get(key);
    if (!current) throw new StoreError('NotFound', `${type.plural} "${name}" not found`);
    this.objects.delete(key);
    this.rev++;
    const gone = { ...current, metadata: { ...current.metadata, resourceVersion: String(this.rev) } };
    this.emit(type, 'DELETED', gone);
    return this.copy(gone) as T;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.stopped = true;
    this.watchers.clear();
  }

  /** Forgets history up to now: watches from older revisions get 410 Gone. */
  compact(): void {
    this.compactedRev = this.rev;
    this.history = [];
  }

  /** Ends every open watch with err, as a dropped connection would. */
  breakWatches(err: Error): void {
    for (const w of [...this.watchers]) {
      this.watchers.delete(w);
      w.stopped = true;
      setImmediate(() => w.onError(err));
    }
  }

  /** Changes objects without telling current watchers, so that only a relist can see it. */
  silently(fn: (objects: Map<string, KubeObject>) => void): void {
    fn(this.objects);
    this.rev++;
  }

  watcherCount(): number { return this.watchers.size; }

  private checkFail(verb: string, type: ResourceType, obj?: KubeObject) {
    const err = this.failWrites?.(verb, type, obj);
    if (err) throw err;
  }
}
