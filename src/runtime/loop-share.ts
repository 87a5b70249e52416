// How the controllers and the API server share one event loop (issue 17). Reconciles that decide
// from the caches alone run back to back as microtasks; without a turn of the loop now and then
// the API server answers nothing (/readyz included) until every queue is empty. Each worker
// used to count its own time, so with a few dozen busy workers one turn of the loop could hold
// several hundred milliseconds of controller work, and `certsmith apply` of 10,000 Certificates to
// a server issuing others went at 200 objects/s. Now one budget per turn is shared by every
// worker in the process, and it shrinks while the API server is answering requests: a user's
// command comes first, the controllers catch up once it is done.
import { performance } from 'node:perf_hooks';

export interface LoopShareOptions {
  /** controller time per turn of the event loop while no request is being answered (ms) */
  sliceMs?: number;
  /** controller time per turn while requests come in (ms) */
  foregroundSliceMs?: number;
  /** how long after a request began it still counts as "requests come in" (ms) */
  foregroundWindowMs?: number;
  now?: () => number;
}

export class LoopShare {
  private readonly sliceMs: number;
  private readonly foregroundSliceMs: number;
  private readonly foregroundWindowMs: number;
  private readonly now: () => number;
  private sliceStart: number;
  private lastRequest = Number.NEGATIVE_INFINITY;
  private turn?: Promise<void>;

  constructor(o: LoopShareOptions = {}) {
    this.sliceMs = o.sliceMs ?? 20;
    this.foregroundSliceMs = o.foregroundSliceMs ?? 2;
    this.foregroundWindowMs = o.foregroundWindowMs ?? 250;
    this.now = o.now ?? (() => performance.now());
    this.sliceStart = this.now();
  }

  /** The API server calls this as each request arrives. */
  noteRequest(): void {
    this.lastRequest = this.now();
  }

  /** Whether this turn's controller time is used up: the caller awaits nextTurn() before its next reconcile. */
  used(): boolean {
    const now = this.now();
    const budget = now - this.lastRequest < this.foregroundWindowMs ? this.foregroundSliceMs : this.sliceMs;
    return now - this.sliceStart > budget;
  }

  /**
   * Resolves in the next turn of the event loop, after it has polled for I/O (setImmediate runs
   * after the poll phase), and starts that turn's budget. One promise for all who wait in a turn.
   */
  nextTurn(): Promise<void> {
    this.turn ??= new Promise<void>((resolve) => setImmediate(() => {
      this.turn = undefined;
      this.sliceStart = this.now();
      resolve();
    }));
    return this.turn;
  }
}

/** The process's one event loop, shared by every controller and API server in it unless a test gives its own. */
export const processLoopShare = new LoopShare();
