// cert-manager's challenge scheduler: bounds how many Challenges are processed at once and
// never lets two Challenges for the same DNS name and type run together (they would fight
// over one TXT record or one token path); the later one waits.
import type { Challenge } from '../../../api/types.ts';
import { FINAL_STATES } from '../orders/order.ts';
import { byCodeUnits } from '../../../api/ordering.ts';

export const MAX_CONCURRENT_CHALLENGES = 60;
/** most Challenges started in one pass, so one burst cannot starve the rest of the queue */
const MAX_PER_PASS = 20;

function pairOf(c: Challenge): string {
  return `${c.spec.dnsName}\u0000${c.spec.type}`;
}

function olderFirst(a: Challenge, b: Challenge): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  return ta - tb || byCodeUnits(a.metadata.name ?? '', b.metadata.name ?? '');
}

/** The Challenges to mark processing now. */
export function scheduleChallenges(all: Challenge[], max = MAX_CONCURRENT_CHALLENGES): Challenge[] {
  const inProgress = all.filter((c) => c.status?.processing);
  if (inProgress.length >= max) return [];
  const busy = new Set(inProgress.map(pairOf));
  const chosen = new Map<string, Challenge>();
  for (const c of [...all].sort(olderFirst)) {
    if (c.status?.processing || c.metadata.deletionTimestamp || FINAL_STATES.includes(c.status?.state ?? '')) continue;
    const pair = pairOf(c);
    if (busy.has(pair) || chosen.has(pair)) continue;
    chosen.set(pair, c);
  }
  return [...chosen.values()].slice(0, Math.min(MAX_PER_PASS, max - inProgress.length));
}
