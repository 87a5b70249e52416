// Discovery documents (/api, /apis, /api/v1, /apis/<group>/<version>), built from the one
// resource registry. Plain (non-aggregated) JSON: kubectl falls back to it by itself.
import { resourceTypes, type ResourceType } from '../api/resources.ts';
import { authorizationGroup, authorizationResources, authorizationVersion } from './authorization.ts';

const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const serverVersion = {
  major: '1', minor: '32', gitVersion: 'v1.32.0+certsmith', gitCommit: '', gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z', goVersion: 'node', compiler: 'tsc', platform: `${process.platform}/${process.arch}`,
};

export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupVersions() {
  const groups = new Map<string, Set<string>>();
  for (const t of resourceTypes) {
    if (!t.group) continue;
    if (!groups.has(t.group)) groups.set(t.group, new Set());
    groups.get(t.group)!.add(t.version);
  }
  // not stored, so not in the registry: reviews are answered, never kept
  groups.set(authorizationGroup, new Set([authorizationVersion]));
  return groups;
}

export function apiGroup(name: string) {
  const versions = [...(groupVersions().get(name) ?? [])];
  if (!versions.length) return undefined;
  const vs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList() {
  return {
    kind: 'APIGroupList', apiVersion: 'v1',
    groups: [...groupVersions().keys()].map((g) => {
      const { kind: _k, apiVersion: _a, ...group } = apiGroup(g)!;
      return group;
    }),
  };
}

export function typesIn(group: string, version: string): ResourceType[] {
  return resourceTypes.filter((t) => t.group === group && t.version === version);
}

export function apiResourceList(group: string, version: string) {
  if (group === authorizationGroup && version === authorizationVersion) {
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: authorizationResources };
  }
  const types = typesIn(group, version);
  if (!types.length) return undefined;
  const resources = types.flatMap((t) => {
    const main = {
      name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs,
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
      ...(t.categories?.length ? { categories: t.categories } : {}),
    };
    return t.statusSubresource
      ? [main, { name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }]
      : [main];
  });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}
