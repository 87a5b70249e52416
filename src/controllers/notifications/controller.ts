// The notifications controller ("certificates-notifications", issue 16): tells people, through
// the server's configured webhook and/or exec hook, when a Certificate has failed issuance N times
// in a row, is past its renewal time by more than a grace period, is near expiry, is asked by
// its CA (ARI) to be replaced now, or its deploy hook failed, and again when that clears. What
// was announced is kept on the Certificate (annotation notifications.certsmith.io/firing), so each
// condition is announced once and resolved once, restarts included; the annotation is written
// after delivery, so a crash in between repeats a notice rather than losing one. A receiver that
// is down is retried with the controller's per-object backoff; nothing here touches issuance.
import { Certificate as CertificateType, EventType } from '../../api/resources.ts';
import type { Certificate } from '../../api/types.ts';
import type { KubeObject } from '../../api/meta.ts';
import { NOTIFICATIONS_FIRING_ANNOTATION } from '../../api/annotations.ts';
import { isNotFound } from '../../store/store.ts';
import { splitKey } from '../../runtime/controller.ts';
import type { ControllerContext, ControllerSpec } from '../context.ts';
import { forController, componentNameOf } from '../context.ts';
import {
  activeNotifications, decideNotifications, formatAnnounced, nextNotificationChange, parseAnnounced,
  DEFAULT_NOTIFICATION_POLICY, type Announced, type NotificationKind, type NotificationPolicy,
} from '../../notifications/conditions.ts';
import { configuredTargets, deliver, type NotificationTargets } from '../../notifications/delivery.ts';
import { DEPLOY_HOOK_REASONS, lastHookOutcome, type HookEvent } from '../../shared/deploy-hook-events.ts';

const MANAGER = 'certificates-notifications';

export type NotificationOptions = NotificationTargets & Partial<NotificationPolicy>;

/** Events index: deploy-hook outcomes by the uid of their Certificate (a scan of the namespace's Events per reconcile grows with them). */
const HOOK_OUTCOMES_BY_UID = 'deployHookOutcomeByCertificateUID';

export function hookOutcomeIndexKeys(e: HookEvent): string[] {
  return DEPLOY_HOOK_REASONS.has(e.reason ?? '') && e.involvedObject?.kind === 'Certificate' && e.involvedObject.uid ? [e.involvedObject.uid] : [];
}

export function notificationsController(shared: ControllerContext, o: NotificationOptions): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const certificates = ctx.informers.informerFor<Certificate & KubeObject>(CertificateType);
  const events = ctx.informers.informerFor<HookEvent>(EventType);
  if (!events.hasIndex(HOOK_OUTCOMES_BY_UID)) events.addIndex(HOOK_OUTCOMES_BY_UID, hookOutcomeIndexKeys);
  const policy: NotificationPolicy = {
    failures: o.failures ?? DEFAULT_NOTIFICATION_POLICY.failures,
    renewalGraceMs: o.renewalGraceMs ?? DEFAULT_NOTIFICATION_POLICY.renewalGraceMs,
    ...(o.expiryThresholdMs !== undefined ? { expiryThresholdMs: o.expiryThresholdMs } : {}),
  };
  const targets: NotificationTargets = { webhookUrl: o.webhookUrl, exec: o.exec, timeoutMs: o.timeoutMs };

  const targetNames = configuredTargets(targets);
  /** Certificates deleted with notices firing, by key, with what is still announced, until their resolved notices are out */
  const deleted = new Map<string, { crt: Certificate & KubeObject; announced: Announced }>();

  /** A merge patch of the one annotation: a concurrent writer is no conflict, the store reapplies it to the current object. */
  async function recordAnnounced(crt: Certificate & KubeObject, announced: Announced): Promise<void> {
    const value = formatAnnounced(announced, targetNames) || null;
    await ctx.store.patch(CertificateType, crt.metadata.namespace, crt.metadata.name!, 'merge',
      { metadata: { annotations: { [NOTIFICATIONS_FIRING_ANNOTATION]: value } } }, { fieldManager: componentNameOf(MANAGER) })
      .catch((e) => { if (!isNotFound(e)) throw e; });
  }

  return {
    name: MANAGER,
    workers: 2,
    // a receiver that is down: retried per Certificate, from 5 s up to 10 minutes apart
    retry: { baseDelayMs: 5_000, maxDelayMs: 600_000 },
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      certificates.onAdd(key);
      certificates.onUpdate((_, n) => key(n));
      // a Certificate deleted while something was firing: its notices are resolved (the
      // condition went with it), from its last state, as a vanished alert resolves in Alertmanager
      certificates.onDelete((o) => {
        const announced = parseAnnounced(o.metadata.annotations?.[NOTIFICATIONS_FIRING_ANNOTATION], targetNames);
        if (!announced.size) return;
        deleted.set(`${o.metadata.namespace}/${o.metadata.name}`, { crt: o, announced });
        key(o);
      });
      const fromEvent = (e: HookEvent) => {
        if (DEPLOY_HOOK_REASONS.has(e.reason ?? '') && e.involvedObject?.kind === 'Certificate' && e.involvedObject.name) {
          enqueue(`${e.involvedObject.namespace ?? e.metadata.namespace}/${e.involvedObject.name}`);
        }
      };
      events.onAdd(fromEvent);
      events.onUpdate((_, n) => fromEvent(n));
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const crt = certificates.get(namespace, name);
      const gone = deleted.get(key);
      if (!crt && gone) {
        // nothing holds now: every notice it had firing is resolved; what could not be delivered
        // is retried with backoff (from memory: a restart forgets a deleted Certificate)
        // (notify updates gone.announced in place, delivery by delivery)
        await notify(gone.crt, new Map(), gone.announced, ctx.clock.now(), async (left) => {
          if (!left.size) deleted.delete(key);
        });
        return;
      }
      deleted.delete(key);
      if (!crt || crt.metadata.deletionTimestamp) return;
      const now = ctx.clock.now();
      const hook = crt.metadata.uid ? lastHookOutcome(events.byIndex(HOOK_OUTCOMES_BY_UID, crt.metadata.uid), crt) : undefined;
      const announced = parseAnnounced(crt.metadata.annotations?.[NOTIFICATIONS_FIRING_ANNOTATION], targetNames);
      const before = formatAnnounced(announced, targetNames);
      await notify(crt, activeNotifications(crt, hook, now, policy), announced, now, async (after) => {
        // what was delivered is recorded even when another delivery failed
        if (formatAnnounced(after, targetNames) !== before) await recordAnnounced(crt, after);
      });
      const next = nextNotificationChange(crt, now, policy);
      return next ? { requeueAfterMs: next.getTime() - now.getTime() } : undefined;
    },
  };

  /**
   * Sends what `active` and `announced` call for, each target apart; `record` gets what was
   * announced afterwards, then the first failure is thrown (the key is retried with backoff).
   */
  async function notify(crt: Certificate & KubeObject, active: Map<NotificationKind, string>, announced: Announced, now: Date,
    record: (after: Announced) => Promise<void>): Promise<void> {
    const at = now.toISOString();
    const [ns, name] = [crt.metadata.namespace!, crt.metadata.name!];
    let failure: unknown;
    for (const d of decideNotifications(active, announced, targetNames)) {
      try {
        await deliver(targets, { kind: d.kind, state: d.state, namespace: ns, name, message: d.message, at }, d.target);
      } catch (e) {
        // the other targets still hear it; this one is retried with backoff
        failure ??= e;
        continue;
      }
      const told = announced.get(d.kind) ?? new Set();
      if (d.state === 'firing') told.add(d.target);
      else told.delete(d.target);
      if (told.size) announced.set(d.kind, told);
      else announced.delete(d.kind);
    }
    await record(announced);
    if (failure) throw failure;
  }
}
