// Kubernetes-mode HTTP-01: makes sure the challenge's solver Pod, Service and Ingress exist (or
// its path rule in the user's Ingress, or for gatewayHTTPRoute an HTTPRoute on the solver's
// parentRefs), self-checks through the cluster's ingress on port 80, and removes what it made.
// Idempotent: objects are found again by their labels and owner.
import { HTTPRouteType, IngressType, PodType, ServiceType, type ResourceType } from '../../../../api/resources.ts';
import type { KubeObject } from '../../../../api/meta.ts';
import type { Challenge } from '../../../../api/types.ts';
import { isNotFound, type Store } from '../../../../store/store.ts';
import type { ControllerOptions } from '../../../../shared/controller-options.ts';
import type { ChallengeSolver } from '../solver.ts';
import { selfCheckHTTP01 } from '../http01.ts';
import {
  httpRouteFits, isControlledBy, routesChallenge, solverHTTPRoute, solverIngress, solverLabelSelector, solverPod, solverService,
  withChallengePath, withoutChallengePath, type HTTPRoute, type Ingress, type Pod, type Service,
} from './resources.ts';

export interface KubeSolverDeps {
  store: Store;
  options: ControllerOptions;
}

const FIELD_MANAGER = 'cert-manager-challenges';

async function owned<T extends KubeObject>(store: Store, type: ResourceType, c: Challenge): Promise<T[]> {
  const { items } = await store.list<T>(type, { namespace: c.metadata.namespace, labelSelector: solverLabelSelector(c) });
  return items.filter((o) => isControlledBy(o, c) && !o.metadata.deletionTimestamp);
}

async function deleteAll(store: Store, type: ResourceType, objs: KubeObject[]): Promise<void> {
  for (const o of objs) {
    await store.delete(type, o.metadata.namespace, o.metadata.name!).catch((e) => { if (!isNotFound(e)) throw e; });
  }
}

/** Exactly one owned object of the kind: kept when `fits`, else everything is replaced by a fresh one. */
async function ensureOne<T extends KubeObject>(store: Store, type: ResourceType, c: Challenge, build: () => T, fits: (o: T) => boolean = () => true): Promise<T> {
  const existing = await owned<T>(store, type, c);
  if (existing.length === 1 && fits(existing[0])) return existing[0];
  // duplicates come from a create whose answer was lost; stale ones from a changed service name
  await deleteAll(store, type, existing);
  return store.create<T>(type, build(), { fieldManager: FIELD_MANAGER });
}

async function addPathToNamedIngress(store: Store, c: Challenge, name: string, serviceName: string): Promise<void> {
  const ing = await store.get<Ingress>(IngressType, c.metadata.namespace, name);
  if (!ing) throw new Error(`ingress "${c.metadata.namespace}/${name}" named by the solver (ingress.name) not found`);
  const next = withChallengePath(ing, c, serviceName);
  // a stale resourceVersion fails with 409 and the challenge is retried on the fresh object
  if (next) await store.update<Ingress>(IngressType, next, { fieldManager: FIELD_MANAGER });
}

async function removePathFromNamedIngress(store: Store, c: Challenge, name: string): Promise<void> {
  const ing = await store.get<Ingress>(IngressType, c.metadata.namespace, name);
  if (!ing) return; // gone with its rule
  const next = withoutChallengePath(ing, c);
  if (next) await store.update<Ingress>(IngressType, next, { fieldManager: FIELD_MANAGER });
}

export function kubernetesHTTP01Solver(deps: KubeSolverDeps, c: Challenge): ChallengeSolver {
  const { store, options } = deps;
  const ingressCfg = c.spec.solver.http01?.ingress;
  const routeCfg = c.spec.solver.http01?.gatewayHTTPRoute;
  async function present(): Promise<void> {
    if (!ingressCfg && !routeCfg) throw new Error('the http01 solver names neither ingress nor gatewayHTTPRoute');
    // as upstream: without the flag the HTTPRoute type may not exist in the cluster
    if (!ingressCfg && !options.enableGatewayAPI) throw new Error('the gatewayHTTPRoute solver needs the Gateway API: start certsmith with --enable-gateway-api');
    await ensureOne<Pod>(store, PodType, c, () => solverPod(c, { image: options.acmeHTTP01SolverImage }));
    const svc = await ensureOne<Service>(store, ServiceType, c, () => solverService(c));
    const serviceName = svc.metadata.name!;
    if (!ingressCfg) await ensureOne<HTTPRoute>(store, HTTPRouteType, c, () => solverHTTPRoute(c, serviceName), (r) => httpRouteFits(r, c, serviceName));
    else if (ingressCfg.name) await addPathToNamedIngress(store, c, ingressCfg.name, serviceName);
    else await ensureOne<Ingress>(store, IngressType, c, () => solverIngress(c, serviceName), (ing) => routesChallenge(ing, c, serviceName));
  }
  return {
    present,
    async check() {
      // as cert-manager: pods die and nodes drain between Present and the check
      await present();
      return selfCheckHTTP01({
        dnsName: c.spec.dnsName, token: c.spec.token, keyAuth: c.spec.key,
        port: options.acmeHTTP01SelfCheckPort ?? 80, nameservers: options.acmeHTTP01SolverNameservers,
      });
    },
    async cleanUp() {
      const errors: string[] = [];
      const attempt = (p: Promise<void>) => p.catch((e: Error) => void errors.push(e.message));
      // each kind on its own: one failure must not leave the others behind
      await attempt((async () => deleteAll(store, PodType, await owned(store, PodType, c)))());
      await attempt((async () => deleteAll(store, ServiceType, await owned(store, ServiceType, c)))());
      await attempt((async () => deleteAll(store, IngressType, await owned(store, IngressType, c)))());
      // only where routes were made: a cluster without the Gateway API answers 404 to the list
      if (routeCfg && options.enableGatewayAPI) await attempt((async () => deleteAll(store, HTTPRouteType, await owned(store, HTTPRouteType, c)))());
      if (ingressCfg?.name) await attempt(removePathFromNamedIngress(store, c, ingressCfg.name));
      if (errors.length) throw new Error(errors.join('; '));
    },
  };
}
