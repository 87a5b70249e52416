// cert-manager's ComputeName for Orders and Challenges: a DNS-safe prefix of at most 52
// characters, '-', and the decimal FNV-1 32-bit hash of the JSON of what the object is for.

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1 (not 1a), as Go's hash/fnv New32. */
export function fnv32(data: Buffer): number {
  let h = FNV32_OFFSET;
  for (const b of data) {
    h = Math.imul(h, FNV32_PRIME) >>> 0;
    h = (h ^ b) >>> 0;
  }
  return h >>> 0;
}

/** Cuts a name to 52 characters, ending on a letter or digit, so that '-<hash>' keeps it within 63. */
export function shortenTo52(name: string): string {
  if (name.length < 52) return name;
  const cut = name.slice(0, 52);
  const m = /^(.*[a-zA-Z0-9])/.exec(cut);
  return m ? m[1] : cut;
}

export function computeName(prefix: string, obj: unknown): string {
  return `${shortenTo52(prefix)}-${fnv32(Buffer.from(JSON.stringify(obj)))}`;
}
