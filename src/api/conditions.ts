// cert-manager's set-condition rule: same status keeps lastTransitionTime, a status change resets it.
import type { Condition } from './meta.ts';
import { rfc3339 } from './time.ts';

// Condition times are written here; the formatters live in time.ts and are re-exported for the
// many controllers that set conditions and stamp status fields in one breath.
export { isoTime, rfc3339 } from './time.ts';

export function getCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

/** Returns a new list with the condition set; never mutates the input. */
export function setCondition(conditions: Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: Date): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const stamp = rfc3339(now);
  if (i < 0) {
    list.push({ ...next, lastTransitionTime: stamp });
  } else {
    const old = list[i];
    list[i] = { ...next, lastTransitionTime: old.status === next.status ? old.lastTransitionTime : stamp };
  }
  return list;
}

export function removeCondition(conditions: Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

