// The store the runtime's tests use: the real embedded store (SQLite in memory, the backend the
// store conformance suite covers), with the faults a test needs to provoke around it: failing
// writes, dropped watches, compacted history and changes no open watch sees. No store
// semantics are written here, so the runtime is never tested against a double that disagrees
// with the store it runs on.
import type { KubeObject } from '../../api/meta.ts';
import type { ResourceType } from '../../api/resources.ts';
import type { Clock } from '../clock.ts';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { Store, Watch, WatchEvent, WatchOptions } from '../../store/store.ts';

export interface TestStore extends Store {
  /** Return an error to make a write fail with it, for failure-path tests; undefined lets it through. */
  failWrites?: (verb: 'create' | 'update' | 'updateStatus' | 'patch', type: ResourceType, obj?: KubeObject) => Error | undefined;
  /** Forgets history up to now: watches and lists from older revisions get 410 Gone. */
  compact(): void;
  /** Ends every open watch with err, as a dropped connection would. */
  breakWatches(err: Error): void;
  /** Runs fn so that no watch open now ever sees its changes: only a relist can. */
  unseen(fn: (store: Store) => Promise<void>): Promise<void>;
  /** open watches */
  watcherCount(): number;
}

interface OpenWatch { inner: Watch; muted: boolean; onError: (err: Error) => void }

export function openTestStore(o: { clock?: Clock } = {}): TestStore {
  const inner = openSqliteStore({ path: ':memory:', clock: o.clock });
  const watches = new Set<OpenWatch>();
  const store: TestStore = {
    get: (type, namespace, name) => inner.get(type, namespace, name),
    list: (type, opts) => inner.list(type, opts),
    watch<T extends KubeObject = KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => unknown, onError: (err: Error) => void): Watch {
      const w: OpenWatch = { inner: undefined as unknown as Watch, muted: false, onError };
      w.inner = inner.watch<T>(type, opts, (e) => (w.muted ? undefined : onEvent(e)), (err) => {
        watches.delete(w);
        onError(err);
      });
      watches.add(w);
      return {
        stop() {
          watches.delete(w);
          w.inner.stop();
        },
        resume: w.inner.resume ? () => w.inner.resume!() : undefined,
      };
    },
    create(type, obj, opts) {
      return fault('create', type, obj) ?? inner.create(type, obj, opts);
    },
    update(type, obj, opts) {
      return fault('update', type, obj) ?? inner.update(type, obj, opts);
    },
    updateStatus(type, obj, opts) {
      return fault('updateStatus', type, obj) ?? inner.updateStatus(type, obj, opts);
    },
    patch(type, namespace, name, patchType, patch, opts) {
      const ref = { apiVersion: '', kind: type.kind, metadata: { namespace, name } };
      return fault('patch', type, ref) ?? inner.patch(type, namespace, name, patchType, patch, opts);
    },
    delete: (type, namespace, name, opts) => inner.delete(type, namespace, name, opts),
    async close() {
      for (const w of watches) w.inner.stop();
      watches.clear();
      await inner.close();
    },
    compact() {
      inner.compact(0);
    },
    breakWatches(err) {
      for (const w of [...watches]) {
        watches.delete(w);
        w.inner.stop();
        setImmediate(() => w.onError(err));
      }
    },
    async unseen(fn) {
      for (const w of watches) w.muted = true;
      await fn(inner);
    },
    watcherCount: () => watches.size,
  };
  // a rejected promise, as the real store fails a write (never a synchronous throw)
  function fault(verb: 'create' | 'update' | 'updateStatus' | 'patch', type: ResourceType, obj?: KubeObject): Promise<never> | undefined {
    const err = store.failWrites?.(verb, type, obj);
    return err ? Promise.reject(err) : undefined;
  }
  return store;
}
