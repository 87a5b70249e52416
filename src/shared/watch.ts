// Wake-ups several controllers wire the same way: an object's controlling owner when the
// object changes, and the objects that name an issuer when that issuer changes.
import { ClusterIssuer, Issuer } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { controllerOwnerKey } from '../runtime/controller.ts';
import type { Informer, InformerFactory } from '../runtime/informer.ts';

/** The object as a writer means it: without what every write changes (resourceVersion, managedFields). */
function withoutBookkeeping(o: KubeObject): unknown {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/** Whether an update changed anything but bookkeeping (controller-runtime's ResourceVersionChangedPredicate). */
export function changedApartFromBookkeeping(old: KubeObject, next: KubeObject): boolean {
  // the same object twice is an informer resync: the periodic second look it exists for
  if (old === next) return true;
  return JSON.stringify(withoutBookkeeping(old)) !== JSON.stringify(withoutBookkeeping(next));
}

/** Whether an update changed what the object asks for: spec, labels, annotations, owners, finalizers or deletion; status does not count. */
export function specOrMetadataChanged(old: KubeObject & { spec?: unknown }, next: KubeObject & { spec?: unknown }): boolean {
  if (old === next) return true;
  const view = (o: KubeObject & { spec?: unknown }) => [o.metadata.generation, o.metadata.labels, o.metadata.annotations, o.metadata.ownerReferences,
    o.metadata.finalizers, o.metadata.deletionTimestamp, o.spec];
  return JSON.stringify(view(old)) !== JSON.stringify(view(next));
}

/**
 * Enqueues the controlling owner (of type `ownerType`) of every object added, changed or deleted
 * in `owned`; an update only when `changed` says so (default: anything but bookkeeping).
 */
export function wakeOwners<T extends KubeObject>(owned: Informer<T>, ownerType: ResourceType, enqueue: (key: string) => void,
  changed: (old: T, next: T) => boolean = changedApartFromBookkeeping): void {
  const byOwner = (o: T) => {
    const key = controllerOwnerKey(o, ownerType);
    if (key) enqueue(key);
  };
  owned.onAdd(byOwner);
  owned.onUpdate((o, n) => {
    if (!changed(o, n)) return;
    // a changed controller reference reaches the old owner too
    if (controllerOwnerKey(o, ownerType) !== controllerOwnerKey(n, ownerType)) byOwner(o);
    byOwner(n);
  });
  owned.onDelete(byOwner);
}

const BY_ISSUER_REF = 'issuerRef';

/** The index value of an issuerRef: kind (empty means Issuer), then the namespace an Issuer lives in. */
function issuerRefIndexKey(kind: string, namespace: string | undefined, name: string): string {
  return kind === 'ClusterIssuer' ? `ClusterIssuer//${name}` : `${kind}/${namespace ?? ''}/${name}`;
}

/**
 * Calls `wake` for each object of `objects` whose spec.issuerRef names an Issuer or
 * ClusterIssuer when that issuer is added or changed apart from bookkeeping (and passes `filter`, when given).
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
    informer.onUpdate((o, n) => { if (changedApartFromBookkeeping(o, n)) onIssuer(n); });
  }
}
