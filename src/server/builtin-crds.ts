// cert-manager's CustomResourceDefinitions, as a cluster with cert-manager installed lists them:
// `kubectl get crd`, and `kubectl wait --for=condition=Established crd/certificates.cert-manager.io`
// in scripts written for a cluster. The embedded server serves these kinds itself; the objects
// describe them (generated from the one schema, as deploy/crds is) and say they are Established.
// At each start they are put back as generated: the server serves what its schema says, whatever
// an object edited by hand (or applied from another cert-manager release) would claim.
import { crdObject, crdTypes } from '../api/crdgen.ts';
import type { KubeObject } from '../api/meta.ts';
import { rfc3339 } from '../api/time.ts';
import { CustomResourceDefinitionType } from '../api/resources.ts';
import { jsonEqual } from '../store/patch.ts';
import { StoreError, type Store } from '../store/store.ts';

interface CrdStatus {
  conditions: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[];
  acceptedNames: unknown;
  storedVersions: string[];
}

/** kube-apiserver's conditions for a CRD whose names were accepted at once. */
function establishedStatus(spec: { names: unknown; versions: { name: string }[] }, old: CrdStatus | undefined, now: Date): CrdStatus {
  const at = (type: string) => old?.conditions?.find((c) => c.type === type && c.status === 'True')?.lastTransitionTime ?? rfc3339(now);
  return {
    conditions: [
      { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: at('NamesAccepted') },
      { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: at('Established') },
    ],
    acceptedNames: spec.names,
    storedVersions: spec.versions.map((v) => v.name),
  };
}

export async function ensureCustomResourceDefinitions(store: Store, now: Date): Promise<void> {
  for (const t of crdTypes) {
    // as stored: undefined fields (no subresources) are not kept
    const desired = JSON.parse(JSON.stringify(crdObject(t))) as KubeObject & { spec: { names: unknown; versions: { name: string }[] } };
    const name = desired.metadata.name!;
    let stored = await store.get<KubeObject>(CustomResourceDefinitionType, undefined, name);
    if (!stored) {
      try {
        stored = await store.create<KubeObject>(CustomResourceDefinitionType, desired);
      } catch (e) {
        // another writer made it meanwhile
        if (!(e instanceof StoreError && e.reason === 'AlreadyExists')) throw e;
        stored = (await store.get<KubeObject>(CustomResourceDefinitionType, undefined, name))!;
      }
    } else if (!jsonEqual(stored.spec, desired.spec) || !jsonEqual(stored.metadata.labels, desired.metadata.labels)) {
      stored = await store.update<KubeObject>(CustomResourceDefinitionType, { ...stored, metadata: { ...stored.metadata, labels: desired.metadata.labels }, spec: desired.spec });
    }
    const status = establishedStatus(desired.spec, stored.status as CrdStatus | undefined, now);
    if (!jsonEqual(stored.status, status)) await store.updateStatus(CustomResourceDefinitionType, { ...stored, status });
  }
}
