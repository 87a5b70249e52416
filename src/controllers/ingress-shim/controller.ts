// ingress-shim's shell: reads the Ingress and its namespace's Certificates from the caches,
// performs decideIngressShim's writes, and tells the Ingress's events what it did.
import { Certificate, IngressType } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import { isNotFound } from '../../store/store.ts';
import { controllerOwnerKey, keyFor, splitKey } from '../../runtime/controller.ts';
import { record, type ControllerContext, type ControllerSpec } from '../context.ts';
import type { CertificateObj } from '../certificates/objects.ts';
import { decideIngressShim, SHIM_REASON, type IngressObj, type IngressShimOptions } from './shim.ts';

const FIELD_MANAGER = 'cert-manager-ingress-shim';

export function ingressShimController(ctx: ControllerContext): ControllerSpec {
  const ingresses = ctx.informers.informerFor<IngressObj>(IngressType);
  const certificates = ctx.informers.informerFor<CertificateObj>(Certificate);
  const options: IngressShimOptions = {
    defaultIssuerName: ctx.options.defaultIssuerName,
    defaultIssuerKind: ctx.options.defaultIssuerKind,
    defaultIssuerGroup: ctx.options.defaultIssuerGroup,
    autoCertificateAnnotations: ctx.options.autoCertificateAnnotations,
  };
  return {
    name: 'ingress-shim',
    watch(enqueue) {
      ingresses.onAdd((i) => enqueue(keyFor(i)));
      ingresses.onUpdate((_, i) => enqueue(keyFor(i)));
      // A Certificate it controls changed or went away: put it back as the Ingress says.
      const byOwner = (c: KubeObject) => {
        const key = controllerOwnerKey(c, IngressType);
        if (key) enqueue(key);
      };
      certificates.onAdd(byOwner);
      certificates.onUpdate((_, c) => byOwner(c));
      certificates.onDelete(byOwner);
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const ingress = ingresses.get(namespace, name);
      if (!ingress) return;
      const decision = decideIngressShim(ingress, certificates.list(namespace), options);
      record(ctx, ingress, decision.events);
      for (const action of decision.actions) {
        if (action.kind === 'create') {
          await ctx.store.create(Certificate, action.certificate, { fieldManager: FIELD_MANAGER });
          ctx.recorder.event(ingress, 'Normal', SHIM_REASON.create, `Successfully created Certificate "${action.certificate.metadata.name}"`);
        } else if (action.kind === 'update') {
          await ctx.store.update(Certificate, action.certificate, { fieldManager: FIELD_MANAGER });
          ctx.recorder.event(ingress, 'Normal', SHIM_REASON.update, `Successfully updated Certificate "${action.certificate.metadata.name}"`);
        } else {
          try {
            await ctx.store.delete(Certificate, namespace, action.name);
          } catch (e) {
            if (!isNotFound(e)) throw e;
            continue;
          }
          ctx.recorder.event(ingress, 'Normal', SHIM_REASON.delete, `Successfully deleted unrequired Certificate "${action.name}"`);
        }
      }
    },
  };
}
