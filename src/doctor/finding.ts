// What every doctor check returns: one plain sentence about what was found, and when something
// is wrong, the sentence that says how to fix it. Only `error` blocks issuance, or delivery for the
// delivery checks (exit status 1).
export type Severity = 'ok' | 'info' | 'warning' | 'error';

export interface Finding {
  /** which check wrote it, e.g. "dns", "http-01", "caa" */
  check: string;
  severity: Severity;
  sentence: string;
  fix?: string;
}

/** "in 2h 5m", "in 40s", "3m ago": how far a time is from now, for sentences a person reads. */
export function relative(at: Date, now: Date): string {
  const ms = at.getTime() - now.getTime();
  const s = Math.round(Math.abs(ms) / 1000);
  const parts: string[] = [];
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m && !d) parts.push(`${m}m`);
  if (!d && !h && (sec || !parts.length)) parts.push(`${sec}s`);
  const span = parts.slice(0, 2).join(' ');
  return ms >= 0 ? `in ${span}` : `${span} ago`;
}
