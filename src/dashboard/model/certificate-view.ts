// What the dashboard shows about a Certificate, derived from the objects the API holds: its
// state, timeline and the request → order → challenge chain. Pure: the objects and the time
// come in, plain JSON goes out (nothing from a Secret but the public leaf fields).
import type { Condition, KubeObject } from '../../api/meta.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { BackoffConfig } from '../../shared/backoff.ts';
import { renewalDecisionFor, renewalReasonInWords, retryScheduleFor } from '../../shared/certificate-schedule.ts';
import type { ParsedLeaf, PublicCertificate } from './public-certificate.ts';
import { byCodeUnits } from '../../api/ordering.ts';

export const STATES = ['ready', 'renewing', 'backing-off', 'failed', 'expiring', 'not-ready'] as const;
export type CertificateState = typeof STATES[number];

/**
 * A certificate with less than this left, or less than a tenth of its lifetime when that is
 * shorter (a 6-day certificate is healthy with 5 days left), counts as expiring even before its
 * renewal time; the shipped alerts judge by the tenth too.
 */
export const EXPIRING_WITHIN_MS = 7 * 86_400_000;

export interface TimelineView {
  notBefore?: string;
  notAfter?: string;
  renewalTime?: string;
  renewalReason: string;
  renewalRule?: string;
  /** the maintenance window the renewal time falls in */
  renewalWindow?: { start: string; end: string; label: string };
  /** spec.renewal as written, and whether the windows parse (status.renewal) */
  renewalPolicy?: string;
  renewalWindows: { cron: string; duration?: string; timeZone?: string }[];
  windowsProblem?: string;
  ari?: { start?: string; end?: string; explanationURL?: string; lastChecked?: string; nextCheck?: string; lastError?: string };
  failedAttempts: number;
  lastFailureTime?: string;
  nextAttempt?: string;
}

export interface CertificateSummary {
  namespace: string;
  name: string;
  resourceVersion: string;
  issuer: { name: string; kind: string };
  secretName: string;
  names: string[];
  state: CertificateState;
  states: CertificateState[];
  ready?: { status: string; reason?: string; message?: string };
  /** why it is in its state: the Issuing condition when issuance failed or was denied (Ready then only says the Secret is missing), else Ready */
  why?: { reason?: string; message?: string };
  revision?: number;
  timeline: TimelineView;
}

export interface EventView { type?: string; reason?: string; message?: string; count: number; lastTimestamp?: string; object: string }
export interface ChallengeView { name: string; type?: string; dnsName?: string; wildcard: boolean; state?: string; reason?: string; presented: boolean; processing: boolean }
export interface OrderView { name: string; state?: string; reason?: string; failureTime?: string; url?: string; challenges: ChallengeView[] }
export interface RequestView { name: string; revision?: string; created?: string; approved?: string; ready?: { status: string; reason?: string; message?: string }; failureTime?: string; orders: OrderView[] }

export interface CertificateDetail extends CertificateSummary {
  conditions: Condition[];
  leaf?: PublicCertificate;
  leafProblem?: string;
  requests: RequestView[];
  events: EventView[];
  deployHooks: { filesMirrored?: Condition; events: EventView[] };
}

interface StatusObject extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { conditions?: Condition[] };
}

interface EventObject extends KubeObject {
  involvedObject?: { uid?: string; name?: string; kind?: string };
  type?: string; reason?: string; message?: string; count?: number; lastTimestamp?: string; eventTime?: string;
}

export interface ViewContext {
  now: Date;
  backoff: BackoffConfig;
  /** every Certificate: retries of many failing in the same minute are spread */
  certificates: readonly CertificateObj[];
}

const condition = (conds: Condition[] | undefined, type: string) => conds?.find((c) => c.type === type);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

function timelineOf(crt: CertificateObj, leaf: ParsedLeaf | undefined, ctx: ViewContext, requests: readonly CertificateRequestObj[]): TimelineView {
  const s = crt.status ?? {};
  const spec = (crt.spec as { renewal?: { policy?: string; windows?: { cron?: string | string[]; duration?: string; windowDuration?: string; timeZone?: string; timezone?: string }[] } }).renewal;
  const t: TimelineView = {
    notBefore: s.notBefore, notAfter: s.notAfter, renewalTime: s.renewalTime,
    renewalReason: 'not known until the certificate is issued',
    renewalPolicy: spec?.policy,
    renewalWindows: (spec?.windows ?? []).map((w) => ({
      cron: Array.isArray(w.cron) ? w.cron.join(', ') : (w.cron ?? ''), duration: w.duration ?? w.windowDuration, timeZone: w.timeZone ?? w.timezone,
    })),
    failedAttempts: 0,
  };
  if (s.renewal?.windows && s.renewal.windows.valid === false) t.windowsProblem = s.renewal.windows.message ?? 'the renewal windows do not parse';
  if (leaf?.info) {
    const d = renewalDecisionFor(crt, leaf.info, requests);
    t.renewalReason = renewalReasonInWords(d);
    if (d.kind === 'scheduled') {
      t.renewalRule = d.reason;
      if (d.window) {
        t.renewalWindow = { start: d.window.start.toISOString(), end: d.window.end.toISOString(), label: `windows[${d.window.index}] "${d.window.cron}" in ${d.window.timeZone}` };
      }
    }
  }
  const ari = s.acme?.ari;
  if (ari) {
    t.ari = {
      start: ari.suggestedWindow?.start, end: ari.suggestedWindow?.end, explanationURL: ari.explanationURL,
      lastChecked: ari.lastChecked, nextCheck: ari.nextCheck, lastError: ari.lastError,
    };
  }
  const retry = retryScheduleFor(crt, ctx.certificates, ctx.backoff, leaf?.info?.notAfter);
  if (retry) {
    t.failedAttempts = retry.attempts;
    t.lastFailureTime = retry.lastFailureTime.toISOString();
    t.nextAttempt = retry.nextAttempt.toISOString();
  }
  return t;
}

/** Every state that applies, most pressing first; the first is the one shown. */
export function statesOf(crt: CertificateObj, t: TimelineView, now: Date): CertificateState[] {
  const conds = crt.status?.conditions;
  const out: CertificateState[] = [];
  if (t.nextAttempt && Date.parse(t.nextAttempt) > now.getTime()) out.push('backing-off');
  if (t.lastFailureTime) out.push('failed');
  const notAfter = t.notAfter ? Date.parse(t.notAfter) : NaN;
  const notBefore = t.notBefore ? Date.parse(t.notBefore) : NaN;
  const renewal = t.renewalTime ? Date.parse(t.renewalTime) : NaN;
  const within = Number.isFinite(notBefore) ? Math.min(EXPIRING_WITHIN_MS, (notAfter - notBefore) / 10) : EXPIRING_WITHIN_MS;
  const nearEnd = notAfter - now.getTime() < within;
  // a renewal still not done this close to the end (a broken issuer, a pending request) is first
  // of all a certificate about to expire; past the renewal time alone, renewing says more
  if (nearEnd) out.push('expiring');
  // renewing is for a certificate that was issued; the first issuance shows as not ready
  if (condition(conds, 'Issuing')?.status === 'True' && Number.isFinite(notAfter)) out.push('renewing');
  if (!nearEnd && renewal <= now.getTime()) out.push('expiring');
  if (condition(conds, 'Ready')?.status === 'True') out.push('ready');
  if (!out.length) out.push('not-ready');
  return out;
}

/** `requests`: the Certificate's own CertificateRequests (its renewal time is dated from the current one) */
export function summarize(crt: CertificateObj, leaf: ParsedLeaf | undefined, ctx: ViewContext, requests: readonly CertificateRequestObj[] = []): CertificateSummary {
  const timeline = timelineOf(crt, leaf, ctx, requests);
  const states = statesOf(crt, timeline, ctx.now);
  const ready = condition(crt.status?.conditions, 'Ready');
  const issuing = condition(crt.status?.conditions, 'Issuing');
  const why = issuing?.status === 'False' ? issuing : ready;
  const spec = crt.spec;
  return {
    namespace: crt.metadata.namespace ?? '',
    name: crt.metadata.name ?? '',
    resourceVersion: crt.metadata.resourceVersion ?? '',
    issuer: { name: spec.issuerRef.name, kind: spec.issuerRef.kind || 'Issuer' },
    secretName: spec.secretName,
    names: [...(spec.commonName ? [spec.commonName] : []), ...(spec.dnsNames ?? []), ...(spec.ipAddresses ?? []), ...(spec.uris ?? []), ...(spec.emailAddresses ?? [])]
      .filter((n, i, all) => all.indexOf(n) === i),
    state: states[0],
    states,
    ...(ready ? { ready: { status: ready.status, reason: ready.reason, message: ready.message } } : {}),
    ...(why ? { why: { reason: why.reason, message: why.message } } : {}),
    ...(crt.status?.revision !== undefined ? { revision: crt.status.revision } : {}),
    timeline,
  };
}

const ownedBy = (o: KubeObject, uid: string | undefined) => !!uid && !!o.metadata.ownerReferences?.some((r) => r.uid === uid);

function eventView(e: EventObject): EventView {
  return {
    type: e.type, reason: e.reason, message: e.message, count: e.count ?? 1,
    lastTimestamp: e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp,
    object: `${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}`,
  };
}

export interface RelatedObjects {
  requests: readonly CertificateRequestObj[];
  orders: readonly StatusObject[];
  challenges: readonly StatusObject[];
  events: readonly EventObject[];
}

export function detail(crt: CertificateObj, leaf: ParsedLeaf | undefined, related: RelatedObjects, ctx: ViewContext): CertificateDetail {
  const requests = related.requests.filter((r) => ownedBy(r, crt.metadata.uid));
  const rev = (r: CertificateRequestObj) => Number(r.metadata.annotations?.[CertificateAnnotation.revision] ?? 0);
  requests.sort((a, b) => rev(b) - rev(a) || byCodeUnits(b.metadata.creationTimestamp ?? '', a.metadata.creationTimestamp ?? ''));
  const uids = new Set<string>([crt.metadata.uid ?? '']);
  const requestViews: RequestView[] = requests.map((r) => {
    uids.add(r.metadata.uid ?? '');
    const ready = condition(r.status?.conditions, 'Ready');
    const approved = condition(r.status?.conditions, 'Approved') ?? condition(r.status?.conditions, 'Denied');
    const orders = related.orders.filter((o) => ownedBy(o, r.metadata.uid)).map((o): OrderView => {
      uids.add(o.metadata.uid ?? '');
      const challenges = related.challenges.filter((c) => ownedBy(c, o.metadata.uid)).map((c): ChallengeView => {
        uids.add(c.metadata.uid ?? '');
        return {
          name: c.metadata.name ?? '', type: str(c.spec?.type), dnsName: str(c.spec?.dnsName), wildcard: c.spec?.wildcard === true,
          state: str(c.status?.state), reason: str(c.status?.reason), presented: c.status?.presented === true, processing: c.status?.processing === true,
        };
      });
      return { name: o.metadata.name ?? '', state: str(o.status?.state), reason: str(o.status?.reason), failureTime: str(o.status?.failureTime), url: str(o.status?.url), challenges };
    });
    return {
      name: r.metadata.name ?? '', revision: r.metadata.annotations?.[CertificateAnnotation.revision], created: r.metadata.creationTimestamp,
      ...(approved ? { approved: `${approved.type}${approved.reason ? ` (${approved.reason})` : ''}` } : {}),
      ...(ready ? { ready: { status: ready.status, reason: ready.reason, message: ready.message } } : {}),
      failureTime: r.status?.failureTime, orders,
    };
  });
  const events = related.events.filter((e) => uids.has(e.involvedObject?.uid ?? '\0')).map(eventView)
    .sort((a, b) => byCodeUnits(b.lastTimestamp ?? '', a.lastTimestamp ?? ''));
  const filesMirrored = condition(crt.status?.conditions, 'FilesMirrored');
  return {
    ...summarize(crt, leaf, ctx, requests),
    conditions: crt.status?.conditions ?? [],
    ...(leaf?.public ? { leaf: leaf.public } : {}),
    ...(leaf?.error ? { leafProblem: leaf.error } : {}),
    requests: requestViews,
    events,
    deployHooks: { ...(filesMirrored ? { filesMirrored } : {}), events: events.filter((e) => /^DeployHook|^Files/.test(e.reason ?? '')) },
  };
}
