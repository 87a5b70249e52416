// ACME Renewal Information (RFC 9773): the certificate identifier, the renewalInfo answer, when
// to ask again, and the one point of the suggested window at which a given certificate renews.
// Pure: no clock, no I/O; the ACME client fetches, the controllers decide.
import { createHash } from 'node:crypto';
import { base64url } from './jws.ts';
import { isoTime } from '../api/time.ts';

/** cert-manager's ACMERenewalWindow: RFC 3339 times, end after start. */
export interface SuggestedWindow {
  start: string;
  end: string;
}

/** What the renewalInfo resource answered (RFC 9773 §4.2). */
export interface RenewalInfo {
  suggestedWindow: SuggestedWindow;
  explanationURL?: string;
}

/** RFC 9773 §4.3: clients should poll no more often than this bound even when told to. */
export const ARI_MIN_RECHECK_MS = 60_000;
/** and at least daily, so a CA's change of mind (a revocation) is seen within a day. */
export const ARI_MAX_RECHECK_MS = 86_400_000;
/** No Retry-After: RFC 9773 §4.3 suggests a few hours; six is what Let's Encrypt sends. */
export const ARI_DEFAULT_RECHECK_MS = 6 * 3_600_000;
/** After a failed fetch, without a Retry-After: soon enough to pick the answer up, rarely enough to spare the CA. */
export const ARI_ERROR_RECHECK_MS = 3_600_000;

/**
 * RFC 9773 §4.1: base64url(AKI keyIdentifier) "." base64url(serial), both unpadded, the serial
 * as the bytes of its DER INTEGER content (two's complement, so a leading 0x00 when the top bit
 * is set). akiHex: the keyIdentifier octets; serialHex: the serial's magnitude, any leading
 * zeros allowed (CertificateInfo strips them).
 */
export function ariCertId(akiHex: string, serialHex: string): string {
  let hex = serialHex.toLowerCase().replace(/^(00)+(?=..)/, '');
  if (hex.length % 2) hex = `0${hex}`;
  if (parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return `${base64url(Buffer.from(akiHex, 'hex'))}.${base64url(Buffer.from(hex, 'hex'))}`;
}

/** The CertID of a parsed certificate; undefined without an Authority Key Identifier (no ARI then). */
export function certIdOf(leaf: { authorityKeyId?: string; serialNumber: string }): string | undefined {
  return leaf.authorityKeyId ? ariCertId(leaf.authorityKeyId, leaf.serialNumber) : undefined;
}

/** Validates a renewalInfo body; throws with what is wrong. */
export function parseRenewalInfo(body: unknown): RenewalInfo {
  const b = body as { suggestedWindow?: { start?: unknown; end?: unknown }; explanationURL?: unknown } | null;
  const w = b?.suggestedWindow;
  if (!w || typeof w.start !== 'string' || typeof w.end !== 'string') throw new Error('renewalInfo: no suggestedWindow with start and end');
  const start = Date.parse(w.start);
  const end = Date.parse(w.end);
  if (Number.isNaN(start) || Number.isNaN(end)) throw new Error(`renewalInfo: suggestedWindow times do not parse (${w.start}, ${w.end})`);
  // RFC 9773 §4.2: a window whose end is not after its start is invalid and must be ignored.
  if (!(end > start)) throw new Error(`renewalInfo: suggestedWindow end ${w.end} is not after start ${w.start}`);
  return {
    suggestedWindow: { start: isoTime(new Date(start)), end: isoTime(new Date(end)) },
    ...(typeof b.explanationURL === 'string' && b.explanationURL ? { explanationURL: b.explanationURL } : {}),
  };
}

/** When to ask again: Retry-After (or the default / error default) bounded to 1 minute .. 1 day. */
export function ariRecheckDelay(retryAfterMs: number | undefined, failed = false): number {
  const want = retryAfterMs ?? (failed ? ARI_ERROR_RECHECK_MS : ARI_DEFAULT_RECHECK_MS);
  return Math.min(ARI_MAX_RECHECK_MS, Math.max(ARI_MIN_RECHECK_MS, want));
}

/**
 * RFC 9773 §4.2: a uniformly random instant in [start, end). Seeded by the CertID, so every
 * process and every restart picks the same instant for the same certificate and window, while
 * a fleet of certificates spreads over the window as the CA intends. Whole seconds.
 */
export function ariRenewalPoint(window: { start: Date; end: Date }, seed: string): Date {
  const s = window.start.getTime();
  const span = window.end.getTime() - s;
  if (!(span > 0)) return new Date(s);
  const fraction = createHash('sha256').update(`ari:${seed}`).digest().readUIntBE(0, 6) / 2 ** 48; // [0, 1)
  return new Date(Math.max(s, Math.floor((s + fraction * span) / 1000) * 1000));
}

/**
 * status.acme.ari of a Certificate: cert-manager's CertificateACMEARIStatus fields
 * (suggestedWindow, explanationURL, lastChecked, nextCheck, lastError) plus certID, the
 * certificate the answer is about, so an answer about the previous certificate is never used.
 */
export interface CertificateAriStatus {
  certID?: string;
  suggestedWindow?: SuggestedWindow;
  explanationURL?: string;
  lastChecked?: string;
  nextCheck?: string;
  lastError?: string;
}
