// Finding the issuer a request or Certificate names, and the namespace its Secrets live in
// (a ClusterIssuer's in the cluster resource namespace), the same way in every controller.
import { ClusterIssuer, Issuer } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import type { InformerFactory } from '../runtime/informer.ts';
import type { AnyIssuer } from '../api/types.ts';

/** The part of a controller's context the lookup reads. */
export interface IssuerLookupContext {
  informers: InformerFactory;
  options: { clusterResourceNamespace?: string };
}

export function issuerResourceNamespace(ctx: IssuerLookupContext, issuer: Pick<AnyIssuer, 'kind'> & { metadata: { namespace?: string } }): string {
  return issuer.kind === 'ClusterIssuer' ? (ctx.options.clusterResourceNamespace ?? 'cert-manager') : issuer.metadata.namespace!;
}

/** An issuerRef of another API group: an external issuer, signed for by its own controller, never certsmith. */
export function isExternalIssuerRef(ref: { group?: string }): boolean {
  return !!ref.group && ref.group !== 'cert-manager.io';
}

export function lookupIssuer(ctx: IssuerLookupContext, namespace: string | undefined, ref: { name: string; kind?: string }): AnyIssuer | undefined {
  return ref.kind === 'ClusterIssuer'
    ? ctx.informers.informerFor<AnyIssuer & KubeObject>(ClusterIssuer).get(undefined, ref.name)
    : ctx.informers.informerFor<AnyIssuer & KubeObject>(Issuer).get(namespace, ref.name);
}
