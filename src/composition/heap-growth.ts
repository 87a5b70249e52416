// How far V8 lets the heap grow between full collections, once it is large (issue 17). With
// Node's default heap limit (4 GB on a machine with more than 16 GB) V8 may let the heap grow to
// up to four times what its last full collection left live: at 20,000 Certificates 232 MiB were
// in use at the RSS peak for 138 MiB live, and at 100,000 (about 500 MB live) that headroom alone
// would pass 1 GiB. Once a full collection leaves more than LARGE_HEAP_BYTES live, growth is held
// to a quarter of it: full collections come more often, each a small share of the work a large
// heap makes anyway. Below that, V8's own choice stands: holding it there cost 10-20 % more CPU
// per issuance (bench/issue-ca.ts, 1,000 Certificates), for memory that is not the problem then.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

export const LARGE_HEAP_BYTES = 128 * 1024 * 1024;
const HELD_GROWTH_PERCENT = 25;

let users = 0;
let observer: PerformanceObserver | undefined;
let held = false;

function hold(on: boolean): void {
  if (on === held) return;
  held = on;
  // 0 is V8's default: no fixed factor, its own from collection and allocation speeds
  setFlagsFromString(`--heap-growing-percent=${on ? HELD_GROWTH_PERCENT : 0}`);
}

/** Whether growth is held now (for tests). */
export function heapGrowthHeld(): boolean {
  return held;
}

/**
 * Watches full collections for as long as the returned release has not been called (the
 * setting is the process's: every stack shares one watch, released with the last). Half the
 * threshold lets go again, so a heap near it does not switch on every collection.
 */
export function boundHeapGrowth(largeHeapBytes = LARGE_HEAP_BYTES): () => void {
  if (users++ === 0) {
    observer = new PerformanceObserver((list) => {
      const major = list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
      if (!major) return;
      const live = getHeapStatistics().used_heap_size;
      if (live > largeHeapBytes) hold(true);
      else if (live < largeHeapBytes / 2) hold(false);
    });
    observer.observe({ entryTypes: ['gc'] });
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--users > 0) return;
    observer?.disconnect();
    observer = undefined;
    hold(false);
  };
}
