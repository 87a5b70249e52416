// Which notifications a Certificate calls for now: a pure decision over its status, the last
// deploy-hook outcome and the clock (issue 16). Each kind fires once when its condition starts
// and once more, as resolved, when it ends; what was last announced is the input `announced`.
import type { Certificate } from '../api/types.ts';
import { failedAttemptsOf } from '../shared/backoff.ts';

export type NotificationKind = 'IssuanceFailing' | 'RenewalOverdue' | 'ExpiringSoon' | 'ARIReplaceNow' | 'DeployHookFailed';

export const NOTIFICATION_KINDS: readonly NotificationKind[] = ['IssuanceFailing', 'RenewalOverdue', 'ExpiringSoon', 'ARIReplaceNow', 'DeployHookFailed'];

export interface NotificationPolicy {
  /** failed issuances in a row before IssuanceFailing (default 3) */
  failures: number;
  /** how long past its renewal time a certificate may stay unrenewed (default 1h) */
  renewalGraceMs: number;
  /** ExpiringSoon when less than this is left; absent: a tenth of the certificate's lifetime */
  expiryThresholdMs?: number;
}

export const DEFAULT_NOTIFICATION_POLICY: NotificationPolicy = { failures: 3, renewalGraceMs: 3_600_000 };

export interface HookOutcome {
  failed: boolean;
  message: string;
}

const ms = (t: string | undefined) => (t ? Date.parse(t) : NaN);

function duration(msLeft: number): string {
  const m = Math.round(Math.abs(msLeft) / 60_000);
  return m >= 2880 ? `${Math.round(m / 1440)}d` : m >= 120 ? `${Math.round(m / 60)}h` : `${m}m`;
}

/** The conditions that hold now, each with the sentence a person reads. */
export function activeNotifications(c: Pick<Certificate, 'status'>, hook: HookOutcome | undefined, now: Date, policy: NotificationPolicy): Map<NotificationKind, string> {
  const out = new Map<NotificationKind, string>();
  const s = c.status ?? {};
  const t = now.getTime();
  const failed = failedAttemptsOf(s);
  if (failed >= policy.failures) {
    const ready = s.conditions?.find((x) => x.type === 'Ready');
    out.set('IssuanceFailing', `issuance failed ${failed} times in a row${ready?.message ? `: ${ready.message}` : ''}`);
  }
  const ari = s.acme?.ari;
  const windowEnd = ms(ari?.suggestedWindow?.end);
  const replaceNow = Number.isFinite(windowEnd) && windowEnd <= ms(ari?.lastChecked);
  const renewal = ms(s.renewalTime);
  // A CA's "replace now" sets the renewal time to the start of its window, which has passed
  // (often by days) when the answer arrives: that certificate is not overdue by certsmith's
  // fault, and ARIReplaceNow already says it must be renewed and stays until it is.
  if (!replaceNow && Number.isFinite(renewal) && t >= renewal + policy.renewalGraceMs) {
    out.set('RenewalOverdue', `not renewed ${duration(t - renewal)} after its renewal time ${s.renewalTime}`);
  }
  const notAfter = ms(s.notAfter);
  const notBefore = ms(s.notBefore);
  if (Number.isFinite(notAfter)) {
    const threshold = policy.expiryThresholdMs ?? (Number.isFinite(notBefore) ? (notAfter - notBefore) / 10 : undefined);
    if (threshold !== undefined && t >= notAfter - threshold) {
      out.set('ExpiringSoon', t >= notAfter ? `expired at ${s.notAfter}` : `expires in ${duration(notAfter - t)} (${s.notAfter})`);
    }
  }
  if (replaceNow) {
    out.set('ARIReplaceNow', `the ACME server asks for this certificate to be replaced now${ari?.explanationURL ? ` (${ari.explanationURL})` : ''}`);
  }
  if (hook?.failed) out.set('DeployHookFailed', hook.message);
  return out;
}

/** When a time-based condition next starts to hold (to look again then); undefined when none will. */
export function nextNotificationChange(c: Pick<Certificate, 'status'>, now: Date, policy: NotificationPolicy): Date | undefined {
  const s = c.status ?? {};
  const notAfter = ms(s.notAfter);
  const notBefore = ms(s.notBefore);
  const threshold = policy.expiryThresholdMs ?? (Number.isFinite(notBefore) ? (notAfter - notBefore) / 10 : NaN);
  const times = [ms(s.renewalTime) + policy.renewalGraceMs, notAfter - threshold].filter((x) => Number.isFinite(x) && x > now.getTime());
  return times.length ? new Date(Math.min(...times)) : undefined;
}

export interface NotificationDecision {
  fire: { kind: NotificationKind; message: string }[];
  resolve: NotificationKind[];
}

export function decideNotifications(active: Map<NotificationKind, string>, announced: ReadonlySet<NotificationKind>): NotificationDecision {
  return {
    fire: NOTIFICATION_KINDS.filter((k) => active.has(k) && !announced.has(k)).map((kind) => ({ kind, message: active.get(kind)! })),
    resolve: NOTIFICATION_KINDS.filter((k) => announced.has(k) && !active.has(k)),
  };
}

/** The annotation value listing the kinds announced as firing, in a stable order. */
export function formatAnnounced(kinds: Iterable<NotificationKind>): string {
  const set = new Set(kinds);
  return NOTIFICATION_KINDS.filter((k) => set.has(k)).join(',');
}

export function parseAnnounced(value: string | undefined): Set<NotificationKind> {
  return new Set((value ?? '').split(',').filter((k): k is NotificationKind => (NOTIFICATION_KINDS as readonly string[]).includes(k)));
}
