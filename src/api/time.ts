// How certsmith writes an instant. Kubernetes' metav1.Time is RFC 3339 to the second (status
// fields, conditions, creation and deletion timestamps, Event and managedFields times); messages
// and ACME windows keep milliseconds only when there are some.

/** the last second rfc3339 formatted: every write stamps the current second, often many times */
let lastSecond = Number.NaN;
let lastSecondText = '';

/** metav1.Time: RFC 3339 in UTC, truncated to whole seconds ("2026-01-02T03:04:05Z"). */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond) {
    // an invalid Date throws here, as before, and is never remembered (NaN equals nothing)
    lastSecondText = isoTime(new Date(second * 1000));
    lastSecond = second;
  }
  return lastSecondText;
}

/** An instant as RFC 3339 for messages: whole seconds without ".000", milliseconds kept when present. */
export function isoTime(d: Date): string {
  return d.toISOString().replace('.000Z', 'Z');
}
