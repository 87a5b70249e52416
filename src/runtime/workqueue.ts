// A keyed work queue with client-go's guarantees (a key is queued once however often it is
// added, and never handed to two workers at once) plus cert-manager's scheduled requeue.
import { realClock, type Clock } from './clock.ts';
import { KeySchedule } from './key-schedule.ts';

export interface WorkQueueOptions {
  clock?: Clock;
  /** first retry delay of addRateLimited; doubles per consecutive failure */
  baseDelayMs?: number;
  /** largest retry delay of addRateLimited */
  maxDelayMs?: number;
}

/** Retry bounds cert-manager uses per controller family (section 0 of the behaviour reference). */
export const retryBackoff = {
  certificates: { baseDelayMs: 1000, maxDelayMs: 30_000 },
  requestsAndIssuers: { baseDelayMs: 5000, maxDelayMs: 5 * 60_000 },
  acme: { baseDelayMs: 5000, maxDelayMs: 30 * 60_000 },
} as const;

/**
 * Keys in arrival order, O(1) at both ends. Array.prototype.shift moves every remaining element
 * once an array's backing store is large (V8 cannot trim it in place there): with 100,000 keys
 * queued each get() copied the rest, and the trigger controller fell many minutes behind.
 */
class KeyFifo {
  private items: (string | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head === this.items.length) return undefined;
    const key = this.items[this.head];
    this.items[this.head++] = undefined;
    // drop the taken half once it is the larger one: each key is copied O(1) times on average
    if (this.head === this.items.length) this.clear();
    else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

export class WorkQueue {
  private readonly clock: Clock;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly queue = new KeyFifo();
  /** keys waiting to be processed (queued, or re-added while processing) */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  /** keys added back by addAfter and by addRateLimited: one clock timer each, not one per key */
  private readonly scheduled: KeySchedule;
  private readonly retries: KeySchedule;
  private readonly failures = new Map<string, number>();
  private waiters: ((key: string | undefined) => void)[] = [];
  private closed = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1000_000;
    this.scheduled = new KeySchedule(this.clock, (key) => this.add(key));
    this.retries = new KeySchedule(this.clock, (key) => this.add(key));
  }

  add(key: string): void {
    if (this.closed || this.dirty.has(key)) return;
    this.dirty.add(key);
    // re-queued by done() once the running reconcile finishes
    if (this.processing.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
    } else {
      this.queue.push(key);
    }
  }

  /**
   * Adds key after ms of the clock's time. A later addAfter for the same key replaces the
   * earlier timer (cert-manager's scheduled work queue: the latest computed renewal wins).
   */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms > 0) {
      this.scheduled.schedule(key, this.clock.now().getTime() + ms);
      return;
    }
    this.scheduled.cancel(key);
    this.add(key);
  }

  /** Adds key after its per-key exponential backoff; an earlier pending retry is kept. */
  addRateLimited(key: string): void {
    if (this.closed) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** n);
    const at = this.clock.now().getTime() + delay;
    const pending = this.retries.dueAt(key);
    if (pending !== undefined && pending <= at) return;
    this.retries.schedule(key, at);
  }

  /** Clears key's failure count, so that its next failure retries after the base delay again. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, waiting for one; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks key processed; if it was added meanwhile, it is queued again now. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.closed) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  len(): number {
    return this.queue.length;
  }

  /** No key queued and none being processed (delayed keys do not count: they wait on the clock). */
  isIdle(): boolean {
    return this.queue.length === 0 && this.processing.size === 0 && this.dirty.size === 0;
  }

  /** Keys waiting on a timer (addAfter or addRateLimited). */
  pendingDelayed(): number {
    return this.scheduled.size + this.retries.size;
  }

  isShuttingDown(): boolean {
    return this.closed;
  }

  /** Drops queued keys and timers and releases waiting workers; keys in flight may still call done(). */
  shutDown(): void {
    if (this.closed) return;
    this.closed = true;
    this.scheduled.clear();
    this.retries.clear();
    this.queue.clear();
    this.dirty.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}
