// The certificate-shims' shell, shared by ingress-shim and gateway-shim: reads the owner and its
// namespace's Certificates from the caches, performs the shim decision's writes, and tells the
// owner's events what it did.
import { Certificate, GatewayType, IngressType, type ResourceType } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import { isNotFound } from '../../store/store.ts';
import { keyFor, splitKey } from '../../runtime/controller.ts';
import { record, type ControllerContext, type ControllerSpec, forController } from '../context.ts';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import { specOrMetadataChanged, wakeOwners } from '../../shared/watch.ts';
import { decideIngressShim, SHIM_REASON, type IngressObj, type IngressShimOptions, type ShimDecision } from './shim.ts';
import { decideGatewayShim, type GatewayObj } from './gateway.ts';

function shimOptions(ctx: ControllerContext): IngressShimOptions {
  return {
    defaultIssuerName: ctx.options.defaultIssuerName,
    defaultIssuerKind: ctx.options.defaultIssuerKind,
    defaultIssuerGroup: ctx.options.defaultIssuerGroup,
    autoCertificateAnnotations: ctx.options.autoCertificateAnnotations,
  };
}

function shimController<O extends KubeObject>(shared: ControllerContext, shim: {
  name: string;
  fieldManager: string;
  ownerType: ResourceType;
  decide: (owner: O, certificates: CertificateObj[], options: IngressShimOptions) => ShimDecision;
}): ControllerSpec {
  const ctx = forController(shared, shim.name);
  const owners = ctx.informers.informerFor<O>(shim.ownerType);
  const certificates = ctx.informers.informerFor<CertificateObj>(Certificate);
  const options = shimOptions(ctx);
  return {
    name: shim.name,
    watch(enqueue) {
      owners.onAdd((o) => enqueue(keyFor(o)));
      owners.onUpdate((_, o) => enqueue(keyFor(o)));
      // A Certificate it controls changed or went away: put it back as the owner says. Its status
      // (written several times per issuance) is nothing the shim compares.
      wakeOwners(certificates, shim.ownerType, enqueue, specOrMetadataChanged);
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const owner = owners.get(namespace, name);
      if (!owner) return;
      const decision = shim.decide(owner, certificates.list(namespace), options);
      record(ctx, owner, decision.events);
      for (const action of decision.actions) {
        if (action.kind === 'create') {
          await ctx.store.create(Certificate, action.certificate, { fieldManager: shim.fieldManager });
          ctx.recorder.event(owner, 'Normal', SHIM_REASON.create, `Successfully created Certificate "${action.certificate.metadata.name}"`);
        } else if (action.kind === 'update') {
          await ctx.store.update(Certificate, action.certificate, { fieldManager: shim.fieldManager });
          ctx.recorder.event(owner, 'Normal', SHIM_REASON.update, `Successfully updated Certificate "${action.certificate.metadata.name}"`);
        } else {
          try {
            await ctx.store.delete(Certificate, namespace, action.name);
          } catch (e) {
            if (!isNotFound(e)) throw e;
            continue;
          }
          ctx.recorder.event(owner, 'Normal', SHIM_REASON.delete, `Successfully deleted unrequired Certificate "${action.name}"`);
        }
      }
    },
  };
}

export function ingressShimController(ctx: ControllerContext): ControllerSpec {
  return shimController<IngressObj>(ctx, { name: 'ingress-shim', fieldManager: 'cert-manager-ingress-shim', ownerType: IngressType, decide: decideIngressShim });
}

/** Certificates for annotated Gateways; runs only with enableGatewayAPI, as upstream's --enable-gateway-api. */
export function gatewayShimController(ctx: ControllerContext): ControllerSpec {
  return shimController<GatewayObj>(ctx, { name: 'gateway-shim', fieldManager: 'cert-manager-gateway-shim', ownerType: GatewayType, decide: decideGatewayShim });
}
