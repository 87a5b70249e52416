// Discovery documents (/api, /apis, /api/v1, /apis/<group>/<version>), built from the one
// resource registry. Plain (non-aggregated) JSON: kubectl falls back to it by itself.
// Groups served by APIService backends (aggregation.ts) are listed in /apis and /apis/<group>
// as kube-aggregator lists them: by groupPriorityMinimum, then name; the versions of a group by
// versionPriority, the first preferred. /apis/<group>/<version> of such a group is the backend's
// own resource list, proxied.
import { APIServiceType, resourceTypes, supportsDeleteCollection, type ResourceType } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Store } from '../store/store.ts';
import { discoveryEntry, reviewAPI, reviewAPIs } from './self-reviews.ts';
import { byCodeUnits } from '../api/ordering.ts';

const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const serverVersion = {
  major: '1', minor: '32', gitVersion: 'v1.32.0+certsmith', gitCommit: '', gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z', goVersion: 'node', compiler: 'tsc', platform: `${process.platform}/${process.arch}`,
};

export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** A group/version an APIService hands to a backend Service (one with spec.service; the others are the server's own). */
export interface AggregatedGroupVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
}

interface APIServiceSpec {
  group?: string;
  version?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  service?: unknown;
}

export async function aggregatedGroupVersions(store: Store): Promise<AggregatedGroupVersion[]> {
  const list = await store.list<KubeObject & { spec?: APIServiceSpec }>(APIServiceType, {});
  return list.items
    .filter((a) => a.spec?.service && a.spec.group && a.spec.version)
    .map((a) => ({ group: a.spec!.group!, version: a.spec!.version!, groupPriorityMinimum: a.spec!.groupPriorityMinimum ?? 0, versionPriority: a.spec!.versionPriority ?? 0 }))
    .sort((a, b) => b.groupPriorityMinimum - a.groupPriorityMinimum || byCodeUnits(a.group, b.group) || b.versionPriority - a.versionPriority || byCodeUnits(a.version, b.version));
}

function groupVersions(aggregated: AggregatedGroupVersion[] = []) {
  const groups = new Map<string, Set<string>>();
  for (const t of resourceTypes) {
    if (!t.group) continue;
    if (!groups.has(t.group)) groups.set(t.group, new Set());
    groups.get(t.group)!.add(t.version);
  }
  // not stored, so not in the registry: reviews are answered, never kept
  for (const r of reviewAPIs) groups.set(r.group, new Set([r.version]));
  // a group this server serves itself is never handed over, whatever an APIService says
  const own = new Set(groups.keys());
  for (const a of aggregated) {
    if (own.has(a.group)) continue;
    if (!groups.has(a.group)) groups.set(a.group, new Set());
    groups.get(a.group)!.add(a.version);
  }
  return groups;
}

export function apiGroup(name: string, aggregated: AggregatedGroupVersion[] = []) {
  const versions = [...(groupVersions(aggregated).get(name) ?? [])];
  if (!versions.length) return undefined;
  const vs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(aggregated: AggregatedGroupVersion[] = []) {
  return {
    kind: 'APIGroupList', apiVersion: 'v1',
    groups: [...groupVersions(aggregated).keys()].map((g) => {
      const { kind: _k, apiVersion: _a, ...group } = apiGroup(g, aggregated)!;
      return group;
    }),
  };
}

export function typesIn(group: string, version: string): ResourceType[] {
  return resourceTypes.filter((t) => t.group === group && t.version === version);
}

export function apiResourceList(group: string, version: string) {
  const reviews = reviewAPI(group, version);
  if (reviews) return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: reviews.resources.map(discoveryEntry) };
  const types = typesIn(group, version);
  if (!types.length) return undefined;
  const resources = types.flatMap((t) => {
    const main = {
      name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: supportsDeleteCollection(t) ? verbs : verbs.filter((v) => v !== 'deletecollection'),
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
      ...(t.categories?.length ? { categories: t.categories } : {}),
    };
    return t.statusSubresource
      ? [main, { name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }]
      : [main];
  });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}
