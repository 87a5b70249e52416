// The one parser of spec.renewal.windows. Admission turns its problems into field errors and
// the renewal controller reports the first as RenewalConfigInvalid, so an object admission
// accepts is never one the controller then calls invalid (issue 13). Scheduling (when a window
// opens) is the controller's; what a valid window is, is decided here.
import { createRequire } from 'node:module';
import type { CronExpressionParser as CronExpressionParserType } from 'cron-parser';
import { parseDuration } from './duration.ts';

// cron-parser is loaded on first use, synchronously (its CommonJS build): most Certificates have
// no windows, and `certsmith status` would otherwise pay for it at start.
let cronParser: typeof CronExpressionParserType | undefined;
export function cronExpressionParser(): typeof CronExpressionParserType {
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

/** What is wrong with a window, as a code the callers word for their readers, plus the runtime's wording. */
export type WindowProblemCode =
  | 'notList' | 'notObject' | 'wrongType'
  | 'unknownTimeZone'
  | 'durationRequired' | 'durationInvalid' | 'durationNotPositive'
  | 'cronRequired' | 'cronEmptyList' | 'cronEmpty' | 'cronDescriptor' | 'cronFields' | 'cronSyntax' | 'cronTimeZone';

export interface WindowProblem {
  code: WindowProblemCode;
  /** Kubernetes field path, e.g. `spec.renewal.windows[0].cron[1]`. */
  field: string;
  value?: unknown;
  /** The controller's wording (without the field path). */
  message: string;
  /** For durationInvalid and cronSyntax: the underlying parser's message. */
  detail?: string;
  /** For cronFields: how many fields the expression has. */
  fieldCount?: number;
}

/** Which spelling a window uses for each field: the seed's whenever it is present (even empty), else cert-manager's. */
export function windowFieldNames(w: Record<string, unknown>): { zoneField: 'timeZone' | 'timezone'; durationField: 'duration' | 'windowDuration' } {
  return { zoneField: w.timeZone !== undefined ? 'timeZone' : 'timezone', durationField: w.duration !== undefined ? 'duration' : 'windowDuration' };
}

// Exactly robfig/cron's descriptors (cert-manager's parser): case matters, so "@DAILY" is refused.
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Whether the runtime's tz database knows the zone (as time.LoadLocation would load it). The name
 * is kept as written, not replaced by ICU's canonical form (Asia/Kolkata resolves to Asia/Calcutta).
 */
export function isKnownTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

type CronCheck = { ok: true; neverOpens: boolean } | { ok: false; code: 'cronDescriptor' | 'cronFields' | 'cronSyntax'; message: string; detail?: string; fieldCount?: number };

/** Checks one 5-field cron expression or descriptor (already known to be a non-empty string). */
export function checkCronExpression(expr: string): CronCheck {
  const text = expr.trim();
  if (text.startsWith('@')) {
    if (!DESCRIPTORS.has(text)) return { ok: false, code: 'cronDescriptor', message: `unknown descriptor "${text}"` };
  } else {
    const fieldCount = text.split(/\s+/).filter(Boolean).length;
    if (fieldCount !== 5) {
      return { ok: false, code: 'cronFields', fieldCount, message: `invalid cron expression "${expr}": expected 5 fields (minute hour day-of-month month day-of-week), got ${fieldCount}` };
    }
  }
  try {
    cronExpressionParser().parse(text, { tz: 'UTC', currentDate: 0 });
    return { ok: true, neverOpens: false };
  } catch (err) {
    const detail = (err as Error).message;
    // cron-parser rejects a day of month that no listed month has (0 0 31 2 *); cron and
    // cert-manager accept it as a schedule that never fires, so it means "no window".
    if (detail === 'Invalid explicit day of month definition') return { ok: true, neverOpens: true };
    return { ok: false, code: 'cronSyntax', detail, message: `invalid cron expression "${expr}": ${detail}` };
  }
}

/**
 * Checks and normalises spec.renewal.windows, reporting every problem (in field order within a
 * window: time zone, duration, cron). Seed spelling wins where both are given: cron list or
 * string, duration | windowDuration, timeZone | timezone (UTC when absent or empty).
 */
export function checkRenewalWindows(windows: unknown, path = 'spec.renewal.windows'): { windows: ParsedWindow[]; problems: WindowProblem[] } {
  const parsed: ParsedWindow[] = [];
  const problems: WindowProblem[] = [];
  if (windows === undefined || windows === null) return { windows: parsed, problems };
  if (!Array.isArray(windows)) return { windows: parsed, problems: [{ code: 'notList', field: path, value: windows, message: 'must be a list' }] };
  windows.forEach((w: unknown, index) => {
    const wp = `${path}[${index}]`;
    if (!isRecord(w)) {
      problems.push({ code: 'notObject', field: wp, value: w, message: 'must be an object with cron, duration and timeZone' });
      return;
    }
    const before = problems.length;

    const { zoneField, durationField } = windowFieldNames(w);
    const zoneValue = w[zoneField];
    let timeZone = 'UTC';
    if (zoneValue !== undefined && zoneValue !== null && typeof zoneValue !== 'string') {
      problems.push({ code: 'wrongType', field: `${wp}.${zoneField}`, value: zoneValue, message: 'must be a string' });
    } else if (typeof zoneValue === 'string' && zoneValue !== '') {
      // Not trimmed: " UTC" loads nowhere (time.LoadLocation refuses it), so it is refused here too.
      if (isKnownTimeZone(zoneValue)) timeZone = zoneValue;
      else problems.push({ code: 'unknownTimeZone', field: `${wp}.${zoneField}`, value: zoneValue, message: `unknown time zone "${zoneValue}"` });
    }

    const durationValue = w[durationField];
    let durationMs = 0;
    if (durationValue === undefined || durationValue === null || durationValue === '') {
      problems.push({ code: 'durationRequired', field: `${wp}.duration`, message: 'required (a Go duration such as "6h")' });
    } else if (typeof durationValue !== 'string') {
      problems.push({ code: 'wrongType', field: `${wp}.${durationField}`, value: durationValue, message: 'must be a Go duration string such as "6h"' });
    } else {
      try {
        durationMs = parseDuration(durationValue);
        if (!(durationMs > 0)) {
          problems.push({ code: 'durationNotPositive', field: `${wp}.${durationField}`, value: durationValue, message: `must be a positive duration, got "${durationValue}"` });
        }
      } catch (err) {
        const detail = (err as Error).message;
        problems.push({ code: 'durationInvalid', field: `${wp}.${durationField}`, value: durationValue, message: detail, detail });
      }
    }

    const cronField = `${wp}.cron`;
    const crons = typeof w.cron === 'string' ? [{ expr: w.cron as unknown, field: cronField }]
      : Array.isArray(w.cron) ? w.cron.map((expr: unknown, i: number) => ({ expr, field: `${cronField}[${i}]` }))
        : undefined;
    if (!crons) {
      problems.push({ code: w.cron === undefined || w.cron === null ? 'cronRequired' : 'wrongType', field: cronField, value: w.cron, message: 'required (a cron expression or a list of them)' });
      return;
    }
    if (crons.length === 0) problems.push({ code: 'cronEmptyList', field: cronField, value: w.cron, message: 'must list at least one cron expression' });
    const ok: { cron: string; neverOpens: boolean; timeZone: string }[] = [];
    for (const { expr, field } of crons) {
      if (typeof expr !== 'string') {
        problems.push({ code: 'wrongType', field, value: expr, message: 'must be a non-empty cron expression' });
        continue;
      }
      if (expr.trim() === '') {
        problems.push({ code: 'cronEmpty', field, value: expr, message: 'must be a non-empty cron expression' });
        continue;
      }
      // robfig/cron's own zone prefix (cert-manager's parser): "CRON_TZ=Europe/Paris 0 2 * * *"
      const prefix = /^(CRON_TZ|TZ)=(\S*)\s*/.exec(expr.trim());
      let cronZone = timeZone;
      if (prefix) {
        const problem = typeof zoneValue === 'string' && zoneValue !== ''
          ? `a ${prefix[1]}= prefix cannot be used with ${zoneField}: name the zone once`
          : isKnownTimeZone(prefix[2]) ? undefined : `unknown time zone "${prefix[2]}" in the ${prefix[1]}= prefix`;
        if (problem) {
          problems.push({ code: 'cronTimeZone', field, value: expr, message: problem });
          continue;
        }
        cronZone = prefix[2];
      }
      const cron = prefix ? expr.trim().slice(prefix[0].length) : expr;
      const result = checkCronExpression(cron);
      if (!result.ok) problems.push({ code: result.code, field, value: expr, message: result.message, detail: result.detail, fieldCount: result.fieldCount });
      else ok.push({ cron: cron.trim(), neverOpens: result.neverOpens, timeZone: cronZone });
    }
    if (problems.length === before) for (const c of ok) parsed.push({ index, cron: c.cron, durationMs, timeZone: c.timeZone, neverOpens: c.neverOpens });
  });
  return { windows: parsed, problems };
}

/** The controller's view: the windows, or the first problem as `<field>: <message>`. */
export function parseWindows(windows: unknown): { windows: ParsedWindow[] } | { error: string } {
  const { windows: parsed, problems } = checkRenewalWindows(windows);
  if (problems.length > 0) return { error: `${problems[0].field}: ${problems[0].message}` };
  return { windows: parsed };
}
