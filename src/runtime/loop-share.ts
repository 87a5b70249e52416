// How the controllers and the API server share one event loop (issue 17). Reconciles that decide
// from the caches alone run back to back as microtasks; without a turn of the loop now and then
// the API server answers nothing (/readyz included) until every queue is empty. Each worker
// used to count its own time, so with a few dozen busy workers one turn of the loop could hold
// several hundred milliseconds of controller work, and `certsmith apply` of 10,000 Certificates to
// a server issuing others went at 200 objects/s. Now one budget per turn is shared by every
// worker in the process, and it shrinks while the API server is answering requests: a user's
// command comes first, the controllers catch up once it is done.
// A small slice per turn was not enough on its own: while a client keeps requests in flight
// every turn has a request or two, so controllers still had half the loop and `certsmith apply`
// of 10,000 Certificates ran at 500 objects/s against 900 with no controllers. So while requests
// come in, a used-up slice is also followed by a pause (a timer, not a spin through empty turns)
// that keeps the controllers' share near foregroundSliceMs / (foregroundSliceMs + foregroundGapMs).
// Nor was the time slice alone: it bounds when reconciles start, but most of a reconcile runs
// after its first await (a store write, a key generated in the thread pool), outside any slice.
// So while requests come in, at most foregroundReconciles run at once.
// "Requests come in" means a client is busy (foregroundRequests within the window), not that
// something polls now and then: a dashboard or a script asking every 100 ms leaves the
// controllers the whole loop.
import { performance } from 'node:perf_hooks';

export interface LoopShareOptions {
  /** controller time per turn of the event loop while no request is being answered (ms) */
  sliceMs?: number;
  /** controller time per turn while requests come in (ms) */
  foregroundSliceMs?: number;
  /** how long after a request began it still counts as "requests come in" (ms) */
  foregroundWindowMs?: number;
  /** how many requests within the window make the API server the foreground; default 8 */
  foregroundRequests?: number;
  /** while requests come in, how long the controllers wait after using up a slice (ms) */
  foregroundGapMs?: number;
  /** while requests come in, how many reconciles may be under way at once, in every controller together */
  foregroundReconciles?: number;
  now?: () => number;
}

export class LoopShare {
  private readonly sliceMs: number;
  private readonly foregroundSliceMs: number;
  private readonly foregroundWindowMs: number;
  private readonly foregroundGapMs: number;
  private readonly foregroundReconciles: number;
  private readonly now: () => number;
  private sliceStart: number;
  /** when the last foregroundRequests requests began, oldest overwritten first */
  private readonly requestTimes: number[];
  private nextRequest = 0;
  private turn?: Promise<void>;
  private running = 0;

  constructor(o: LoopShareOptions = {}) {
    this.sliceMs = o.sliceMs ?? 20;
    this.foregroundSliceMs = o.foregroundSliceMs ?? 2;
    this.foregroundWindowMs = o.foregroundWindowMs ?? 250;
    this.foregroundGapMs = o.foregroundGapMs ?? 8;
    this.foregroundReconciles = o.foregroundReconciles ?? 4;
    this.requestTimes = new Array<number>(Math.max(1, o.foregroundRequests ?? 8)).fill(Number.NEGATIVE_INFINITY);
    this.now = o.now ?? (() => performance.now());
    this.sliceStart = this.now();
  }

  /** The API server calls this as each request arrives. */
  noteRequest(): void {
    this.requestTimes[this.nextRequest] = this.now();
    this.nextRequest = (this.nextRequest + 1) % this.requestTimes.length;
  }

  /** whether the last foregroundRequests requests all began within the window */
  private foreground(now: number): boolean {
    return now - this.requestTimes[this.nextRequest] < this.foregroundWindowMs;
  }

  /**
   * Whether a reconcile may not start now: this turn's controller time is used up, or while
   * requests come in, enough reconciles are under way. The caller awaits nextTurn() and asks again.
   */
  used(): boolean {
    const now = this.now();
    if (this.foreground(now)) return this.running >= this.foregroundReconciles || now - this.sliceStart > this.foregroundSliceMs;
    return now - this.sliceStart > this.sliceMs;
  }

  /** A reconcile starts (after used() said it may) ... */
  started(): void {
    this.running++;
  }

  /** ... and has ended, however it ended. */
  finished(): void {
    this.running--;
  }

  /**
   * Resolves in a later turn of the event loop, after it has polled for I/O (setImmediate runs
   * after the poll phase), and starts that turn's budget: the next turn, or while requests come
   * in, the first turn after the foreground gap. One promise for all who wait.
   */
  nextTurn(): Promise<void> {
    this.turn ??= new Promise<void>((resolve) => {
      const start = () => {
        this.turn = undefined;
        this.sliceStart = this.now();
        resolve();
      };
      if (this.foreground(this.now()) && this.foregroundGapMs > 0) setTimeout(() => setImmediate(start), this.foregroundGapMs);
      else setImmediate(start);
    });
    return this.turn;
  }
}

/** The process's one event loop, shared by every controller and API server in it unless a test gives its own. */
export const processLoopShare = new LoopShare();
