import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { record, forController } from '../../context.ts';
import { BACKOFF_EVENT_REASON, defaultBackoff, failureMinuteOf } from '../../../shared/backoff.ts';
import { isSecretOwner } from '../../../shared/ownership.ts';
import { certificateCaches, gatherCertificate, gatherFresh, watchCertificateGraph } from '../gather.ts';
import { CERTIFICATES_BY_SECRET } from '../../../shared/certificate-index.ts';
import type { CertificateInput } from '../policies.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj } from '../../../api/types.ts';
import { withCertificate, writeCertificateStatus } from '../shell.ts';
import { decideReadiness, withReadiness } from '../readiness/readiness.ts';
import { decideTrigger } from './trigger.ts';
import { triggerWakes } from '../wake.ts';
import { splitKey } from '../../../runtime/controller.ts';

const BY_FAILURE_MINUTE = 'failureMinute';

export function triggerController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, 'certificates-trigger');
  const c = certificateCaches(ctx);
  if (!c.certificates.hasIndex(BY_FAILURE_MINUTE)) {
    c.certificates.addIndex(BY_FAILURE_MINUTE, (crt) => {
      const t = crt.status?.lastFailureTime;
      return t ? [String(failureMinuteOf(t))] : [];
    });
  }
  const backoff = {
    initialMs: ctx.options.backoffInitialMs ?? defaultBackoff.initialMs,
    maxMs: ctx.options.backoffMaxMs ?? defaultBackoff.maxMs,
  };
  // The Backoff Event each Certificate was last given: the decision names the same wait at every
  // look (its own status write, a Secret or request update, a resync), and one failure is
  // announced once, not counted up as if it had happened again.
  const announced = new Map<string, string>();
  // a failure's Backoff Event is recorded within this long of it, or it was recorded before a restart
  const ANNOUNCED_WITHIN_MS = 5 * 60_000;
  return {
    name: 'certificates-trigger',
    watch: (enqueue) => watchCertificateGraph(c, enqueue, triggerWakes),
    reconcile: async (key) => {
      const result = await reconcileCertificate(key);
      const { namespace, name } = splitKey(key);
      if (!c.certificates.get(namespace, name)) announced.delete(key);
      return result;
    },
  };

  function reconcileCertificate(key: string) {
    return withCertificate(ctx, c, key, async (cached) => {
      const decide = (input: CertificateInput) => {
        const crt = input.certificate;
        const failedAt = crt.status?.lastFailureTime;
        return decideTrigger({
          ...input,
          isSecretOwner: isSecretOwner(crt, c.certificates.byIndex(CERTIFICATES_BY_SECRET, `${crt.metadata.namespace}/${crt.spec.secretName}`), input.secret?.metadata.annotations?.[CertificateAnnotation.certificateName]),
          failuresInSameMinute: failedAt ? c.certificates.byIndex(BY_FAILURE_MINUTE, String(failureMinuteOf(failedAt))).length : 0,
        }, ctx.clock.now(), backoff);
      };
      let input = await gatherCertificate(ctx, c, cached);
      let d = decide(input);
      if (d.conditions) {
        // Certificates and Secrets arrive on separate watches, so the cache may show a
        // Certificate already issued beside its Secret from before: starting an issuance is
        // decided again on both read from the store, or it could issue twice.
        const fresh = await gatherFresh(ctx, c, cached);
        if (!fresh) return undefined;
        input = fresh;
        d = decide(input);
      }
      const crt = input.certificate;
      if (d.conditions) {
        // Readiness fields go in the same write, so a new Certificate costs one status write here, not two.
        const next: CertificateObj = { ...crt, status: { ...(crt.status ?? {}), conditions: d.conditions } };
        await writeCertificateStatus(ctx, crt, withReadiness(next, decideReadiness({ ...input, certificate: next }, ctx.clock.now()).fields), 'certificates-trigger');
      }
      const backoffEvent = d.events.find((e) => e.reason === BACKOFF_EVENT_REASON);
      if (!backoffEvent) announced.delete(key);
      // what was announced is not kept across a restart: a failure older than the restart's first
      // look was announced when it happened (the trigger looks at once after the failure)
      else if (!announced.has(key) && ctx.clock.now().getTime() - Date.parse(crt.status?.lastFailureTime ?? '') > ANNOUNCED_WITHIN_MS) {
        announced.set(key, backoffEvent.message);
      }
      const events = d.events.filter((e) => e !== backoffEvent || announced.get(key) !== e.message);
      record(ctx, crt, events);
      if (backoffEvent && events.includes(backoffEvent)) {
        announced.set(key, backoffEvent.message);
        ctx.logger.info({ certificate: key }, backoffEvent.message);
      }
      return { requeueAfterMs: d.requeueAfterMs };
    });
  }
}
