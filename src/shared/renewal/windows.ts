// Renewal windows: a cron expression gives the local wall-clock times at which a window opens
// in its time zone; the window then stays open for an absolute duration (elapsed time, so a
// 6h window that spans a DST change is still 6 real hours).
//
// cron-parser's own time-zone iteration is not used: it skips the spring-forward day in
// prev(), returns both passes of a repeated hour in prev() but only the first in next(), and
// skips a whole day in zones with a 30-minute shift (Australia/Lord_Howe). Instead cron is
// matched on the zone's wall-clock timeline in UTC (exact, no DST there) and each match is
// mapped to an instant by instantOfWallClock, which gives every local date exactly one start.
import { createRequire } from 'node:module';
import type { CronExpression, CronExpressionParser as CronExpressionParserType } from 'cron-parser';
import { parseDuration } from '../../api/duration.ts';
import { isKnownTimeZone, instantOfWallClock, wallClockOf } from './wall-clock.ts';

// cron-parser is loaded on first use, synchronously (its CommonJS build): most Certificates have
// no windows, and `certsmith status` would otherwise pay for it at start.
let cronParser: typeof CronExpressionParserType | undefined;
function cronExpressionParser(): typeof CronExpressionParserType {
  return (cronParser ??= (createRequire(import.meta.url)('cron-parser') as typeof import('cron-parser')).CronExpressionParser);
}

/** A window as written in spec.renewal.windows, in either the seed's or cert-manager's spelling. */
export interface RenewalWindowSpec {
  cron: string[] | string;
  duration?: string;
  windowDuration?: string;
  timeZone?: string;
  timezone?: string;
}

/** One start schedule: a window spec with a list of cron expressions yields one per entry. */
export interface ParsedWindow {
  /** Position in spec.renewal.windows. */
  index: number;
  cron: string;
  durationMs: number;
  timeZone: string;
  /** An expression that names no real date (e.g. 31 February) parses but never opens. */
  neverOpens: boolean;
}

export interface WindowOccurrence { start: Date; end: Date; index: number; cron: string; timeZone: string }

const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
// Larger than any DST shift in the tz database (Lord Howe 30m, most 1h, a few historic 2h),
// so a wall-clock search started this far out cannot miss a start near the boundary.
const SHIFT_MARGIN_MS = 3 * 3_600_000;
const DAY_MS = 86_400_000;
// Far enough that a leap-day-only expression (Feb 29 across the skipped 2100) still fires.
const DEFAULT_HORIZON_MS = 9 * 366 * DAY_MS;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseCron(expr: string): { ok: true; neverOpens: boolean } | { ok: false; reason: string } {
  const text = expr.trim();
  if (text.startsWith('@')) {
    if (!DESCRIPTORS.has(text.toLowerCase())) return { ok: false, reason: `unknown descriptor "${text}"` };
  } else {
    const fields = text.split(/\s+/).filter(Boolean).length;
    if (fields !== 5) {
      return { ok: false, reason: `invalid cron expression "${expr}": expected 5 fields (minute hour day-of-month month day-of-week), got ${fields}` };
    }
  }
  try {
    cronExpressionParser().parse(text, { tz: 'UTC', currentDate: 0 });
    return { ok: true, neverOpens: false };
  } catch (err) {
    const message = (err as Error).message;
    // cron-parser rejects a day of month that no listed month has (0 0 31 2 *); cron and
    // cert-manager accept it as a schedule that never fires, so it means "no window".
    if (message === 'Invalid explicit day of month definition') return { ok: true, neverOpens: true };
    return { ok: false, reason: `invalid cron expression "${expr}": ${message}` };
  }
}

/**
 * Validates and normalises spec.renewal.windows. Seed spelling wins where both are given:
 * cron list or string, duration | windowDuration, timeZone | timezone (UTC when absent or empty).
 * Errors name the offending field path.
 */
export function parseWindows(windows: unknown): { windows: ParsedWindow[] } | { error: string } {
  if (windows === undefined || windows === null) return { windows: [] };
  if (!Array.isArray(windows)) return { error: 'spec.renewal.windows: must be a list' };
  const parsed: ParsedWindow[] = [];
  for (let index = 0; index < windows.length; index++) {
    const path = `spec.renewal.windows[${index}]`;
    const w: unknown = windows[index];
    if (!isRecord(w)) return { error: `${path}: must be an object with cron, duration and timeZone` };

    const zoneField = w.timeZone !== undefined ? 'timeZone' : 'timezone';
    const zoneValue = w[zoneField];
    if (zoneValue !== undefined && zoneValue !== null && typeof zoneValue !== 'string') {
      return { error: `${path}.${zoneField}: must be a string` };
    }
    const timeZone = typeof zoneValue === 'string' && zoneValue.trim() !== '' ? zoneValue.trim() : 'UTC';
    if (!isKnownTimeZone(timeZone)) return { error: `${path}.${zoneField}: unknown time zone "${timeZone}"` };

    const durationField = w.duration !== undefined ? 'duration' : 'windowDuration';
    const durationValue = w[durationField];
    if (durationValue === undefined || durationValue === null || durationValue === '') {
      return { error: `${path}.duration: required (a Go duration such as "6h")` };
    }
    if (typeof durationValue !== 'string') return { error: `${path}.${durationField}: must be a Go duration string such as "6h"` };
    let durationMs: number;
    try {
      durationMs = parseDuration(durationValue);
    } catch (err) {
      return { error: `${path}.${durationField}: ${(err as Error).message}` };
    }
    if (!(durationMs > 0)) return { error: `${path}.${durationField}: must be a positive duration, got "${durationValue}"` };

    const crons = typeof w.cron === 'string' ? [{ expr: w.cron, path: `${path}.cron` }]
      : Array.isArray(w.cron) ? w.cron.map((expr: unknown, i: number) => ({ expr, path: `${path}.cron[${i}]` }))
        : undefined;
    if (!crons) return { error: `${path}.cron: required (a cron expression or a list of them)` };
    if (crons.length === 0) return { error: `${path}.cron: must list at least one cron expression` };
    for (const { expr, path: cronPath } of crons) {
      if (typeof expr !== 'string' || expr.trim() === '') return { error: `${cronPath}: must be a non-empty cron expression` };
      const result = parseCron(expr);
      if (!result.ok) return { error: `${cronPath}: ${result.reason}` };
      parsed.push({ index, cron: expr.trim(), durationMs, timeZone, neverOpens: result.neverOpens });
    }
  }
  return { windows: parsed };
}

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
