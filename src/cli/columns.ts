// Text tables as Go's tabwriter lays them out for kubectl and cmctl: `kubectl get` leaves three
// spaces between columns, `kubectl describe` and cmctl's Events two.

/** Every cell but a row's last, padded to its column's widest plus `gap` spaces. */
export function alignColumns(rows: string[][], gap: number): string[] {
  const widths: number[] = [];
  for (const r of rows) r.slice(0, -1).forEach((c, i) => { widths[i] = Math.max(widths[i] ?? 0, c.length); });
  return rows.map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i] + gap) : c)).join(''));
}
