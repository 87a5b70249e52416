// The embedded Store on SQLite, modelled on kine: one global revision, each write appends a log
// row whose id is the resourceVersion, watches replay "rows after N", compaction drops
// superseded rows. better-sqlite3 is synchronous, so each method runs start to finish without
// interleaving; async signatures only satisfy the Store contract.
import { randomUUID } from 'node:crypto';
import { chmodSync, closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Condition, KubeObject, ObjectMeta } from '../../api/meta.ts';
import { rfc3339 } from '../../api/time.ts';
import { namespaceDeletionConditions } from './namespace-conditions.ts';
import { qualifiedNameError } from '../../api/names.ts';
import { apiVersionOf, isNamespaceType, NamespaceType, resourceTypeFor, tracksGeneration, type ResourceType } from '../../api/resources.ts';
import { realClock, type Clock } from '../../runtime/clock.ts';
import { applyJSONPatch, applyMergePatch, jsonEqual } from '../patch.ts';
import { matchesFields, matchesLabels, parseFieldSelectorFor, parseLabelSelector } from '../selectors.ts';
import {
  StoreError, tooLargeResourceVersion, type DeleteOptions, type ListOptions, type ListResult, type PatchOptions, type PatchType, type Store,
  type Watch, type WatchEvent, type WatchOptions, type WriteOptions,
} from '../store.ts';
import {
  checkFinalizersAndOwners, checkKind, dropEmptyMetadata, checkLabels, checkName, checkNamespace, checkPatchedIdentity, checkUnconditionalUpdate, generatedNameSuffix,
  namespaceTerminating, normalizeSecret, prepareNamespace, qualifiedResource, validateCoreKind, validateSecret,
} from './admission.ts';
import { ValueTransformer, type EncryptionConfiguration, type StoredValue } from './encryption.ts';
import { changeTypeCode, changeTypeName, checkStoreFormat, createSchema, prepareStatements, STORE_FORMAT, type KeyRow, type Statements } from './schema.ts';
import { WatchHub, type ChangeRecord, type InitialPages } from './watch-hub.ts';
import { BackgroundCheckpointer, type CheckpointResult } from './background-checkpoint.ts';
import { checkObject, checkObjectSize, checkObjectUpdate, checkValueShape, isMap } from '../object-checks.ts';
import { plainCopy } from '../../api/plain-copy.ts';

export interface SqliteStoreOptions {
  /** a file path, or ':memory:' */
  path: string;
  clock?: Clock;
  /** revisions kept behind the newest for watch resume and continue tokens; default 10000 */
  compactKeep?: number;
  /** Events not written for this long are deleted at compaction, like the API server's --event-ttl; default 1h */
  eventTTLSeconds?: number;
  /** kube-apiserver's EncryptionConfiguration (--encryption-provider-config); without it every value is plain JSON */
  encryption?: EncryptionConfiguration;
  /** how often (on the store's clock) old Events and history are dropped and free pages returned; default 60 s */
  compactIntervalMs?: number;
}

interface Key { grp: string; plural: string; ns: string; name: string }

/** A `current` row with its value as JSON; `stale` when the value is not stored as a write would store it now. */
interface LiveRow { rev: number; uid: string; value: string; stale: boolean }

/** Writes applied inside the open transaction, waiting for its COMMIT to be acknowledged. */
interface WriteBatch { startRev: number; changes: ChangeRecord[]; waiters: { resolve: () => void; reject: (err: Error) => void }[] }

const defaultCompactKeep = 10_000;
/** what the readiness probe writes to learn whether the database can grow again */
const storageProbeBytes = 64 * 1024;
/** how much object JSON one page of a watch's initial state reads */
const initialPageBytes = 64 * 1024;
const defaultCompactIntervalMs = 60_000;
/**
 * SQLite's own checkpoint threshold, in pages, where no background checkpointer runs (or it
 * failed): each write dirties ~5 pages; checkpointing (which fsyncs) every 1000 pages capped
 * throughput near 5k writes/s, every 16k pages (~64 MiB of WAL) it is out of the way.
 */
const walAutocheckpointPages = 16384;
/** changes between two background checkpoints: each appends ~4.5 pages, so ~50 MiB of WAL */
const backgroundCheckpointChanges = 3000;
/** changes written while a background checkpoint ran that this thread copies instead of another round */
const residualCheckpointChanges = 100;
const maxCheckpointRounds = 4;
/**
 * Free pages are returned to the file system once they are more than this share of the file:
 * a store whose size goes up and down by a little reuses its free pages instead of moving pages
 * about to shrink and regrow (issue 17: state.db per Certificate stays bounded over renewals).
 */
const reclaimFreeShare = 0.2;
/** and at least this many pages (4 KiB each), so a small store is not vacuumed for a few KiB */
const reclaimMinPages = 256;

function keyOf(type: ResourceType, ns: string, name: string): Key {
  return { grp: type.group, plural: type.plural, ns, name };
}

function withoutMetadata(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, ...rest } = o;
  return rest;
}

function ownerUids(meta: ObjectMeta): string[] {
  return (meta.ownerReferences ?? []).map((r) => r?.uid).filter((u): u is string => typeof u === 'string' && u !== '');
}

function conflict(type: ResourceType, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): StoreError {
  return new StoreError('Conflict', `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${why}`);
}

function notFound(grp: string, plural: string, name: string): StoreError {
  return new StoreError('NotFound', `${grp ? `${plural}.${grp}` : plural} "${name}" not found`);
}

interface ContinueToken { rv: number; ns: string; name: string }

/**
 * How long a deleted namespace's content stays before it is deleted: kube's namespace controller
 * works asynchronously, typically within a second or two.
 */
const NAMESPACE_SWEEP_DELAY_MS = 1000;
/** How often a namespace that content still holds is looked at again (its conditions brought up to date). */
const NAMESPACE_RESYNC_MS = 5000;

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 1, ...t })).toString('base64url');
}

function decodeContinue(s: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Partial<ContinueToken> & { v?: number };
    if (t.v === 1 && Number.isSafeInteger(t.rv) && typeof t.ns === 'string' && typeof t.name === 'string') {
      return { rv: t.rv!, ns: t.ns, name: t.name };
    }
  } catch {}
  throw new StoreError('BadRequest', 'continue key is not valid');
}

function parseRevision(s: string, what: string): number {
  if (!/^[0-9]+$/.test(s)) throw new StoreError('BadRequest', `${what} "${s}" is not a valid resourceVersion`);
  return Number(s);
}

/** the finalizer of an owner deleted in the foreground (metav1.FinalizerDeleteDependents) */
const foregroundFinalizer = 'foregroundDeletion';

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly st: Statements;
  private readonly clock: Clock;
  private readonly hub = new WatchHub();
  private readonly compactKeep: number;
  private readonly eventTTLms: number;
  private readonly compactIntervalMs: number;
  /** the revision at the last WAL checkpoint this store asked for: an idle store truncates its WAL once */
  private checkpointedRev = -1;
  /** checkpoints a file-backed store off the event loop (see background-checkpoint.ts) */
  private readonly checkpointer: BackgroundCheckpointer | undefined;
  private changesSinceCheckpoint = 0;
  private checkpointRounds = 0;
  private readonly values: ValueTransformer;
  private rev: number;
  private compactedRev: number;
  /** changes of the running transaction; published only after it commits */
  private txChanges: ChangeRecord[] = [];
  /**
   * Namespaces seen existing and not terminating, so a create need not parse the Namespace
   * object each time; any write to a Namespace, and any rollback, forgets them.
   */
  private readonly activeNamespaces = new Set<string>();
  private batch: WriteBatch | undefined;
  private readonly inTx: <R>(fn: () => R) => R;
  private compactScheduled = false;
  private cancelCompactTimer: () => void = () => {};
  /** cancels of the namespace sweeps not yet run */
  private readonly namespaceSweeps = new Set<() => void>();
  private closed = false;
  /** set while writes fail for lack of space (see storageError) */
  private storageFault: string | undefined;

  constructor(o: SqliteStoreOptions) {
    this.clock = o.clock ?? realClock;
    this.compactKeep = Math.max(0, o.compactKeep ?? defaultCompactKeep);
    this.eventTTLms = (o.eventTTLSeconds ?? 3600) * 1000;
    this.compactIntervalMs = Math.max(1000, o.compactIntervalMs ?? defaultCompactIntervalMs);
    this.values = new ValueTransformer(o.encryption);
    const onDisk = o.path !== ':memory:' && o.path !== '';
    if (onDisk) ownerOnlyFile(o.path);
    this.db = new Database(o.path);
    try {
      checkStoreFormat(this.db, o.path);
    } catch (e) {
      this.db.close();
      throw e;
    }
    // before anything is written: only a new database takes it without a VACUUM (see below)
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.pragma('journal_mode = WAL');
    // NORMAL with WAL: a commit is in the WAL (OS page cache) before we acknowledge it, which
    // survives a process kill; only power loss could drop the last commits, which is out of scope.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma(`wal_autocheckpoint = ${onDisk ? 0 : walAutocheckpointPages}`);
    this.checkpointer = onDisk ? new BackgroundCheckpointer(o.path, (r) => this.checkpointSettled(r), () => {
      if (!this.closed) this.db.pragma(`wal_autocheckpoint = ${walAutocheckpointPages}`);
    }) : undefined;
    this.db.pragma(`journal_size_limit = ${96 * 1024 * 1024}`);
    this.db.pragma('busy_timeout = 5000');
    createSchema(this.db);
    // a file made before free pages were reclaimed is rebuilt once so that they can be
    // (INCREMENTAL needs the pointer map that only VACUUM adds to an existing file)
    if (this.db.pragma('auto_vacuum', { simple: true }) !== 2) this.db.exec('VACUUM');
    this.st = prepareStatements(this.db);
    if (this.st.getMeta.get('format')?.v !== String(STORE_FORMAT)) this.st.setMeta.run('format', String(STORE_FORMAT));
    const run = this.db.transaction((fn: () => unknown) => fn());
    this.inTx = <R>(fn: () => R) => run(fn) as R;
    this.compactedRev = Number(this.st.getMeta.get('compacted')?.v ?? 0);
    this.rev = Math.max(this.st.maxRev.get()?.rev ?? 0, this.compactedRev);
    this.writeNow(() => this.ensureNamespace('default'));
    this.collectOrphans();
    this.sweepTerminatingNamespaces();
    this.armCompactTimer();
  }

  /**
   * At open, as a cluster's garbage collector does when it starts: dependents of owners that are
   * gone, which a store written before collectIfOwnersGone ran on every write may hold.
   */
  private collectOrphans() {
    const orphans = this.st.orphanedDependents.all();
    if (!orphans.length) return;
    this.writeNow(() => {
      for (const d of orphans) {
        const cur = this.current(d.grp, d.plural, d.ns, d.name);
        if (cur) this.collectIfOwnersGone(d, JSON.parse(cur.value) as KubeObject, cur.rev);
      }
    });
  }

  currentRevision(): number {
    return this.rev;
  }

  /** The oldest revision a watch or continue token can still start from. */
  compactedRevision(): number {
    return this.compactedRev;
  }

  /**
   * Expires old Events, then drops log rows superseded at or before (newest - keep).
   * Watches and continue tokens from below that revision then get 410 Gone.
   */
  compact(keep: number = this.compactKeep): { compactedRevision: number; removedRows: number; expiredEvents: number; freedPages: number } {
    this.assertOpen();
    let expiredEvents = 0;
    let removedRows = 0;
    const cutoff = this.clock.now().getTime() - this.eventTTLms;
    const expired = this.st.expiredKeys.all('', 'events', cutoff);
    // an idle store's check finds nothing: no write transaction for it
    if (expired.length) {
      this.writeNow(() => {
        for (const k of expired) {
          const cur = this.current(k.grp, k.plural, k.ns, k.name);
          if (!cur) continue;
          this.removeObject(k, JSON.parse(cur.value) as KubeObject, cur.rev, 'Background');
          expiredEvents++;
        }
      });
    }
    const target = this.rev - Math.max(0, keep);
    if (target > this.compactedRev) {
      this.commitBatch();
      this.inTx(() => {
        removedRows += this.st.compactSuperseded.run(this.compactedRev, target).changes;
        removedRows += this.st.compactDeleted.run(this.compactedRev, target).changes;
        this.st.setMeta.run('compacted', String(target));
      });
      this.compactedRev = target;
    }
    const freedPages = removedRows || expiredEvents ? this.reclaimFreePages() : 0;
    return { compactedRevision: this.compactedRev, removedRows, expiredEvents, freedPages };
  }

  /**
   * Returns free pages to the file system once they are a fifth of the file, keeping a tenth of
   * the pages in use free for the next writes; returns how many went. SQLite reuses free pages but never gives
   * them back by itself.
   */
  reclaimFreePages(): number {
    this.assertOpen();
    this.commitBatch();
    const pages = Number(this.db.pragma('page_count', { simple: true }));
    const free = Number(this.db.pragma('freelist_count', { simple: true }));
    if (free < reclaimMinPages || free < pages * reclaimFreeShare) return 0;
    // what stays free is a tenth of what is in use, room for the next writes
    const release = free - Math.floor((pages - free) * reclaimFreeShare / 2);
    this.db.pragma(`incremental_vacuum(${release})`);
    return free - Number(this.db.pragma('freelist_count', { simple: true }));
  }

  /**
   * Copies the WAL into the database file and truncates the WAL (what an idle store does once a
   * compaction interval): the file then holds every write, and its size is the store's size.
   */
  checkpoint(): void {
    this.assertOpen();
    this.commitBatch();
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.checkpointedRev = this.rev;
  }

  /** Pages in the database file and how many of them are free. */
  pageStats(): { pageSize: number; pages: number; freePages: number } {
    this.assertOpen();
    return {
      pageSize: Number(this.db.pragma('page_size', { simple: true })),
      pages: Number(this.db.pragma('page_count', { simple: true })),
      freePages: Number(this.db.pragma('freelist_count', { simple: true })),
    };
  }

  async get<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined> {
    this.assertOpen();
    this.commitBatch();
    return this.liveObject<T>(type, namespace, name);
  }

  /**
   * Reads inside the open batch instead of committing it (Store.getForUpdate): admission's read
   * of the old object before every update would otherwise commit each write on its own.
   */
  async getForUpdate<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string): Promise<T | undefined> {
    this.assertOpen();
    return this.liveObject<T>(type, namespace, name);
  }

  private liveObject<T extends KubeObject>(type: ResourceType, namespace: string | undefined, name: string): T | undefined {
    const row = this.current(type.group, type.plural, type.namespaced ? namespace ?? '' : '', name);
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<ListResult<T>> {
    this.assertOpen();
    this.commitBatch();
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelectorFor(type, opts.fieldSelector);
    const ns = type.namespaced ? opts.namespace ?? '' : '';
    const limit = opts.limit && opts.limit > 0 ? Math.floor(opts.limit) : Infinity;
    let rows: Iterable<KeyRow>;
    let rv: number;
    if (opts.continue) {
      const t = decodeContinue(opts.continue);
      if (t.rv < this.compactedRev) {
        // etcd3's handleCompactedErrorForPaging: Expired, with a token that carries on from the same
        // place at the current revision, for a client that can live with an inconsistent list
        const expired = new StoreError('Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, '
          + 'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - '
          + 'objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
        expired.listContinue = encodeContinue({ rv: this.rev, ns: t.ns, name: t.name });
        throw expired;
      }
      rv = t.rv;
      // nothing written since the first page (an informer's list on start): the live table is
      // that snapshot, and cheaper to read than the log
      if (rv === this.rev) rows = ns ? this.st.listNamespace.iterate(type.group, type.plural, ns, t.ns, t.name) : this.st.listAll.iterate(type.group, type.plural, t.ns, t.name);
      else {
        rows = ns
          ? this.st.snapshotNamespace.iterate(type.group, type.plural, ns, t.ns, t.name, rv, rv)
          : this.st.snapshotAll.iterate(type.group, type.plural, t.ns, t.name, rv, rv);
      }
    } else if (opts.atRevision !== undefined && opts.atRevision !== this.rev) {
      rv = opts.atRevision;
      if (rv > this.rev) throw tooLargeResourceVersion(rv, this.rev);
      if (rv < this.compactedRev) throw new StoreError('Gone', `too old resource version: ${rv} (${this.compactedRev})`);
      rows = ns
        ? this.st.snapshotNamespace.iterate(type.group, type.plural, ns, '', '', rv, rv)
        : this.st.snapshotAll.iterate(type.group, type.plural, '', '', rv, rv);
    } else {
      rv = this.rev;
      rows = ns ? this.st.listNamespace.iterate(type.group, type.plural, ns, '', '') : this.st.listAll.iterate(type.group, type.plural, '', '');
    }
    const selective = labels.requirements.length > 0 || fields.requirements.length > 0;
    const items: T[] = [];
    let last: KeyRow | undefined;
    let more = false;
    for (const row of rows) {
      const obj = JSON.parse(this.jsonOf(type.group, type.plural, row.ns, row.name, row.value)) as T;
      if (selective && !(matchesLabels(labels, obj.metadata.labels) && matchesFields(fields, obj))) continue;
      if (items.length >= limit) {
        more = true;
        break;
      }
      items.push(obj);
      last = row;
    }
    const result: ListResult<T> = { items, resourceVersion: String(rv) };
    if (more && last) result.continue = encodeContinue({ rv, ns: last.ns, name: last.name });
    return result;
  }

  /**
   * A watch's initial state, read a page at a time as the watcher consumes it, from the
   * snapshot at `rev`: a slow watcher of a large collection holds one page, not the collection.
   * While nothing has been written since, the live table is that snapshot and cheaper to read.
   */
  private initialPages(type: ResourceType, spec: { namespace: string; labels: ReturnType<typeof parseLabelSelector>; fields: ReturnType<typeof parseFieldSelectorFor> }, rev: number): InitialPages {
    let after = { ns: '', name: '' };
    let done = false;
    return () => {
      if (done || this.closed) return undefined;
      if (rev < this.compactedRev) throw new StoreError('Expired', `too old resource version: ${rev} (${this.compactedRev}): the watcher read its initial state too slowly; re-list and watch again`);
      this.commitBatch();
      const { group: grp, plural } = type;
      const ns = spec.namespace;
      const rows = this.rev === rev
        ? (ns ? this.st.listNamespace.iterate(grp, plural, ns, after.ns, after.name) : this.st.listAll.iterate(grp, plural, after.ns, after.name))
        : (ns ? this.st.snapshotNamespace.iterate(grp, plural, ns, after.ns, after.name, rev, rev) : this.st.snapshotAll.iterate(grp, plural, after.ns, after.name, rev, rev));
      const page: WatchEvent[] = [];
      let bytes = 0;
      let full = false;
      for (const row of rows) {
        const json = this.jsonOf(grp, plural, row.ns, row.name, row.value);
        after = { ns: row.ns, name: row.name };
        bytes += json.length;
        const obj = JSON.parse(json) as KubeObject;
        if (matchesLabels(spec.labels, obj.metadata.labels) && matchesFields(spec.fields, obj)) page.push({ type: 'ADDED', object: obj });
        if (bytes >= initialPageBytes) {
          full = true;
          break;
        }
      }
      if (!full) done = true;
      return page;
    };
  }

  watch<T extends KubeObject = KubeObject>(type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<T>) => unknown, onError: (err: Error) => void): Watch {
    const fail = (err: Error): Watch => {
      setImmediate(() => onError(err));
      return { stop() {} };
    };
    try {
      this.assertOpen();
      this.commitBatch();
      const spec = {
        grp: type.group, plural: type.plural,
        namespace: type.namespaced ? opts.namespace ?? '' : '',
        labels: parseLabelSelector(opts.labelSelector),
        fields: parseFieldSelectorFor(type, opts.fieldSelector),
        backpressure: opts.backpressure === true,
      };
      const initial: WatchEvent[] = [];
      const rvOpt = opts.resourceVersion;
      const cursor = this.rev;
      let more: InitialPages | undefined;
      if (rvOpt === '0' || rvOpt === '') {
        more = this.initialPages(type, spec, cursor);
      } else if (rvOpt !== undefined) {
        const from = parseRevision(rvOpt, 'watch resourceVersion');
        if (from < this.compactedRev) {
          // kube's watch cache answers NewResourceExpired; Gone is for an Exact list at a compacted revision
          return fail(new StoreError('Expired', `too old resource version: ${from} (${this.compactedRev})`));
        }
        // kube-apiserver's answer to a revision it has not reached: waiting would hang the
        // client silently, and starting there would skip every change until then
        if (from > this.rev) return fail(tooLargeResourceVersion(from, this.rev));
        for (const r of this.st.logAfter.iterate(from, type.group, type.plural)) {
          const e = WatchHub.eventFor(spec, {
            rev: r.id, grp: r.grp, plural: r.plural, ns: r.ns, type: changeTypeName[r.type],
            value: this.jsonOf(r.grp, r.plural, r.ns, r.name, r.value),
            prevValue: r.prevValue === null ? undefined : this.jsonOf(r.grp, r.plural, r.ns, r.name, r.prevValue),
          });
          if (e) initial.push(e);
        }
      }
      if (opts.allowBookmarks && rvOpt !== undefined) {
        const bookmark: WatchEvent = {
          type: 'BOOKMARK',
          object: {
            apiVersion: apiVersionOf(type), kind: type.kind,
            metadata: { resourceVersion: String(cursor), ...(more && opts.initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) },
          },
        };
        if (!more) initial.push(bookmark);
        else {
          // the bookmark ends the initial state, so it comes after its last page
          const pages = more;
          let sent = false;
          more = () => {
            const page = pages();
            if (page !== undefined) return page;
            if (sent) return undefined;
            sent = true;
            return [bookmark];
          };
        }
      }
      return this.hub.add(spec, cursor, initial, onEvent as (e: WatchEvent) => unknown, onError, more);
    } catch (err) {
      return fail(err as Error);
    }
  }

  async create<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    this.assertOpen();
    const o = plainCopy(obj);
    checkKind(type, o);
    checkObject(type, o);
    const meta = o.metadata;
    const ns = checkNamespace(type, meta.namespace);
    const generate = !meta.name && !!meta.generateName;
    if (!meta.name && !generate) {
      throw new StoreError('Invalid', `${type.kind} is invalid: metadata.name: Required value: name or generateName is required`,
        [{ field: 'metadata.name', message: 'Required value: name or generateName is required', reason: 'FieldValueRequired' }]);
    }
    if (generate) meta.name = `${meta.generateName}${generatedNameSuffix()}`;
    checkName(type, meta.name!);
    checkLabels(type, o);
    checkFinalizersAndOwners(type, o);
    dropEmptyMetadata(o);
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.now());
    if (tracksGeneration(type)) meta.generation = 1;
    else delete meta.generation;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (type.statusSubresource) delete o.status;
    if (isNamespaceType(type)) (o as KubeObject).status = { phase: 'Active' };
    prepareNamespace(type, o);
    normalizeSecret(type, o);
    validateSecret(type, o);
    validateCoreKind(type, o);
    if (opts.dryRun) {
      if (this.st.currentExists.get(type.group, type.plural, ns, meta.name!)) throw this.alreadyExists(type, meta.name!);
      checkObjectSize(type.kind, meta.name, JSON.stringify(o));
      return o;
    }
    return this.write(() => {
      // a generated name that collides is retried, so callers never see a 409 they did not cause
      for (let attempt = 0; this.st.currentExists.get(type.group, type.plural, ns, meta.name!); attempt++) {
        if (!generate || attempt >= 8) throw this.alreadyExists(type, meta.name!);
        meta.name = `${meta.generateName}${generatedNameSuffix()}`;
      }
      if (type.namespaced) this.ensureNamespace(ns, type, meta.name!);
      const prev = this.st.lastRev.get(type.group, type.plural, ns, meta.name!)?.id ?? null;
      const key = keyOf(type, ns, meta.name!);
      this.collectIfOwnersGone(key, o, this.appendChange(key, 'ADDED', o, prev, undefined, true));
      return o;
    });
  }

  async update<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    this.assertOpen();
    const o = plainCopy(obj);
    checkKind(type, o);
    checkUnconditionalUpdate(type, o);
    return this.write(() => this.updateObject(type, o, opts));
  }

  async updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    this.assertOpen();
    // only identity and status are read (the rest comes from the stored object): status is
    // what is stored, so only it is copied from the caller's object
    const o = isMap(obj) ? { ...obj, metadata: isMap(obj.metadata) ? { ...obj.metadata } : obj.metadata, status: plainCopy(obj.status) } as T : obj;
    checkKind(type, o);
    checkUnconditionalUpdate(type, o);
    return this.write(() => this.updateStatusOf(type, o, opts));
  }

  async patch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, patchType: PatchType, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    this.assertOpen();
    const ns = checkNamespace(type, namespace);
    const cur = this.current(type.group, type.plural, ns, name);
    if (!cur) {
      if (patchType === 'apply' && opts.subresource !== 'status') {
        const body = plainCopy(patch) as KubeObject;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new StoreError('BadRequest', 'apply patch must be an object');
        body.metadata = { ...(body.metadata ?? {}) };
        checkPatchedIdentity(type, body, ns, name);
        body.metadata.name = name;
        if (type.namespaced) body.metadata.namespace = ns;
        return this.create(type, body as T, opts);
      }
      throw notFound(type.group, type.plural, name);
    }
    const old = JSON.parse(cur.value) as KubeObject;
    let patched: KubeObject;
    switch (patchType) {
      case 'merge':
      case 'apply':
        if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) throw new StoreError('BadRequest', `${patchType} patch must be a JSON object`);
        patched = applyMergePatch<KubeObject>(old, patch);
        break;
      case 'json':
        patched = applyJSONPatch<KubeObject>(old, patch);
        break;
      default:
        throw new StoreError('BadRequest', `unsupported patch type "${String(patchType)}"`);
    }
    if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) throw new StoreError('Invalid', 'the patched object is not an object');
    checkKind(type, patched);
    checkPatchedIdentity(type, patched, ns, name);
    patched.metadata.name = name;
    if (type.namespaced) patched.metadata.namespace = ns;
    return this.write(() => (opts.subresource === 'status' ? this.updateStatusOf(type, patched, opts) : this.updateObject(type, patched, opts))) as Promise<T>;
  }

  async delete<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<T | undefined> {
    this.assertOpen();
    const ns = type.namespaced ? namespace ?? '' : '';
    return this.write(() => {
      const cur = this.current(type.group, type.plural, ns, name);
      if (!cur) throw notFound(type.group, type.plural, name);
      const old = JSON.parse(cur.value) as KubeObject;
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== old.metadata.uid) {
        throw conflict(type, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== String(cur.rev)) {
        throw conflict(type, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.rev}`);
      }
      const policy = opts.propagationPolicy ?? 'Background';
      const key = keyOf(type, ns, name);
      if (isNamespaceType(type)) return this.deleteNamespace(key, old, cur.rev) as T;
      if (policy === 'Foreground') {
        this.collectDependents(old.metadata.uid!, 'Background');
        // what the garbage collector does: the owner waits, marked, for its blocking dependents
        if (this.hasBlockingDependents(old.metadata.uid!)) return this.markForeground(key, old, cur.rev) as T;
      }
      return this.deleteOrMark(key, old, cur.rev, policy) as T;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.commitBatch();
    this.closed = true;
    this.cancelCompactTimer();
    for (const cancel of this.namespaceSweeps) cancel();
    this.hub.closeAll();
    await this.checkpointer?.close();
    this.db.close();
  }

  /** The live row of a key, its value decrypted where encryption at rest applies. */
  private current(grp: string, plural: string, ns: string, name: string): LiveRow | undefined {
    const row = this.st.getCurrent.get(grp, plural, ns, name);
    if (!row) return undefined;
    const { json, stale } = this.values.fromStorage({ grp, plural, ns, name }, row.value);
    return { rev: row.rev, uid: row.uid, value: json, stale };
  }

  private jsonOf(grp: string, plural: string, ns: string, name: string, stored: StoredValue): string {
    return typeof stored === 'string' && !this.values.encrypts ? stored : this.values.fromStorage({ grp, plural, ns, name }, stored).json;
  }

  private assertOpen() {
    if (this.closed) throw new StoreError('InternalError', 'the store is closed');
  }

  private alreadyExists(type: ResourceType, name: string) {
    return new StoreError('AlreadyExists', `${qualifiedResource(type)} "${name}" already exists`);
  }

  /**
   * Group commit: the writes of one event-loop turn share a transaction, each in its own
   * savepoint (a failing write rolls back alone and rejects at once). A write is checked and
   * applied immediately, so later writes see it, but it is acknowledged, and its changes
   * published to watchers, only once the shared COMMIT has happened: acknowledged writes are as
   * durable as before, and a commit per write (most of a write's cost) is paid once per turn.
   */
  private write<R>(fn: () => R): Promise<R> {
    const batch = this.batch ?? this.openBatch();
    let r: R;
    try {
      r = this.applyWrite(fn);
    } catch (err) {
      // SQLite rolls the whole transaction back on some errors (SQLITE_FULL among them): every
      // write of this batch is lost, so each must fail, and the next write start a new batch
      if (!this.db.inTransaction && this.batch === batch) this.abandonBatch(batch, err as Error);
      throw this.storageError(err);
    }
    for (const c of this.txChanges) batch.changes.push(c);
    this.txChanges = [];
    return new Promise<R>((resolve, reject) => batch.waiters.push({ resolve: () => resolve(r), reject }));
  }

  /** A write acknowledged by its return: for the store's own housekeeping. */
  private writeNow<R>(fn: () => R): R {
    this.commitBatch();
    let r: R;
    try {
      r = this.applyWrite(fn);
    } catch (err) {
      throw this.storageError(err);
    }
    this.storageFault = undefined;
    this.walGrew(this.txChanges.length);
    this.hub.publish(this.txChanges);
    this.txChanges = [];
    this.maybeScheduleCompaction();
    return r;
  }

  private applyWrite<R>(fn: () => R): R {
    const startRev = this.rev;
    this.txChanges = [];
    try {
      return this.inTx(fn);
    } catch (err) {
      this.rev = startRev;
      this.txChanges = [];
      this.activeNamespaces.clear();
      throw err;
    }
  }

  private openBatch(): WriteBatch {
    this.st.begin.run();
    const batch: WriteBatch = { startRev: this.rev, changes: [], waiters: [] };
    this.batch = batch;
    setImmediate(() => this.commitBatch());
    return batch;
  }

  /** Ends the open batch, if any; called before reads too, so no one sees an unacknowledged write. */
  private commitBatch(): void {
    const batch = this.batch;
    if (!batch) return;
    this.batch = undefined;
    try {
      this.st.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.st.rollback.run();
      this.abandonBatch(batch, err as Error);
      return;
    }
    this.storageFault = undefined;
    this.walGrew(batch.changes.length);
    this.hub.publish(batch.changes);
    for (const w of batch.waiters) w.resolve();
    this.maybeScheduleCompaction();
  }

  /** Starts a background checkpoint once enough has been written since the last one. */
  private walGrew(changes: number) {
    if (!this.checkpointer) return;
    this.changesSinceCheckpoint += changes;
    if (this.changesSinceCheckpoint < backgroundCheckpointChanges || this.checkpointer.busy) return;
    this.checkpointRounds = 0;
    this.checkpointRound();
  }

  private checkpointRound() {
    this.changesSinceCheckpoint = 0;
    this.checkpointer!.request();
  }

  /**
   * The WAL starts over (instead of growing) only once every frame in it is in the database
   * file. What was written while the worker copied, another round copies while it is much,
   * then this thread: a small copy and fsync.
   */
  private checkpointSettled(r: CheckpointResult) {
    if (this.closed || (this.changesSinceCheckpoint === 0 && r.copied >= r.frames)) return;
    if (this.changesSinceCheckpoint > residualCheckpointChanges && ++this.checkpointRounds < maxCheckpointRounds) {
      this.checkpointRound();
      return;
    }
    this.changesSinceCheckpoint = 0;
    // a checkpoint runs outside a transaction: the open batch commits a turn early
    this.commitBatch();
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      // as SQLite's own automatic checkpoint, best effort: the next one copies what this did not
      this.storageError(err);
    }
  }

  /** A batch whose transaction is gone: its writes are undone and each of them fails. */
  private abandonBatch(batch: WriteBatch, err: Error): void {
    if (this.batch === batch) this.batch = undefined;
    this.activeNamespaces.clear();
    this.rev = batch.startRev;
    this.txChanges = [];
    const failure = this.storageError(err);
    for (const w of batch.waiters) w.reject(failure as Error);
  }

  /**
   * A full disk as kube names it (507 Insufficient Storage), remembered for /readyz until a
   * write succeeds again; other errors pass through.
   */
  private storageError(err: unknown): unknown {
    const code = (err as { code?: unknown })?.code;
    if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
      this.storageFault = `the state database cannot grow: the disk is full (${code})`;
      return new StoreError('InsufficientStorage', `Insufficient Storage: ${this.storageFault}; writes fail until space is freed`);
    }
    return err;
  }

  /**
   * Why writes fail, or undefined. While they fail, each call checks whether the database can
   * grow again (a transaction that needs new pages), so readiness recovers without a client write.
   */
  storageProblem(): string | undefined {
    if (!this.storageFault || this.closed || this.batch) return this.storageFault;
    try {
      this.inTx(() => {
        this.st.setMeta.run('storage-probe', 'x'.repeat(storageProbeBytes));
        this.st.setMeta.run('storage-probe', '');
      });
      this.storageFault = undefined;
    } catch (err) {
      this.storageError(err);
    }
    return this.storageFault;
  }

  /** Appends one change: a log row, the current pointer, the owner index. Stamps resourceVersion. */
  private appendChange(key: Key, type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject, prev: number | null, prevValue: string | undefined, sizeLimited = false): number {
    const rev = ++this.rev;
    obj.metadata.resourceVersion = String(rev);
    const value = JSON.stringify(obj);
    // writes a client asked for are limited as etcd limits them; the server's own bookkeeping
    // (deletion marks, garbage collection) must still work on an object stored before the limit
    if (sizeLimited) checkObjectSize(obj.kind, key.name, value);
    const { grp, plural, ns, name } = key;
    if (grp === NamespaceType.group && plural === NamespaceType.plural) this.activeNamespaces.delete(name);
    this.st.insertLog.run(rev, grp, plural, ns, name, changeTypeCode[type], prev, this.values.toStorage(key, value));
    // parsing the previous object only to diff owner references is the common case's waste
    const oldOwners = prevValue === undefined || !prevValue.includes('"ownerReferences"') ? [] : ownerUids((JSON.parse(prevValue) as KubeObject).metadata);
    if (type === 'DELETED') {
      this.st.deleteCurrent.run(grp, plural, ns, name);
      if (oldOwners.length) this.st.deleteOwnersOf.run(grp, plural, ns, name);
    } else {
      // a modification never changes the uid (every MODIFIED write starts from the live object)
      if (type === 'MODIFIED') this.st.advanceCurrent.run(rev, this.clock.now().getTime(), grp, plural, ns, name);
      else this.st.upsertCurrent.run(grp, plural, ns, name, rev, obj.metadata.uid ?? '', this.clock.now().getTime());
      const newOwners = ownerUids(obj.metadata);
      if (!jsonEqual(oldOwners, newOwners)) {
        this.st.deleteOwnersOf.run(grp, plural, ns, name);
        for (const u of newOwners) this.st.insertOwner.run(u, grp, plural, ns, name);
      }
    }
    this.txChanges.push({ rev, grp, plural, ns, type, value, prevValue });
    return rev;
  }

  private updateObject<T extends KubeObject>(type: ResourceType, o: T, opts: WriteOptions): T {
    const meta = o.metadata;
    const ns = checkNamespace(type, meta.namespace);
    const name = meta.name;
    if (!name) throw new StoreError('BadRequest', 'metadata.name is required for an update');
    const cur = this.current(type.group, type.plural, ns, name);
    if (!cur) throw notFound(type.group, type.plural, name);
    if (meta.resourceVersion && meta.resourceVersion !== String(cur.rev)) throw conflict(type, name);
    const old = JSON.parse(cur.value) as KubeObject;
    if (meta.uid && meta.uid !== old.metadata.uid) {
      throw new StoreError('Invalid', `${type.kind} "${name}" is invalid: metadata.uid: Invalid value: "${meta.uid}": field is immutable`,
        [{ field: 'metadata.uid', message: 'field is immutable', reason: 'FieldValueInvalid' }]);
    }
    checkLabels(type, o);
    checkFinalizersAndOwners(type, o);
    dropEmptyMetadata(o);
    checkObjectUpdate(type, o, old);
    prepareNamespace(type, o, old);
    if (old.metadata.deletionTimestamp && (meta.finalizers ?? []).some((f) => !(old.metadata.finalizers ?? []).includes(f))) {
      throw new StoreError('Invalid', `${type.kind} "${name}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted`,
        [{ field: 'metadata.finalizers', message: 'no new finalizers can be added if the object is being deleted', reason: 'FieldValueForbidden' }]);
    }
    // system fields are the server's: an update cannot change them (Kubernetes' BeforeUpdate)
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    if (tracksGeneration(type)) meta.generation = old.metadata.generation;
    else delete meta.generation;
    meta.resourceVersion = String(cur.rev);
    for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
      if (old.metadata[f] === undefined) delete meta[f];
      else (meta as Record<string, unknown>)[f] = old.metadata[f];
    }
    if (type.statusSubresource) {
      if (old.status === undefined) delete o.status;
      else (o as KubeObject).status = old.status;
    }
    normalizeSecret(type, o);
    validateSecret(type, o, old);
    validateCoreKind(type, o);
    const sameBody = jsonEqual(withoutMetadata(o), withoutMetadata(old));
    if (!sameBody && tracksGeneration(type)) meta.generation = (old.metadata.generation ?? 0) + 1;
    // a stale value is rewritten even when unchanged: rewriting is how keys are rotated
    if (sameBody && jsonEqual(meta, old.metadata) && !cur.stale) return old as T;
    if (opts.dryRun) {
      checkObjectSize(type.kind, name, JSON.stringify(o));
      return o;
    }
    const key = keyOf(type, ns, name);
    // a terminating namespace also waits for its content (finishNamespace removes it then)
    if (meta.deletionTimestamp && !(meta.finalizers?.length) && !(isNamespaceType(type) && this.st.anyInNamespace.get(name))) {
      this.removeObject(key, o, cur.rev, 'Background', cur.value);
      return o;
    }
    const rev = this.appendChange(key, 'MODIFIED', o, cur.rev, cur.value, true);
    if (!jsonEqual(ownerUids(meta), ownerUids(old.metadata))) this.collectIfOwnersGone(key, o, rev);
    return o;
  }

  private updateStatusOf<T extends KubeObject>(type: ResourceType, o: T, opts: WriteOptions): T {
    if (!type.statusSubresource) throw new StoreError('NotFound', `${qualifiedResource(type)} has no status subresource`);
    const meta = o.metadata;
    const ns = checkNamespace(type, meta.namespace);
    const name = meta.name;
    if (!name) throw new StoreError('BadRequest', 'metadata.name is required for a status update');
    const cur = this.current(type.group, type.plural, ns, name);
    if (!cur) throw notFound(type.group, type.plural, name);
    if (meta.resourceVersion && meta.resourceVersion !== String(cur.rev)) throw conflict(type, name);
    const old = JSON.parse(cur.value) as T;
    // old is this write's own parse: a copy of its top level and metadata (which appendChange
    // stamps) is enough, not a deep clone
    const next = { ...old, metadata: { ...old.metadata } };
    if (o.status === undefined) delete next.status;
    else (next as KubeObject).status = o.status;
    // next is old but for its status (its metadata a copy of old's): only the status can differ
    if (jsonEqual(next.status, old.status)) return old;
    // a status write changes only status: the rest was checked when it was written
    checkValueShape(next.status);
    if (opts.dryRun) {
      checkObjectSize(type.kind, name, JSON.stringify(next));
      return next;
    }
    this.appendChange(keyOf(type, ns, name), 'MODIFIED', next, cur.rev, cur.value, true);
    return next;
  }

  /** Kubernetes' delete: mark while finalizers remain, otherwise remove (and cascade). */
  private deleteOrMark(key: Key, old: KubeObject, rev: number, policy: 'Background' | 'Foreground' | 'Orphan'): KubeObject {
    if (old.metadata.finalizers?.length) return old.metadata.deletionTimestamp ? old : this.markDeleting(key, old, rev);
    return this.removeObject(key, old, rev, policy);
  }

  /** Stamps deletionTimestamp on an object that something still holds. */
  private markDeleting(key: Key, old: KubeObject, rev: number, status?: Record<string, unknown>, oldValue = JSON.stringify(old)): KubeObject {
    const next = plainCopy(old);
    next.metadata.deletionTimestamp = rfc3339(this.clock.now());
    next.metadata.deletionGracePeriodSeconds = 0;
    if ((next.metadata.generation ?? 0) > 0) next.metadata.generation = next.metadata.generation! + 1;
    if (status) (next as KubeObject).status = status;
    this.appendChange(key, 'MODIFIED', next, rev, oldValue);
    return next;
  }

  /**
   * A namespace's deletion, as kube-apiserver and its namespace controller do it: the namespace
   * is Terminating at once (refusing new content), and its content is deleted a moment later
   * (sweepNamespace), so a client that deletes the namespace and then what is in it, as `kubectl
   * delete -f` does with a manifest that lists its Namespace first, still finds those objects.
   * What finalizers hold keeps the namespace Terminating until the last of it is gone
   * (finishNamespace), as do finalizers on the namespace itself.
   */
  private deleteNamespace(key: Key, old: KubeObject, rev: number): KubeObject {
    if (old.metadata.deletionTimestamp) return old;
    const marked = this.markDeleting(key, old, rev, { ...(old.status ?? {}), phase: 'Terminating' });
    this.scheduleNamespaceSweep(key.name);
    return marked;
  }

  private scheduleNamespaceSweep(ns: string, afterMs = NAMESPACE_SWEEP_DELAY_MS) {
    const cancel = this.clock.setTimer(afterMs, () => {
      this.namespaceSweeps.delete(cancel);
      if (this.closed) return;
      // a write that fails (no space left) is tried again; once closed, the next open sweeps it (sweepTerminatingNamespaces)
      void this.write(() => this.sweepNamespace(ns)).catch(() => {
        if (!this.closed) this.scheduleNamespaceSweep(ns, NAMESPACE_RESYNC_MS);
      });
    });
    this.namespaceSweeps.add(cancel);
  }

  /**
   * The namespace controller's pass: the content of a Terminating namespace deleted, and the
   * namespace with it once nothing holds it; while something does, its conditions say what
   * (namespace-conditions.ts), and the pass comes again, as kube's controller requeues it.
   */
  private sweepNamespace(ns: string) {
    const before = this.current(NamespaceType.group, NamespaceType.plural, '', ns);
    if (!before || !(JSON.parse(before.value) as KubeObject).metadata.deletionTimestamp) return;
    this.deleteNamespaceContents(ns);
    this.finishNamespace(ns);
    const cur = this.current(NamespaceType.group, NamespaceType.plural, '', ns);
    if (!cur) return;
    const n = JSON.parse(cur.value) as KubeObject & { status?: { conditions?: Condition[] } };
    const remaining = this.st.keysInNamespace.all(ns).flatMap((k) => {
      const row = this.current(k.grp, k.plural, k.ns, k.name);
      return row ? [{ plural: k.plural, group: k.grp, finalizers: (JSON.parse(row.value) as KubeObject).metadata.finalizers ?? [] }] : [];
    });
    const conditions = namespaceDeletionConditions(remaining, n.status?.conditions, rfc3339(this.clock.now()));
    if (JSON.stringify(conditions) !== JSON.stringify(n.status?.conditions)) {
      this.appendChange(keyOf(NamespaceType, '', ns), 'MODIFIED', { ...n, status: { ...(n.status ?? {}), conditions } }, cur.rev, cur.value);
    }
    this.scheduleNamespaceSweep(ns, NAMESPACE_RESYNC_MS);
  }

  /** At open: a namespace left Terminating by a process that stopped before its sweep. */
  private sweepTerminatingNamespaces() {
    for (const row of this.st.listAll.all(NamespaceType.group, NamespaceType.plural, '', '')) {
      const json = this.jsonOf(NamespaceType.group, NamespaceType.plural, row.ns, row.name, row.value);
      if (json.includes('"deletionTimestamp"')) this.scheduleNamespaceSweep(row.name);
    }
  }

  /** Whether a live dependent of this owner blocks its deletion (ownerReferences[].blockOwnerDeletion). */
  private hasBlockingDependents(ownerUid: string): boolean {
    for (const d of this.st.dependentsOf.all(ownerUid)) {
      const cur = this.current(d.grp, d.plural, d.ns, d.name);
      if (!cur) continue;
      const refs = (JSON.parse(cur.value) as KubeObject).metadata.ownerReferences ?? [];
      if (refs.some((r) => r.uid === ownerUid && r.blockOwnerDeletion)) return true;
    }
    return false;
  }

  /** Foreground deletion's mark: the foregroundDeletion finalizer and a deletionTimestamp. */
  private markForeground(key: Key, old: KubeObject, rev: number): KubeObject {
    if (old.metadata.deletionTimestamp && old.metadata.finalizers?.includes(foregroundFinalizer)) return old;
    const held = { ...old, metadata: { ...old.metadata, finalizers: [...(old.metadata.finalizers ?? []).filter((f) => f !== foregroundFinalizer), foregroundFinalizer] } };
    if (old.metadata.deletionTimestamp) {
      const next = plainCopy(held);
      this.appendChange(key, 'MODIFIED', next, rev, JSON.stringify(old));
      return next;
    }
    return this.markDeleting(key, held, rev, undefined, JSON.stringify(old));
  }

  /** An owner deleted in the foreground goes once its last blocking dependent has gone. */
  private releaseForegroundOwner(ownerUid: string) {
    const at = this.st.keyOfUid.get(ownerUid);
    if (!at) return;
    const cur = this.current(at.grp, at.plural, at.ns, at.name);
    // most owners are not being deleted in the foreground: their JSON says so without a parse
    if (!cur || !cur.value.includes(`"${foregroundFinalizer}"`)) return;
    const owner = JSON.parse(cur.value) as KubeObject;
    if (!owner.metadata.deletionTimestamp || !owner.metadata.finalizers?.includes(foregroundFinalizer) || this.hasBlockingDependents(ownerUid)) return;
    const key: Key = { grp: at.grp, plural: at.plural, ns: at.ns, name: at.name };
    const finalizers = owner.metadata.finalizers.filter((f) => f !== foregroundFinalizer);
    if (!finalizers.length) {
      const next = plainCopy(owner);
      delete next.metadata.finalizers;
      this.removeObject(key, next, cur.rev, 'Background', cur.value);
      return;
    }
    const next = plainCopy(owner);
    next.metadata.finalizers = finalizers;
    this.appendChange(key, 'MODIFIED', next, cur.rev, cur.value);
  }

  async finalizeNamespace(name: string, finalizers: string[], opts: WriteOptions = {}): Promise<KubeObject> {
    this.assertOpen();
    const bad = finalizers.find((f) => typeof f !== 'string' || qualifiedNameError(f));
    if (bad !== undefined) {
      throw new StoreError('Invalid', `Namespace "${name}" is invalid: spec.finalizers: Invalid value: ${JSON.stringify(bad)}: a finalizer must be a qualified name`,
        [{ field: 'spec.finalizers', message: 'a finalizer must be a qualified name', reason: 'FieldValueInvalid' }]);
    }
    const apply = (): KubeObject => {
      const cur = this.current(NamespaceType.group, NamespaceType.plural, '', name);
      if (!cur) throw notFound(NamespaceType.group, NamespaceType.plural, name);
      const next = JSON.parse(cur.value) as KubeObject;
      next.spec = { ...(next.spec as object | undefined), finalizers };
      if (opts.dryRun) return next;
      // kube removes a namespace whose finalizers are all gone, whatever is left in it
      if (next.metadata.deletionTimestamp && !finalizers.length && !next.metadata.finalizers?.length) {
        this.activeNamespaces.delete(name);
        return this.removeObject(keyOf(NamespaceType, '', name), next, cur.rev, 'Orphan', cur.value);
      }
      this.appendChange(keyOf(NamespaceType, '', name), 'MODIFIED', next, cur.rev, cur.value);
      return next;
    };
    return opts.dryRun ? apply() : this.write(apply);
  }

  /** Removes a terminating namespace once nothing is left in it and nothing else holds it. */
  private finishNamespace(ns: string) {
    const cur = this.current(NamespaceType.group, NamespaceType.plural, '', ns);
    // most removals happen in a live namespace: its stored JSON has no deletionTimestamp to parse for
    if (!cur || !cur.value.includes('"deletionTimestamp"')) return;
    const n = JSON.parse(cur.value) as KubeObject;
    if (!n.metadata.deletionTimestamp || n.metadata.finalizers?.length || this.st.anyInNamespace.get(ns)) return;
    this.removeObject(keyOf(NamespaceType, '', ns), n, cur.rev, 'Background', cur.value);
  }

  private removeObject(key: Key, old: KubeObject, rev: number, policy: 'Background' | 'Foreground' | 'Orphan', oldValue?: string): KubeObject {
    const gone = plainCopy(old);
    this.appendChange(key, 'DELETED', gone, rev, oldValue ?? JSON.stringify(old));
    if (old.metadata.uid) this.collectDependents(old.metadata.uid, policy);
    for (const ref of old.metadata.ownerReferences ?? []) if (ref.blockOwnerDeletion) this.releaseForegroundOwner(ref.uid);
    if (key.ns) this.finishNamespace(key.ns);
    return gone;
  }

  /**
   * What the garbage collector does once an owner is gone, done in the same transaction:
   * dependents with another live owner only lose the reference; the rest are deleted
   * (Background) or keep living without it (Orphan).
   */
  private collectDependents(ownerUid: string, policy: 'Background' | 'Foreground' | 'Orphan') {
    for (const d of this.st.dependentsOf.all(ownerUid)) {
      const cur = this.current(d.grp, d.plural, d.ns, d.name);
      if (!cur) continue;
      const obj = JSON.parse(cur.value) as KubeObject;
      const others = (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
      if (policy === 'Orphan' || others.some((r) => this.ownerLives(r))) {
        const next = plainCopy(obj);
        if (others.length) next.metadata.ownerReferences = others;
        else delete next.metadata.ownerReferences;
        this.appendChange(d, 'MODIFIED', next, cur.rev, cur.value);
      } else {
        this.deleteOrMark(d, obj, cur.rev, 'Background');
      }
    }
  }

  /**
   * What the garbage collector does with an object whose owner references name owners that are
   * gone (a controller, working from its cache, made it for an owner deleted a moment before):
   * with no live owner left it is deleted, else the dangling references are dropped (ownerLives).
   * Done in the same transaction as the write.
   */
  /**
   * An owner of a kind this server does not serve (a Deployment) cannot be looked up and counts
   * as live, as a cluster's collector cannot map it either.
   */
  private ownerLives(ref: { apiVersion: string; kind: string; uid: string }): boolean {
    return !resourceTypeFor(ref.apiVersion, ref.kind) || this.st.uidExists.get(ref.uid) !== undefined;
  }

  private collectIfOwnersGone(key: Key, obj: KubeObject, rev: number) {
    const refs = obj.metadata.ownerReferences ?? [];
    const dangling = refs.filter((r) => !this.ownerLives(r));
    if (!dangling.length) return;
    if (dangling.length === refs.length) {
      this.deleteOrMark(key, obj, rev, 'Background');
      return;
    }
    const next = plainCopy(obj);
    next.metadata.ownerReferences = refs.filter((r) => !dangling.includes(r));
    this.appendChange(key, 'MODIFIED', next, rev, JSON.stringify(obj));
  }

  private deleteNamespaceContents(ns: string) {
    for (const k of this.st.keysInNamespace.all(ns)) {
      const cur = this.current(k.grp, k.plural, k.ns, k.name);
      if (!cur) continue; // already removed by a cascade earlier in this loop
      this.deleteOrMark(k, JSON.parse(cur.value) as KubeObject, cur.rev, 'Background');
    }
  }

  /**
   * Namespaces are implicit: the first object written into one creates its Namespace object,
   * so listing namespaces shows every namespace in use. A terminating one refuses new objects,
   * and a deleted one is not made again: a write that comes after its deletion (an Event about an
   * object that was in it, from a controller finishing its work) is refused with NotFound, as kube's
   * NamespaceLifecycle refuses it for every client. (Once compaction has dropped the deletion,
   * the name counts as never seen.)
   */
  private ensureNamespace(ns: string, type: ResourceType = NamespaceType, name = ns) {
    if (this.activeNamespaces.has(ns)) return;
    const cur = this.current(NamespaceType.group, NamespaceType.plural, '', ns);
    if (cur) {
      const n = JSON.parse(cur.value) as KubeObject;
      if (n.metadata.deletionTimestamp) throw namespaceTerminating(type, name, ns);
      this.activeNamespaces.add(ns);
      return;
    }
    const obj: KubeObject = {
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: ns, uid: randomUUID(), creationTimestamp: rfc3339(this.clock.now()) },
      status: { phase: 'Active' },
    };
    prepareNamespace(NamespaceType, obj);
    const prev = this.st.lastRev.get(NamespaceType.group, NamespaceType.plural, '', ns)?.id ?? null;
    if (prev !== null) throw notFound(NamespaceType.group, NamespaceType.plural, ns);
    this.appendChange(keyOf(NamespaceType, '', ns), 'ADDED', obj, prev, undefined);
    this.activeNamespaces.add(ns);
  }

  private maybeScheduleCompaction() {
    const slack = Math.max(100, Math.floor(this.compactKeep / 10));
    if (this.compactScheduled || this.rev - this.compactedRev < this.compactKeep + slack) return;
    this.compactScheduled = true;
    setImmediate(() => {
      this.compactScheduled = false;
      if (!this.closed) this.compact();
    });
  }

  private armCompactTimer() {
    const revAtArm = this.rev;
    this.cancelCompactTimer = this.clock.setTimer(this.compactIntervalMs, () => {
      if (this.closed) return;
      // nothing written for a whole interval: the WAL goes back into the file, so an idle server holds no WAL
      if (this.rev === revAtArm && this.rev !== this.checkpointedRev && !this.batch && !this.checkpointer?.busy) this.checkpoint();
      this.compact();
      this.armCompactTimer();
    });
  }
}

/**
 * The database holds Secrets, private keys included: owner-only. SQLite gives its WAL and
 * shared-memory files the database file's permissions, so setting them here covers those too.
 */
function ownerOnlyFile(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
}
