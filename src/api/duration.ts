// Go-style duration strings ("90m", "2160h", "1h30m", "1.5h"), as cert-manager manifests use them.

const units: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};

/**
 * Go's time.Duration is int64 nanoseconds: ParseDuration refuses anything longer than
 * 2562047h47m16.854775807s (about 292 years), so upstream never accepts more. The bound also
 * keeps every notAfter this can produce inside X.509's 9999-12-31 and JavaScript's Date range,
 * which a value like 99999999999999h left far behind, failing only at signing (issue 12, finding 11).
 */
export const MAX_DURATION_MS = Number(2n ** 63n - 1n) / 1e6; // as close as a double gets to 2^63-1 ns
const MAX_DURATION_TEXT = '2562047h47m16.854775807s';

/** Parses a Go duration into milliseconds; throws with the rule broken. */
export function parseDuration(text: string): number {
  const s = String(text);
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let sign = 1;
  let i = 0;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    i = 1;
  }
  if (i >= s.length) throw new Error(`invalid duration "${text}": expected a number and a unit (ns, us, ms, s, m, h), e.g. "2160h" or "1h30m"`);
  let total = 0;
  re.lastIndex = i;
  while (re.lastIndex < s.length) {
    const m = re.exec(s);
    if (!m) throw new Error(`invalid duration "${text}": expected a number and a unit (ns, us, ms, s, m, h), e.g. "2160h" or "1h30m"`);
    total += parseFloat(m[1]) * units[m[2]];
  }
  if (!(total <= MAX_DURATION_MS)) throw new Error(`invalid duration "${text}": out of range (the longest duration is ${MAX_DURATION_TEXT}, about 292 years)`);
  return sign * total;
}

export function isValidDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

/** Formats milliseconds the way Go's time.Duration.String() does ("2160h0m0s", "1h30m0s", "5m0s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  if (rest < 1000) return `${neg ? '-' : ''}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  let out = '';
  if (h) out += `${h}h`;
  if (h || m) out += `${m}m`;
  out += `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  return (neg ? '-' : '') + out;
}
