// The informer cache lags behind our own writes. A reconcile that reads an object older than one
// this controller has already written would redo ACME calls that cost requests (finalize twice,
// accept twice), so such a read is skipped: the watch event of our write brings the key back.
import type { KubeObject } from '../../api/meta.ts';

function compareVersions(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a === b ? 0 : Number.NaN;
}

export class WrittenVersions {
  private readonly latest = new Map<string, string>();

  noteWrite(written: KubeObject): KubeObject {
    const uid = written.metadata.uid;
    const rv = written.metadata.resourceVersion;
    if (uid && rv) this.latest.set(uid, rv);
    return written;
  }

  /** Whether obj is older than what this controller last wrote for it. */
  isStale(obj: KubeObject): boolean {
    const uid = obj.metadata.uid ?? '';
    const mine = this.latest.get(uid);
    const seen = obj.metadata.resourceVersion;
    if (!mine || !seen) return false;
    if (compareVersions(seen, mine) < 0) return true;
    this.latest.delete(uid);
    return false;
  }

  forget(obj: KubeObject): void {
    this.latest.delete(obj.metadata.uid ?? '');
  }
}
