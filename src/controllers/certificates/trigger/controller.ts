import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { record, forController } from '../../context.ts';
import { defaultBackoff, failureMinuteOf } from '../../../shared/backoff.ts';
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
  return {
    name: 'certificates-trigger',
    watch: (enqueue) => watchCertificateGraph(c, enqueue, triggerWakes),
    reconcile: async (key) => withCertificate(ctx, c, key, async (cached) => {
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
      record(ctx, crt, d.events);
      for (const e of d.events) if (e.reason === 'Backoff') ctx.logger.info({ certificate: key }, e.message);
      return { requeueAfterMs: d.requeueAfterMs };
    }),
  };
}
