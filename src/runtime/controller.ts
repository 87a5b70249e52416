// The shell every controller shares: keys come in through a work queue, N workers call
// reconcile, failures retry with backoff, success may schedule the next look. Behaviour
// lives in the reconcile functions; this file only decides when they run.
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import type { CertsmithMetrics } from '../metrics/registry.ts';
import { realClock, type Clock } from './clock.ts';
import { cacheKey, type Informer, type InformerFactory } from './informer.ts';
import { silentLogger, type Logger } from './logger.ts';
import { WorkQueue, retryBackoff } from './workqueue.ts';
import { processLoopShare, type LoopShare } from './loop-share.ts';

/** requeueAfter (ms): look at the key again then; 0 or less means now. */
export type ReconcileResult = void | { requeueAfter?: number };
export type Reconcile = (key: string) => Promise<ReconcileResult>;

export interface ControllerOptions {
  /** cert-manager's controller name, e.g. "certificates-issuing"; also the metrics label */
  name: string;
  reconcile: Reconcile;
  /** concurrent reconciles of distinct keys (a key never runs twice at once); default 1 */
  workers?: number;
  clock?: Clock;
  logger?: Logger;
  metrics?: CertsmithMetrics;
  /** retry backoff on error; default cert-manager's certificate controllers' 1 s → 30 s */
  backoff?: { baseDelayMs: number; maxDelayMs: number };
  /** the event loop's time, shared with every other controller and the API server; default the process's */
  loopShare?: LoopShare;
}

/** "namespace/name" or "name" → its parts. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The queue key of an object. */
export function keyFor(obj: KubeObject): string {
  return cacheKey(obj.metadata.namespace, obj.metadata.name ?? '');
}

/**
 * The key of obj's controlling owner when that owner is of type owner (kind and API group
 * match; the version may differ, as in cert-manager), else undefined.
 */
export function controllerOwnerKey(obj: KubeObject, owner: ResourceType): string | undefined {
  const ref = obj.metadata.ownerReferences?.find((r) =>
    r.controller === true && r.kind === owner.kind && (r.apiVersion.includes('/') ? r.apiVersion.split('/')[0] : '') === owner.group);
  if (!ref) return undefined;
  return cacheKey(owner.namespaced ? obj.metadata.namespace : undefined, ref.name);
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconcile: Reconcile;
  private readonly workerCount: number;
  private readonly log: Logger;
  private readonly metrics?: CertsmithMetrics;
  private readonly loopShare: LoopShare;
  private workers: Promise<void>[] = [];
  private reconcilesStarted = 0;
  private state: 'new' | 'running' | 'stopped' = 'new';

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconcile = opts.reconcile;
    this.workerCount = opts.workers ?? 1;
    if (!Number.isInteger(this.workerCount) || this.workerCount < 1) throw new Error(`controller ${opts.name}: workers must be a positive integer`);
    this.log = (opts.logger ?? silentLogger).child({ controller: opts.name });
    this.metrics = opts.metrics;
    this.loopShare = opts.loopShare ?? processLoopShare;
    this.queue = new WorkQueue({ clock: opts.clock ?? realClock, ...(opts.backoff ?? retryBackoff.certificates) });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /**
   * Enqueues keys for every change the informer reports. toKeys maps an object to the keys
   * to reconcile (default: the object's own key); for updates both the old and the new
   * object are mapped, so a changed owner reference reaches the old owner too.
   */
  watch<T extends KubeObject>(informer: Informer<T>, toKeys: (obj: T) => string | string[] | undefined = keyFor): this {
    const enqueue = (obj: T) => {
      const keys = toKeys(obj);
      if (keys === undefined) return;
      for (const k of Array.isArray(keys) ? keys : [keys]) this.queue.add(k);
    };
    informer.onAdd(enqueue);
    informer.onUpdate((oldObj, newObj) => { enqueue(oldObj); enqueue(newObj); });
    informer.onDelete(enqueue);
    return this;
  }

  start(): void {
    if (this.state !== 'new') return;
    this.state = 'running';
    for (let i = 0; i < this.workerCount; i++) this.workers.push(this.runWorker());
    this.log.debug({ workers: this.workerCount }, 'started');
  }

  /** Stops taking keys and waits for the reconciles in flight to finish. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.queue.shutDown();
    await Promise.all(this.workers);
    this.log.debug('stopped');
  }

  /** Nothing queued now and no reconcile running (keys waiting on a timer do not count). */
  isIdle(): boolean {
    return this.queue.isIdle();
  }

  activityCount(): number {
    return this.reconcilesStarted;
  }

  private async runWorker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      // reconciles that decide from the caches alone resolve as microtasks: the loop's time is
      // shared (loop-share.ts), so that the API server answers while queues are long
      while (this.loopShare.used()) await this.loopShare.nextTurn();
      this.loopShare.started();
      this.reconcilesStarted++;
      this.metrics?.controllerSync(this.name);
      try {
        const result = await this.reconcile(key);
        this.queue.forget(key);
        if (result && result.requeueAfter !== undefined) this.queue.addAfter(key, result.requeueAfter);
      } catch (err) {
        this.metrics?.controllerSyncError(this.name);
        this.queue.addRateLimited(key);
        // the message only: stacks and error objects can carry request bodies
        this.log.error({ key, err: err instanceof Error ? err.message : String(err), retries: this.queue.numRequeues(key) }, 're-queuing item due to error processing');
      } finally {
        this.loopShare.finished();
        this.queue.done(key);
      }
    }
  }
}

export interface ControllerManagerOptions {
  informers: InformerFactory;
  logger?: Logger;
}

/** Starts informers, waits for their caches, then runs the controllers; stops them all. */
export class ControllerManager {
  readonly informers: InformerFactory;
  private readonly controllers: Controller[] = [];
  private readonly log: Logger;
  private started = false;
  private ready = false;

  constructor(opts: ControllerManagerOptions) {
    this.informers = opts.informers;
    this.log = opts.logger ?? silentLogger;
  }

  add(...controllers: Controller[]): this {
    this.controllers.push(...controllers);
    if (this.ready) for (const c of controllers) c.start();
    return this;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.informers.start();
    await this.informers.waitForSync();
    this.ready = true;
    for (const c of this.controllers) c.start();
    this.log.info({ controllers: this.controllers.map((c) => c.name) }, 'caches synced, controllers started');
  }

  /** For /readyz: caches synced and controllers running. */
  isReady(): boolean {
    return this.ready;
  }

  async stop(): Promise<void> {
    this.ready = false;
    await Promise.all(this.controllers.map((c) => c.stop()));
    this.informers.stop();
  }

  /**
   * Resolves once every queue is empty, no reconcile runs and no informer has undelivered
   * work, and that has held across several turns of the event loop (store watches deliver
   * asynchronously, so one quiet moment is not enough). Keys waiting on the clock do not
   * count: tests advance a FakeClock and await this again.
   */
  async whenIdle(opts: { timeoutMs?: number } = {}): Promise<void> {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    let lastActivity = -1;
    let quietRounds = 0;
    for (let round = 0; ; round++) {
      await new Promise((r) => (round % 2 ? setTimeout(r, 1) : setImmediate(r)));
      const busy = this.informers.all().filter((i) => !i.isIdle()).map((i) => `informer ${i.type.plural}`)
        .concat(this.controllers.filter((c) => !c.isIdle()).map((c) => `controller ${c.name}`));
      const activity = this.informers.all().reduce((n, i) => n + i.activityCount(), 0) + this.controllers.reduce((n, c) => n + c.activityCount(), 0);
      if (busy.length === 0 && activity === lastActivity) {
        if (++quietRounds >= 3) return;
      } else {
        quietRounds = 0;
      }
      lastActivity = activity;
      if (Date.now() > deadline) throw new Error(`not idle after ${opts.timeoutMs ?? 30_000} ms: ${busy.join(', ') || 'still active'}`);
    }
  }
}
