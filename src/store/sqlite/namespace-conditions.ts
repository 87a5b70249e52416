// The conditions kube's namespace controller keeps on a Terminating namespace
// (pkg/controller/namespace/deletion/status_condition_utils.go), so `kubectl get ns X -o yaml`
// says what holds it: the content left, by resource, and the finalizers on it. Each of the five
// types is always there, False with its "ok" words when nothing is wrong.
import type { Condition } from '../../api/meta.ts';

/** One object still in the namespace: its resource (plural and group) and its finalizers. */
export interface RemainingContent { plural: string; group: string; finalizers: readonly string[] }

const OK: Record<string, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: { reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
};

function counted(keys: string[], words: (key: string, n: number) => string): string {
  const n = new Map<string, number>();
  for (const k of keys) n.set(k, (n.get(k) ?? 0) + 1);
  // sorted, as upstream sorts them for stable updates
  return [...n].map(([k, c]) => words(k, c)).sort().join(', ');
}

/** The namespace's conditions for what remains in it; an unchanged condition keeps its lastTransitionTime. */
export function namespaceDeletionConditions(remaining: readonly RemainingContent[], old: readonly Condition[] | undefined, now: string): Condition[] {
  const wanted = new Map<string, Omit<Condition, 'type' | 'lastTransitionTime'>>(Object.entries(OK).map(([type, ok]) => [type, { status: 'False', ...ok }]));
  if (remaining.length) {
    wanted.set('NamespaceContentRemaining', {
      status: 'True', reason: 'SomeResourcesRemain',
      message: `Some resources are remaining: ${counted(remaining.map((r) => `${r.plural}.${r.group}`), (k, c) => `${k} has ${c} resource instances`)}`,
    });
  }
  const finalizers = remaining.flatMap((r) => r.finalizers);
  if (finalizers.length) {
    wanted.set('NamespaceFinalizersRemaining', {
      status: 'True', reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${counted(finalizers, (f, c) => `${f} in ${c} resource instances`)}`,
    });
  }
  const others = (old ?? []).filter((c) => !wanted.has(c.type));
  return [...others, ...[...wanted].map(([type, c]) => {
    const before = old?.find((o) => o.type === type);
    return { type, ...c, lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime ?? now : now };
  })];
}
