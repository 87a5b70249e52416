// Keys due at instants of a clock, behind one clock timer (issue 17). A work queue holds a
// renewal or expiry look for every Certificate: one Node timer each cost about half a KiB
// (the Timeout, a timer list per distinct duration, the closures), 100,000 of them tens of MB.
// Here a key costs one small entry in a Map and a binary heap ordered by instant; the one
// timer is armed for the earliest. A replaced or cancelled entry stays in the heap until it
// reaches the top or the heap is rebuilt (when stale entries outnumber live ones).
import type { Clock } from './clock.ts';

interface Entry { key: string; at: number; seq: number }

const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export class KeySchedule {
  private readonly entries = new Map<string, Entry>();
  private heap: Entry[] = [];
  private seq = 0;
  private armedAt?: number;
  private cancelTimer?: () => void;

  /** onDue is called with each key once its instant has come, in order of instant and then of scheduling. */
  constructor(private readonly clock: Clock, private readonly onDue: (key: string) => void) {}

  get size(): number {
    return this.entries.size;
  }

  /** The instant (ms since the epoch) key is due, if scheduled. */
  dueAt(key: string): number | undefined {
    return this.entries.get(key)?.at;
  }

  /** Schedules key for the instant at, replacing its earlier instant. */
  schedule(key: string, at: number): void {
    const entry = { key, at, seq: this.seq++ };
    this.entries.set(key, entry);
    this.push(entry);
    if (this.heap.length > 64 && this.heap.length > 2 * this.entries.size) this.rebuild();
    this.arm();
  }

  cancel(key: string): void {
    if (this.entries.delete(key)) this.arm();
  }

  clear(): void {
    this.entries.clear();
    this.heap = [];
    this.arm();
  }

  private live(e: Entry): boolean {
    return this.entries.get(e.key) === e;
  }

  /** The earliest live entry, dropping stale ones above it. */
  private first(): Entry | undefined {
    while (this.heap.length && !this.live(this.heap[0])) this.pop();
    return this.heap[0];
  }

  private arm(): void {
    const at = this.first()?.at;
    if (at === this.armedAt) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.armedAt = at;
    if (at === undefined) return;
    this.cancelTimer = this.clock.setTimer(at - this.clock.now().getTime(), () => this.fire());
  }

  private fire(): void {
    this.cancelTimer = undefined;
    this.armedAt = undefined;
    const now = this.clock.now().getTime();
    const due: string[] = [];
    for (let e = this.first(); e && e.at <= now; e = this.first()) {
      this.pop();
      this.entries.delete(e.key);
      due.push(e.key);
    }
    this.arm();
    for (const key of due) this.onDue(key);
  }

  private rebuild(): void {
    this.heap = this.heap.filter((e) => this.live(e));
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private push(e: Entry): void {
    const h = this.heap;
    let i = h.push(e) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    this.down(0);
  }

  private down(i: number): void {
    const h = this.heap;
    const e = h[i];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= h.length) break;
      if (child + 1 < h.length && before(h[child + 1], h[child])) child++;
      if (!before(h[child], e)) break;
      h[i] = h[child];
      i = child;
    }
    h[i] = e;
  }
}
