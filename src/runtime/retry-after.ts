// Retry-After (RFC 9110 §10.2.3), read the same way for the ACME server and the DNS providers' APIs.

/**
 * The wait a Retry-After value asks for, in ms from now: delay-seconds (1*DIGIT) or an HTTP-date
 * (a past date: 0). Undefined when the header is absent, empty, or neither form: "1.5", "-3" and
 * "soon" are not delays, whatever a lenient date parser would make of them.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP-date names its weekday and month; V8's Date.parse would read "1.5" as a date too.
  if (!/^[A-Za-z]{3}/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
