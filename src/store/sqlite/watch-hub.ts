// Fans committed changes out to watchers. Delivery is always asynchronous (setImmediate) so a
// handler never runs inside the call stack of the write that caused it, and in revision order
// per watcher: a watcher's backlog (replayed from the log) is queued before any live change.
import type { KubeObject } from '../../api/meta.ts';
import type { Watch, WatchEvent, WatchEventType } from '../store.ts';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from '../selectors.ts';

/** One committed row of the log, as JSON text so every watcher parses its own copy. */
export interface ChangeRecord {
  rev: number;
  grp: string;
  plural: string;
  ns: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  value: string;
  /** the object before this change; needed to tell selector entries/exits apart */
  prevValue?: string;
}

export interface WatcherSpec {
  grp: string;
  plural: string;
  /** '' for all namespaces */
  namespace: string;
  labels: LabelSelector;
  fields: FieldSelector;
}

interface Watcher extends WatcherSpec {
  cursor: number;
  queue: WatchEvent[];
  onEvent: (e: WatchEvent) => void;
  onError: (err: Error) => void;
  stopped: boolean;
}

function parse(v: string): KubeObject {
  return JSON.parse(v) as KubeObject;
}

export class WatchHub {
  private readonly byType = new Map<string, Set<Watcher>>();
  private pending: ChangeRecord[] = [];
  private scheduled = false;

  private static typeKey(grp: string, plural: string) {
    return `${grp}/${plural}`;
  }

  /** Called after a commit; never delivers synchronously. */
  publish(records: ChangeRecord[]): void {
    if (records.length === 0) return;
    for (const r of records) this.pending.push(r);
    this.schedule();
  }

  hasWatchers(): boolean {
    return this.byType.size > 0;
  }

  /**
   * Registers a watcher that has already seen everything up to `cursor`; `initial` (current
   * state or a log replay) is delivered first.
   */
  add(spec: WatcherSpec, cursor: number, initial: WatchEvent[], onEvent: (e: WatchEvent) => void, onError: (err: Error) => void): Watch {
    const w: Watcher = { ...spec, cursor, queue: [...initial], onEvent, onError, stopped: false };
    const key = WatchHub.typeKey(spec.grp, spec.plural);
    let set = this.byType.get(key);
    if (!set) this.byType.set(key, (set = new Set()));
    set.add(w);
    if (w.queue.length) this.schedule();
    return {
      stop: () => {
        if (w.stopped) return;
        w.stopped = true;
        w.queue = [];
        const s = this.byType.get(key);
        s?.delete(w);
        if (s && s.size === 0) this.byType.delete(key);
      },
    };
  }

  /** Turns a change into what a watcher with this spec sees, or nothing. */
  static eventFor(spec: WatcherSpec, r: ChangeRecord): WatchEvent | undefined {
    if (spec.namespace && r.ns !== spec.namespace) return undefined;
    const selective = spec.labels.requirements.length > 0 || spec.fields.requirements.length > 0;
    if (!selective) return { type: r.type, object: parse(r.value) };
    const matches = (o: KubeObject) => matchesLabels(spec.labels, o.metadata.labels) && matchesFields(spec.fields, o);
    const cur = parse(r.value);
    if (r.type === 'ADDED') return matches(cur) ? { type: 'ADDED', object: cur } : undefined;
    if (r.type === 'DELETED') return matches(cur) ? { type: 'DELETED', object: cur } : undefined;
    const prev = r.prevValue !== undefined ? parse(r.prevValue) : undefined;
    const was = prev !== undefined && matches(prev);
    const is = matches(cur);
    let type: WatchEventType;
    if (was && is) type = 'MODIFIED';
    else if (is) type = 'ADDED';
    else if (was) {
      // Kubernetes sends the last state that matched, stamped with the revision of the change
      prev!.metadata.resourceVersion = String(r.rev);
      return { type: 'DELETED', object: prev! };
    } else return undefined;
    return { type, object: cur };
  }

  /** Stops delivery to every watcher, telling each with err when given. */
  closeAll(err?: Error): void {
    for (const set of this.byType.values()) {
      for (const w of set) {
        w.stopped = true;
        w.queue = [];
        if (err) setImmediate(() => w.onError(err));
      }
    }
    this.byType.clear();
    this.pending = [];
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush() {
    this.scheduled = false;
    const records = this.pending;
    this.pending = [];
    for (const r of records) {
      const set = this.byType.get(WatchHub.typeKey(r.grp, r.plural));
      if (!set) continue;
      for (const w of set) {
        if (r.rev <= w.cursor) continue;
        w.cursor = r.rev;
        const e = WatchHub.eventFor(w, r);
        if (e) w.queue.push(e);
      }
    }
    for (const set of [...this.byType.values()]) {
      for (const w of [...set]) this.drain(w);
    }
  }

  private drain(w: Watcher) {
    while (!w.stopped && w.queue.length) {
      const e = w.queue.shift()!;
      try {
        w.onEvent(e);
      } catch (err) {
        // a failing handler must not starve the other watchers or lose later events
        process.emitWarning(`watch handler threw: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }
}
