// Fans committed changes out to watchers. Delivery is always asynchronous (setImmediate) so a
// handler never runs inside the call stack of the write that caused it, and in revision order
// per watcher: a watcher's backlog (replayed from the log) is queued before any live change.
//
// Backpressure: a handler that returns false pauses its watcher until resume(). A paused
// watcher's live changes queue as the shared commit records (one copy of each however many
// watchers lag), its initial state is read page by page only as it is consumed, and a watcher
// whose backlog outgrows the bounds below is closed with WatchTooSlowError, as kube-apiserver
// closes a watcher that cannot keep up (the client re-lists). So no consumer, however slow,
// makes the server hold more than the bounds for it.
import type { KubeObject } from '../../api/meta.ts';
import { WatchTooSlowError, type Watch, type WatchEvent, type WatchEventType } from '../store.ts';
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
  /** onEvent returning false pauses this watcher (WatchOptions.backpressure) */
  backpressure?: boolean;
}

/** The next page of a watcher's initial state, or undefined once it is all delivered; may throw (410 Gone). */
export type InitialPages = () => WatchEvent[] | undefined;

/** Live changes a paused watcher may fall behind by before it is closed. */
export const maxBacklogEvents = 1000;
/** Bytes of object JSON (shared with other watchers) a paused watcher may fall behind by. */
export const maxBacklogBytes = 32 * 1024 * 1024;

interface Watcher extends WatcherSpec {
  cursor: number;
  /** initial state and log replay, delivered before any live change */
  queue: WatchEvent[];
  more: InitialPages | undefined;
  /** live changes not yet turned into events (filtered and parsed at delivery) */
  live: ChangeRecord[];
  liveBytes: number;
  onEvent: (e: WatchEvent) => unknown;
  onError: (err: Error) => void;
  stopped: boolean;
  paused: boolean;
}

function parse(v: string): KubeObject {
  return JSON.parse(v) as KubeObject;
}

export class WatchHub {
  private readonly byType = new Map<string, Set<Watcher>>();
  private pending: ChangeRecord[] = [];
  private scheduled = false;
  /** the newest committed revision published, of any kind: a caught-up watcher has seen all it is to see up to it */
  private publishedRev = 0;

  private static typeKey(grp: string, plural: string) {
    return `${grp}/${plural}`;
  }

  /** Called after a commit; never delivers synchronously. */
  publish(records: ChangeRecord[]): void {
    if (records.length === 0) return;
    for (const r of records) {
      this.pending.push(r);
      if (r.rev > this.publishedRev) this.publishedRev = r.rev;
    }
    this.schedule();
  }

  hasWatchers(): boolean {
    return this.byType.size > 0;
  }

  /**
   * Registers a watcher that has already seen everything up to `cursor`; `initial` (current
   * state or a log replay) is delivered first.
   */
  add(spec: WatcherSpec, cursor: number, initial: WatchEvent[], onEvent: (e: WatchEvent) => unknown, onError: (err: Error) => void, more?: InitialPages): Watch {
    const w: Watcher = { ...spec, cursor, queue: [...initial], more, live: [], liveBytes: 0, onEvent, onError, stopped: false, paused: false };
    const key = WatchHub.typeKey(spec.grp, spec.plural);
    let set = this.byType.get(key);
    if (!set) this.byType.set(key, (set = new Set()));
    set.add(w);
    if (w.queue.length || w.more) this.schedule();
    return {
      stop: () => this.remove(w),
      resume: () => {
        if (w.stopped || !w.paused) return;
        w.paused = false;
        // never inside the caller's stack (a 'drain' handler): the same rule as every delivery
        setImmediate(() => this.drain(w));
      },
      bookmarkRevision: () => {
        if (w.stopped || w.paused || w.queue.length || w.more || w.live.length || this.pending.length) return undefined;
        return String(Math.max(w.cursor, this.publishedRev));
      },
    };
  }

  private remove(w: Watcher) {
    if (w.stopped) return;
    w.stopped = true;
    w.queue = [];
    w.live = [];
    w.more = undefined;
    const key = WatchHub.typeKey(w.grp, w.plural);
    const s = this.byType.get(key);
    s?.delete(w);
    if (s && s.size === 0) this.byType.delete(key);
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
        w.live = [];
        w.more = undefined;
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
        if (w.namespace && r.ns !== w.namespace) continue;
        w.live.push(r);
        w.liveBytes += r.value.length + (r.prevValue?.length ?? 0);
      }
    }
    for (const set of [...this.byType.values()]) {
      for (const w of [...set]) {
        if (w.paused && (w.live.length > maxBacklogEvents || w.liveBytes > maxBacklogBytes)) {
          this.remove(w);
          const err = new WatchTooSlowError(`the watcher fell ${w.live.length} changes behind (limits: ${maxBacklogEvents} changes, ${maxBacklogBytes} bytes) and was closed; re-list and watch again`);
          setImmediate(() => w.onError(err));
          continue;
        }
        this.drain(w);
      }
    }
  }

  /** The next event for w, or undefined when it has none ready. */
  private nextEvent(w: Watcher): WatchEvent | undefined {
    for (;;) {
      if (w.queue.length) return w.queue.shift();
      if (w.more) {
        const page = w.more();
        if (page === undefined) w.more = undefined;
        else w.queue = page;
        continue;
      }
      const r = w.live.shift();
      if (!r) return undefined;
      w.liveBytes -= r.value.length + (r.prevValue?.length ?? 0);
      const e = WatchHub.eventFor(w, r);
      if (e) return e;
    }
  }

  private drain(w: Watcher) {
    while (!w.stopped && !w.paused) {
      let e: WatchEvent | undefined;
      try {
        e = this.nextEvent(w);
      } catch (err) {
        // the initial state could not be read (compacted away under a slow reader): the watch is over
        this.remove(w);
        w.onError(err as Error);
        return;
      }
      if (!e) return;
      try {
        if (w.onEvent(e) === false && w.backpressure) w.paused = true;
      } catch (err) {
        // a failing handler must not starve the other watchers or lose later events
        process.emitWarning(`watch handler threw: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }
}
