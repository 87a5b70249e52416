import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { forController } from '../../context.ts';
import { certificateCaches, gatherCertificate, watchCertificateGraph } from '../gather.ts';
import { CERTIFICATES_BY_SECRET } from '../../../shared/certificate-index.ts';
import { isSecretOwner } from '../../../shared/ownership.ts';
import { keyFor } from '../../../runtime/controller.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { withCertificate, writeCertificateStatus } from '../shell.ts';
import { decideReadiness, readinessChanged, withReadiness } from './readiness.ts';
import { issuanceCompleting } from '../policies.ts';
import { readinessWakes } from '../wake.ts';

const MANAGER = 'certificates-readiness';

export function readinessController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const c = certificateCaches(ctx);
  // renewal decisions already counted, so a re-reconcile does not count a deferral twice
  const counted = new Map<string, string>();
  return {
    name: MANAGER,
    watch: (enqueue) => {
      watchCertificateGraph(c, enqueue, readinessWakes);
      // what was counted for a Certificate goes with it: one made again under its name has a new uid and counts afresh anyway
      c.certificates.onDelete((crt) => counted.delete(keyFor(crt)));
    },
    reconcile: async (key) => withCertificate(ctx, c, key, async (crt) => {
      if (crt.metadata.deletionTimestamp) return;
      const input = await gatherCertificate(ctx, c, crt);
      if (issuanceCompleting(input)) return;
      const now = ctx.clock.now();
      const d = decideReadiness(input, now);
      // A new Certificate the trigger is about to issue: the trigger's first status write
      // carries these readiness fields too, so writing them here would only race it.
      const ready = d.fields.conditions?.find((x) => x.type === 'Ready');
      if (!crt.status && ready?.status === 'False' && ready.reason !== 'Expired' &&
        isSecretOwner(crt, c.certificates.byIndex(CERTIFICATES_BY_SECRET, `${crt.metadata.namespace}/${crt.spec.secretName}`), input.secret?.metadata.annotations?.[CertificateAnnotation.certificateName])) {
        return;
      }
      const r = d.renewal;
      if (r?.kind === 'scheduled' && r.reason !== 'RenewBefore' && r.reason !== 'InsideWindow' && r.reason !== 'ARI' && r.reason !== 'ARIRenewNow') {
        const id = `${crt.metadata.uid}/${d.fields.notAfter}/${r.renewalTime.toISOString()}`;
        if (counted.get(key) !== id) {
          counted.set(key, id);
          if (r.reason === 'ExpiryImminent') {
            ctx.metrics.renewalBypassed('expiry_imminent');
            ctx.recorder.event(crt, 'Warning', 'RenewalWindowBypassed', r.message);
          } else {
            ctx.metrics.renewalDeferred('outside_window');
          }
        }
      }
      if (readinessChanged(crt.status, d.fields)) {
        await writeCertificateStatus(ctx, crt, withReadiness(crt, d.fields), MANAGER);
      }
      // Expiry changes Ready without any object changing: look again then.
      const notAfter = d.fields.notAfter ? Date.parse(d.fields.notAfter) - now.getTime() : undefined;
      return notAfter !== undefined && notAfter > 0 ? { requeueAfterMs: notAfter + 1000 } : undefined;
    }),
  };
}
