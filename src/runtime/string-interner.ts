// Equal strings shared by content, for the informers' caches (issue 17). Every cached object
// arrives freshly parsed or cloned, so equal strings are separate copies: the CA's PEM in every
// Secret's ca.crt and every request's status.ca, a leaf in its request's status.certificate and
// in its Secret's tls.crt, "True", a namespace, an apiVersion on every object. Interning keeps
// one copy of each.
//
// Two generations instead of a least-recently-used list: a hit in the newer generation is one
// Map lookup (an LRU moves the entry on every hit: delete and set, on every string of every
// object, which cost about 1.7 ms per issuance); a hit in the older one moves the string to
// the newer; when the newer fills it becomes the older and the older is dropped. So a string
// stays between one and two generations after its last use, and one seen once (a uid, a
// time, a resourceVersion) drops out; only copies still in use stay alive.

export class StringInterner {
  private newer = new Map<string, string>();
  private older = new Map<string, string>();

  constructor(readonly generationSize: number) {
    if (!Number.isInteger(generationSize) || generationSize < 1) throw new RangeError(`StringInterner generationSize must be a positive integer, got ${generationSize}`);
  }

  /** Entries in both generations (a string promoted from the older is counted in both until it goes). */
  get size(): number {
    return this.newer.size + this.older.size;
  }

  /** The copy already held that equals s, or s itself, which is held from now on. */
  intern(s: string): string {
    const recent = this.newer.get(s);
    if (recent !== undefined) return recent;
    const shared = this.older.get(s) ?? s;
    this.newer.set(shared, shared);
    if (this.newer.size >= this.generationSize) {
      this.older = this.newer;
      this.newer = new Map();
    }
    return shared;
  }
}
