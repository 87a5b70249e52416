// A keyed work queue with client-go's guarantees (a key is queued once however often it is
// added, and never handed to two workers at once) plus cert-manager's scheduled requeue.
import { realClock, type Clock } from './clock.ts';

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

interface RetryTimer { at: number; cancel: () => void }

export class WorkQueue {
  private readonly clock: Clock;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly queue: string[] = [];
  /** keys waiting to be processed (queued, or re-added while processing) */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly scheduled = new Map<string, () => void>();
  private readonly retries = new Map<string, RetryTimer>();
  private readonly failures = new Map<string, number>();
  private waiters: ((key: string | undefined) => void)[] = [];
  private closed = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1000_000;
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
    this.scheduled.get(key)?.();
    this.scheduled.delete(key);
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const cancel = this.clock.setTimer(ms, () => {
      if (this.scheduled.get(key) !== cancel) return;
      this.scheduled.delete(key);
      this.add(key);
    });
    this.scheduled.set(key, cancel);
  }

  /** Adds key after its per-key exponential backoff; an earlier pending retry is kept. */
  addRateLimited(key: string): void {
    if (this.closed) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** n);
    const at = this.clock.now().getTime() + delay;
    const pending = this.retries.get(key);
    if (pending && pending.at <= at) return;
    pending?.cancel();
    const timer: RetryTimer = {
      at,
      cancel: this.clock.setTimer(delay, () => {
        if (this.retries.get(key) !== timer) return;
        this.retries.delete(key);
        this.add(key);
      }),
    };
    this.retries.set(key, timer);
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
    for (const cancel of this.scheduled.values()) cancel();
    for (const t of this.retries.values()) t.cancel();
    this.scheduled.clear();
    this.retries.clear();
    this.queue.length = 0;
    this.dirty.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}
