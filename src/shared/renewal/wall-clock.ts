// Conversions between instants and the wall clock of an IANA time zone.
//
// A "wall-clock time" here is the local date and time written as if it were UTC, in epoch
// milliseconds: 2026-03-08 02:30 in America/Denver is Date.UTC(2026, 2, 8, 2, 30). On that
// timeline there is no DST, so cron matching can run there in UTC and every calendar rule is
// exact; only the final step back to an instant needs the zone's rules.

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23',
      year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The zone's UTC offset in ms at an instant (local = instant + offset). */
export function utcOffsetAt(timeZone: string, instantMs: number): number {
  const whole = Math.floor(instantMs / 1000) * 1000;
  const p: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(whole))) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const local = new Date(Date.UTC(2000, p.month - 1, p.day, p.hour, p.minute, p.second));
  local.setUTCFullYear(p.year);
  return local.getTime() - whole;
}

export function wallClockOf(timeZone: string, instantMs: number): number {
  return instantMs + utcOffsetAt(timeZone, instantMs);
}

/**
 * The instant a wall-clock time denotes, resolving DST the way RFC 5545 and Temporal's
 * "compatible" mode do, so that a daily window happens exactly once every local day:
 * - a time repeated when clocks go back means its first occurrence (the earlier instant);
 * - a time skipped when clocks go forward is read with the offset in force before the jump,
 *   which moves it forward by the length of the gap (02:30 in a 02:00→03:00 gap is 03:30).
 * The result never decreases as the wall-clock time increases, which the searches rely on.
 */
export function instantOfWallClock(timeZone: string, wallMs: number): number {
  // No zone changes offset twice within two days, so the offsets a day either side are the
  // only candidates.
  const before = utcOffsetAt(timeZone, wallMs - DAY_MS);
  const after = utcOffsetAt(timeZone, wallMs + DAY_MS);
  const withBefore = wallMs - before;
  const withAfter = wallMs - after;
  const beforeValid = utcOffsetAt(timeZone, withBefore) === before;
  const afterValid = utcOffsetAt(timeZone, withAfter) === after;
  if (beforeValid && afterValid) return Math.min(withBefore, withAfter);
  if (beforeValid) return withBefore;
  if (afterValid) return withAfter;
  return withBefore;
}
