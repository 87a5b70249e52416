// TXT data as DNS APIs write it: RFC 1035 character-strings in double quotes ("a" "b"), with
// backslash escapes (\" \\ and \DDD, a byte in decimal). The value a resolver answers with is
// the strings' concatenation. Route 53, Cloud DNS, Edge DNS and Cloudflare all take and return
// this form (Cloudflare also keeps content written unquoted as it was written).

/** The value a TXT record's data stands for; data without quotes is the value itself. */
export function txtValue(rdata: string): string {
  const parts = [...rdata.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1].replace(/\\(\d{3}|.)/g, (_, e: string) => (e.length === 3 ? String.fromCharCode(Number(e)) : e)));
  return parts.length ? parts.join('') : rdata;
}

/** A challenge value (base64url: nothing to escape, 43 characters: one string) as TXT data. */
export const quotedTxt = (value: string): string => `"${value}"`;
