// Wake-ups several controllers wire the same way: an object's controlling owner when the
// object changes, and the objects that name an issuer when that issuer changes.
import { ClusterIssuer, Issuer } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { controllerOwnerKey } from '../runtime/controller.ts';
import type { Informer, InformerFactory } from '../runtime/informer.ts';

/** Enqueues the controlling owner (of type `ownerType`) of every object added, changed or deleted in `owned`. */
export function wakeOwners<T extends KubeObject>(owned: Informer<T>, ownerType: ResourceType, enqueue: (key: string) => void): void {
  const byOwner = (o: T) => {
    const key = controllerOwnerKey(o, ownerType);
    if (key) enqueue(key);
  };
  owned.onAdd(byOwner);
  owned.onUpdate((_, n) => byOwner(n));
  owned.onDelete(byOwner);
}

const BY_ISSUER_REF = 'issuerRef';

/** The index value of an issuerRef: kind (empty means Issuer), then the namespace an Issuer lives in. */
function issuerRefIndexKey(kind: string, namespace: string | undefined, name: string): string {
  return kind === 'ClusterIssuer' ? `ClusterIssuer//${name}` : `${kind}/${namespace ?? ''}/${name}`;
}

/**
 * Calls `wake` for each object of `objects` whose spec.issuerRef names an Issuer or
 * ClusterIssuer when that issuer is added or changed (and passes `filter`, when given).
 */
export function wakeByIssuer<T extends KubeObject & { spec: { issuerRef: { name: string; kind?: string } } }>(
  informers: InformerFactory, objects: Informer<T>, wake: (o: T) => void, filter: (o: T) => boolean = () => true,
): void {
  if (!objects.hasIndex(BY_ISSUER_REF)) {
    objects.addIndex(BY_ISSUER_REF, (o) => {
      const ref = o.spec?.issuerRef;
      return ref ? [issuerRefIndexKey(ref.kind || 'Issuer', o.metadata.namespace, ref.name)] : [];
    });
  }
  for (const type of [Issuer, ClusterIssuer]) {
    const onIssuer = (i: KubeObject) => {
      for (const o of objects.byIndex(BY_ISSUER_REF, issuerRefIndexKey(type.kind, i.metadata.namespace, i.metadata.name!))) if (filter(o)) wake(o);
    };
    const informer = informers.informerFor(type);
    informer.onAdd(onIssuer);
    informer.onUpdate((_, n) => onIssuer(n));
  }
}
