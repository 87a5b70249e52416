// Which notifications a Certificate calls for now: a pure decision over its status, the last
// deploy-hook outcome and the clock (issue 16). Each kind fires once when its condition starts
// and once more, as resolved, when it ends; what was last announced is the input `announced`.
import type { Certificate } from '../api/types.ts';
import { failedAttemptsOf } from '../shared/backoff.ts';
import type { HookOutcome } from '../shared/deploy-hook-events.ts';

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
    // the failed Issuing condition says why; Ready only says what is missing (the Secret)
    const issuing = s.conditions?.find((x) => x.type === 'Issuing' && x.status === 'False' && x.reason === 'Failed');
    const why = issuing?.message || s.conditions?.find((x) => x.type === 'Ready')?.message;
    out.set('IssuanceFailing', `issuance failed ${failed} times in a row${why ? `: ${why}` : ''}`);
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

/** Where notices go: the --notify-webhook URL and the --notify-exec program, each on its own. */
export type NotificationTarget = 'webhook' | 'exec';

/** Per kind, the targets it was announced to as firing. */
export type Announced = Map<NotificationKind, Set<NotificationTarget>>;

export interface Delivery {
  kind: NotificationKind;
  state: 'firing' | 'resolved';
  target: NotificationTarget;
  message: string;
}

/**
 * What to send, to which target: a condition that holds to each target not yet told, one that
 * ended to each target that was. Targets are apart, so one that is down neither holds the other
 * back nor makes it hear a notice twice.
 */
export function decideNotifications(active: Map<NotificationKind, string>, announced: Announced, targets: readonly NotificationTarget[]): Delivery[] {
  const out: Delivery[] = [];
  for (const kind of NOTIFICATION_KINDS) {
    const told = announced.get(kind) ?? new Set();
    const message = active.get(kind);
    if (message !== undefined) for (const target of targets) { if (!told.has(target)) out.push({ kind, state: 'firing', target, message }); }
    else for (const target of targets) { if (told.has(target)) out.push({ kind, state: 'resolved', target, message: '' }); }
  }
  return out;
}

/**
 * The annotation value: the kinds announced as firing in a stable order, a kind alone when every
 * target was told, `Kind@target` for each target told when not all were.
 */
export function formatAnnounced(announced: Announced, targets: readonly NotificationTarget[]): string {
  const out: string[] = [];
  for (const kind of NOTIFICATION_KINDS) {
    const told = announced.get(kind);
    if (!told?.size) continue;
    if (targets.every((t) => told.has(t))) out.push(kind);
    else for (const t of targets) if (told.has(t)) out.push(`${kind}@${t}`);
  }
  return out.join(',');
}

export function parseAnnounced(value: string | undefined, targets: readonly NotificationTarget[]): Announced {
  const out: Announced = new Map();
  for (const entry of (value ?? '').split(',')) {
    const [kind, target] = entry.split('@') as [NotificationKind, NotificationTarget | undefined];
    if (!(NOTIFICATION_KINDS as readonly string[]).includes(kind)) continue;
    if (target !== undefined && !targets.includes(target)) continue;
    const told = out.get(kind) ?? new Set();
    for (const t of target ? [target] : targets) told.add(t);
    out.set(kind, told);
  }
  return out;
}
