// The Events a deploy hook's run leaves on its Certificate: the files controller writes them, the
// notifications controller and `certsmith doctor` read the latest outcome from them
// (DeployHookFailed fires and resolves on it). One wording for all, so the readers' parse cannot
// drift from the writer's text.
import type { KubeObject } from '../api/meta.ts';

export const DEPLOY_HOOK_SUCCEEDED = 'DeployHookSucceeded';
export const DEPLOY_HOOK_FAILED = 'DeployHookFailed';
export const DEPLOY_HOOK_REASONS: ReadonlySet<string> = new Set([DEPLOY_HOOK_SUCCEEDED, DEPLOY_HOOK_FAILED]);

const PREFIX = 'Deploy hook for revision ';

/**
 * "Deploy hook for revision N <status>[ (attempt n, retrying in d)][: output]"; a Secret adopted
 * as it was (from certbot, another cluster) has no revision until certsmith first issues one.
 */
export function deployHookMessage(revision: number | undefined, status: string, rest = ''): string {
  return `${revision === undefined ? 'Deploy hook for the adopted certificate (no revision yet)' : `${PREFIX}${revision}`} ${status}${rest}`;
}

/** The revision a deploy-hook Event is about; 0 when it names none. */
export function deployHookRevision(message: string | undefined): number {
  if (!message?.startsWith(PREFIX)) return 0;
  return Number(/^\d+/.exec(message.slice(PREFIX.length))?.[0] ?? 0);
}

/** The latest deploy-hook run's outcome for a Certificate. */
export interface HookOutcome {
  failed: boolean;
  message: string;
}

/** The part of an Event a deploy-hook outcome is read from. */
export interface HookEvent extends KubeObject {
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string };
  reason?: string;
  message?: string;
  lastTimestamp?: string;
  eventTime?: string;
}

/** The latest deploy-hook outcome recorded for this Certificate (its Events). */
export function lastHookOutcome(events: HookEvent[], crt: { metadata: { uid?: string } }): HookOutcome | undefined {
  const mine = events.filter((e) => DEPLOY_HOOK_REASONS.has(e.reason ?? '') && e.involvedObject?.kind === 'Certificate' && e.involvedObject.uid === crt.metadata.uid);
  if (!mine.length) return undefined;
  const at = (e: HookEvent) => Date.parse(e.lastTimestamp ?? e.eventTime ?? '') || 0;
  // Event times are whole seconds: within one, the outcome for the later revision is the later one
  // (a revision's own retries are minutes apart)
  const revision = (e: HookEvent) => deployHookRevision(e.message);
  const later = (a: HookEvent, b: HookEvent) => at(b) > at(a) || (at(b) === at(a) && revision(b) >= revision(a));
  const last = mine.reduce((a, b) => (later(a, b) ? b : a));
  return { failed: last.reason === DEPLOY_HOOK_FAILED, message: last.message ?? 'the deploy hook failed' };
}
