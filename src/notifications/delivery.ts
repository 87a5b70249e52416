// Delivering one notification: a JSON POST to a webhook URL (the body has `text`, which Slack and
// Microsoft Teams incoming webhooks both show, and the details under `certsmith`), and/or an
// executable run with the details in its environment (no shell: the path is run as is, through
// shared/run-program.ts, so a timeout ends what it started too). Both come
// from the server's configuration only; nothing a resource sets reaches them.
import { endedBadly, runProgram } from '../shared/run-program.ts';
import type { NotificationKind, NotificationTarget } from './conditions.ts';
import { redactKeyMaterial } from '../pki/redact-keys.ts';

export interface NotificationTargets {
  webhookUrl?: string;
  /** path of an executable */
  exec?: string;
  timeoutMs?: number;
}

export interface Notification {
  kind: NotificationKind;
  state: 'firing' | 'resolved';
  namespace: string;
  name: string;
  message: string;
  at: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** a hook gets this long to end after SIGTERM at the timeout before its process group is SIGKILLed */
const KILL_GRACE_MS = 2000;

export function notificationText(n: Notification): string {
  const what = `Certificate ${n.namespace}/${n.name}`;
  return n.state === 'firing' ? `[certsmith] ${n.kind}: ${what}: ${n.message}` : `[certsmith] resolved ${n.kind}: ${what}`;
}

export function webhookBody(n: Notification): Record<string, unknown> {
  return { text: notificationText(n), certsmith: { kind: n.kind, state: n.state, certificate: { namespace: n.namespace, name: n.name }, message: n.message, at: n.at } };
}

export function execEnvironment(n: Notification): Record<string, string> {
  return {
    CERTSMITH_NOTIFICATION: n.kind, CERTSMITH_NOTIFICATION_STATE: n.state, CERTSMITH_NAMESPACE: n.namespace,
    CERTSMITH_CERTIFICATE: n.name, CERTSMITH_MESSAGE: n.message, CERTSMITH_TIME: n.at, CERTSMITH_TEXT: notificationText(n),
  };
}

/** The targets configured, in the order they are told. */
export function configuredTargets(targets: NotificationTargets): NotificationTarget[] {
  return [...(targets.webhookUrl ? ['webhook' as const] : []), ...(targets.exec ? ['exec' as const] : [])];
}

/**
 * Delivers to one target; throws (naming the target, never a credential in the URL) when it fails.
 * The message is stripped of private keys first: it may quote a deploy hook's output.
 */
export async function deliver(targets: NotificationTargets, notification: Notification, target: NotificationTarget): Promise<void> {
  const n = { ...notification, message: redactKeyMaterial(notification.message) };
  const timeoutMs = targets.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (target === 'webhook' && targets.webhookUrl) {
    const url = new URL(targets.webhookUrl);
    const where = `${url.protocol}//${url.host}`;
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(webhookBody(n)), signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      throw new Error(`notification webhook ${where}: ${(e as Error).message}`);
    }
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`notification webhook ${where}: HTTP ${res.status}`);
  }
  if (target === 'exec' && targets.exec) {
    const program = targets.exec;
    const r = await runProgram(program, [], { env: execEnvironment(n), timeoutMs, killGraceMs: KILL_GRACE_MS, outputLimit: 64 * 1024, leftovers: 'leave' });
    let failure = r.startError;
    if (!failure && r.timedOut) failure = `killed after ${timeoutMs / 1000}s`;
    else if (!failure && r.exitCode !== 0) failure = `Command failed: ${program} ${endedBadly(r)}`;
    if (failure) throw new Error(`notification hook ${program}: ${failure}`);
  }
}
