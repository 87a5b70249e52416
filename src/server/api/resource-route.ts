// Which resource a /api or /apis path names: the part of routing that is only parsing.
import type { ResourceType } from '../../api/resources.ts';
import { typesIn } from '../discovery.ts';

export interface ResourceRoute {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** the name a create carried in its body, for error details */
  bodyName?: string;
}

/** Splits /api/v1/... and /apis/<g>/<v>/... into a resource, namespace, name and subresource. */
export function resourceRoute(group: string, version: string, segs: string[]): ResourceRoute | undefined {
  const types = typesIn(group, version);
  const byPlural = (p: string) => types.find((t) => t.plural === p);
  if (segs[0] === 'namespaces' && segs.length >= 3 && byPlural(segs[2])?.namespaced) {
    if (segs.length > 5) return undefined;
    return { type: byPlural(segs[2])!, namespace: segs[1], name: segs[3], subresource: segs[4] };
  }
  const type = byPlural(segs[0]);
  if (!type || segs.length > 3) return undefined;
  return { type, name: segs[1], subresource: segs[2] };
}

/** The resource's name as kube-apiserver writes it in messages: `plural.group`, or the plural of a core kind. */
export function resourceName(t: ResourceType) {
  return t.group ? `${t.plural}.${t.group}` : t.plural;
}
