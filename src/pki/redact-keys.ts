// No private key, whole or in part, in what certsmith passes on from a program it ran: a deploy
// hook's output goes into its Event (and from there into a DeployHookFailed notification), and that
// output is the tail of what the hook printed, so a key block can arrive with its BEGIN line cut
// off (a 2048-bit RSA key is longer than the tail kept) or, cut at the other end, with no END line.
// A hook may also have passed the key through another program (`sed 's/^/> /'`, a diff, a logger
// that stamps each line, `openssl pkey -text`, `od`): no PEM line survives that, so beyond PEM
// blocks, whatever reads as encoded bytes (a long base64 run, hex bytes) goes too. Certificates
// and other binary data go with it; what a failing reload says about itself stays.
const WHOLE_OR_HEAD = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----[\s\S]*?(-----END \1-----|$)/g;
/** the base64 lines (the first one possibly cut) that end in an END line whose BEGIN is gone */
const TAIL = /[A-Za-z0-9+/=]*(?:\r?\n[A-Za-z0-9+/=]+)*\r?\n?-----END [A-Z0-9 ]*PRIVATE KEY-----/g;

export const REDACTED_KEY = '[private key redacted]';
/** what stands for encoded bytes that may be (part of) a key */
export const REDACTED_BYTES = '[redacted]';

/**
 * 18+ bytes of base64 or base64url (a JWK's "d", JOSE): runs of their alphabets this long in words
 * or paths are rare (see isEncoded)
 */
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
/** 8+ bytes written as decimal numbers in a list (a Buffer as JSON, a Python list of bytes) */
const DECIMAL_BYTES = /\b(?:\d{1,3}\s*,\s*){7,}\d{1,3}\b/g;
/** 8+ bytes as hex separated by colons or spaces (openssl -text, od), or 16+ bytes of bare hex */
const HEX_BYTES = /(?:\b[0-9A-Fa-f]{2,4}[: ]+){7,}[0-9A-Fa-f]{2,4}\b:?|[0-9A-Fa-f]{32,}/g;
/** what ends a block of encoded lines: its last line may be short (a continuation, see below) */
const CONTINUATION = /^(?:[A-Za-z0-9+/_-]+={0,2}|(?:[0-9A-Fa-f]{2,4}[: ]?)+|(?:\d{1,3},\s*)*\d{1,3}\]?)$/;

/**
 * Random bytes in base64 mix letter cases and digits; a long word, name or path does not. With
 * base64url's - and _ (which names and dates use too, `web-frontend-2026-11-27`), both letter
 * cases: 24 random characters lack one of them about once in 250,000.
 */
function isEncoded(run: string): boolean {
  if (run.includes(',') && /^[\d\s,]+$/.test(run)) return run.split(',').every((n) => Number(n) <= 255); // decimal bytes
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(run)) return true; // hex bytes
  const [upper, lower, digit] = [/[A-Z]/.test(run), /[a-z]/.test(run), /[0-9]/.test(run)];
  if (/[-_]/.test(run)) return upper && lower;
  return Number(upper) + Number(lower) + Number(digit) >= 2;
}

/** One line with its encoded runs replaced; prefix is what came before the first (undefined: none). */
function redactLine(line: string): { text: string; prefix?: string } {
  let prefix: string | undefined;
  const replace = (re: RegExp) => (text: string) => text.replace(re, (run: string, offset: number) => {
    if (!isEncoded(run)) return run;
    prefix ??= text.slice(0, offset);
    return REDACTED_BYTES;
  });
  const text = replace(DECIMAL_BYTES)(replace(HEX_BYTES)(replace(BASE64_RUN)(line)));
  return { text, prefix };
}

function redactEncodedLines(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let previous: string | undefined; // the prefix of the last line redacted, if it was the one before
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const r = redactLine(line);
    if (r.prefix !== undefined) {
      // a cut tail starts mid-line: a first line of encoded characters only goes with the block under it
      if (i === 1 && out.length === 1 && CONTINUATION.test(lines[0].trim())) out[0] = REDACTED_BYTES;
      previous = r.prefix;
      out.push(r.text);
      continue;
    }
    // the short last line of a block, after the same prefix as the lines above it
    if (previous !== undefined && line.startsWith(previous) && CONTINUATION.test(line.slice(previous.length).trimEnd())) {
      out.push(previous + REDACTED_BYTES);
      continue;
    }
    previous = undefined;
    out.push(line);
  }
  // a block of redacted lines reads as one
  return out.filter((l, i) => i === 0 || l !== out[i - 1] || !l.endsWith(REDACTED_BYTES)).join('\n');
}

export function redactKeyMaterial(text: string): string {
  return redactEncodedLines(text.replace(WHOLE_OR_HEAD, REDACTED_KEY).replace(TAIL, REDACTED_KEY));
}
