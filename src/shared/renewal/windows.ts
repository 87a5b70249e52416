// Renewal windows: a cron expression gives the local wall-clock times at which a window opens
// in its time zone; the window then stays open for an absolute duration (elapsed time, so a
// 6h window that spans a DST change is still 6 real hours).
//
// cron-parser's own time-zone iteration is not used: it skips the spring-forward day in
// prev(), returns both passes of a repeated hour in prev() but only the first in next(), and
// skips a whole day in zones with a 30-minute shift (Australia/Lord_Howe). Instead cron is
// matched on the zone's wall-clock timeline in UTC (exact, no DST there) and each match is
// mapped to an instant by instantOfWallClock, which gives every local date exactly one start.
//
// What a valid window is (and its parsing) is decided in api/renewal-windows.ts, which admission
// uses too; this module only schedules parsed windows.
import type { CronExpression } from 'cron-parser';
import { cronExpressionParser, type ParsedWindow } from '../../api/renewal-windows.ts';
import { instantOfWallClock, wallClockOf } from './wall-clock.ts';

export { parseWindows } from '../../api/renewal-windows.ts';
export type { ParsedWindow, RenewalWindowSpec } from '../../api/renewal-windows.ts';

export interface WindowOccurrence { start: Date; end: Date; index: number; cron: string; timeZone: string }

// Larger than any DST shift in the tz database (Lord Howe 30m, most 1h, a few historic 2h),
// so a wall-clock search started this far out cannot miss a start near the boundary.
const SHIFT_MARGIN_MS = 3 * 3_600_000;
const DAY_MS = 86_400_000;
// Far enough that a leap-day-only expression (Feb 29 across the skipped 2100) still fires.
const DEFAULT_HORIZON_MS = 9 * 366 * DAY_MS;

function wallClockSchedule(w: ParsedWindow, fromWallMs: number, startWallMs: number, endWallMs: number): CronExpression {
  return cronExpressionParser().parse(w.cron, {
    tz: 'UTC', currentDate: fromWallMs, startDate: startWallMs, endDate: endWallMs,
  });
}

// cron-parser signals the end of the search span (or its own step limit) by throwing.
function step(schedule: CronExpression, reverse: boolean): number | undefined {
  try {
    return (reverse ? schedule.prev() : schedule.next()).getTime();
  } catch {
    return undefined;
  }
}

/** The earliest start of this schedule in (afterMs, untilMs]. */
export function firstStartAfter(w: ParsedWindow, afterMs: number, untilMs: number): number | undefined {
  if (w.neverOpens || untilMs <= afterMs) return undefined;
  const fromWall = wallClockOf(w.timeZone, afterMs) - SHIFT_MARGIN_MS;
  const schedule = wallClockSchedule(w, fromWall, fromWall, wallClockOf(w.timeZone, untilMs) + SHIFT_MARGIN_MS);
  for (;;) {
    const wall = step(schedule, false);
    if (wall === undefined) return undefined;
    const start = instantOfWallClock(w.timeZone, wall);
    if (start > untilMs) return undefined;
    if (start > afterMs) return start;
  }
}

/** The latest start of this schedule in [notBeforeMs, atOrBeforeMs]. */
export function lastStartAtOrBefore(w: ParsedWindow, atOrBeforeMs: number, notBeforeMs: number): number | undefined {
  if (w.neverOpens || atOrBeforeMs < notBeforeMs) return undefined;
  const fromWall = wallClockOf(w.timeZone, atOrBeforeMs) + SHIFT_MARGIN_MS;
  const schedule = wallClockSchedule(w, fromWall, wallClockOf(w.timeZone, notBeforeMs) - SHIFT_MARGIN_MS, fromWall);
  for (;;) {
    const wall = step(schedule, true);
    if (wall === undefined) return undefined;
    const start = instantOfWallClock(w.timeZone, wall);
    if (start < notBeforeMs) return undefined;
    if (start <= atOrBeforeMs) return start;
  }
}

function occurrence(w: ParsedWindow, start: number): WindowOccurrence {
  return { start: new Date(start), end: new Date(start + w.durationMs), index: w.index, cron: w.cron, timeZone: w.timeZone };
}

/**
 * The window occurrence that contains t (windows are half-open: [start, start + duration)).
 * When several do, the one that stays open longest; ties go to the earlier spec entry.
 */
export function windowContaining(parsed: ParsedWindow[], t: Date): WindowOccurrence | undefined {
  const at = t.getTime();
  let best: WindowOccurrence | undefined;
  for (const w of parsed) {
    // The latest start is the only candidate: earlier starts of the same schedule end earlier.
    const start = lastStartAtOrBefore(w, at, at - w.durationMs + 1);
    if (start === undefined) continue;
    if (!best || start + w.durationMs > best.end.getTime()) best = occurrence(w, start);
  }
  return best;
}

/**
 * The first window to open strictly after t, no later than `until` (default: nine years on,
 * which bounds the search for expressions that fire rarely or never).
 */
export function nextWindowStartAfter(parsed: ParsedWindow[], t: Date, until?: Date): WindowOccurrence | undefined {
  const after = t.getTime();
  const limit = until ? until.getTime() : after + DEFAULT_HORIZON_MS;
  let best: WindowOccurrence | undefined;
  for (const w of parsed) {
    const start = firstStartAfter(w, after, best ? Math.min(limit, best.start.getTime() - 1) : limit);
    if (start !== undefined) best = occurrence(w, start);
  }
  return best;
}

/**
 * Of the window occurrences that opened strictly after `openedAfter` and had closed by `closedBy`,
 * the one that closed last.
 */
export function lastWindowClosedBy(parsed: ParsedWindow[], closedBy: Date, openedAfter: Date): WindowOccurrence | undefined {
  let best: WindowOccurrence | undefined;
  for (const w of parsed) {
    const start = lastStartAtOrBefore(w, closedBy.getTime() - w.durationMs, openedAfter.getTime() + 1);
    if (start === undefined) continue;
    if (!best || start + w.durationMs > best.end.getTime()) best = occurrence(w, start);
  }
  return best;
}
