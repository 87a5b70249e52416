import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../../../store/sqlite/index.ts';
import { FakeClock } from '../../../../runtime/clock.ts';
import { Challenge as ChallengeType, HTTPRouteType, IngressType, PodType, ServiceType } from '../../../../api/resources.ts';
import type { Challenge } from '../../../../api/types.ts';
import type { Store } from '../../../../store/store.ts';
import { kubernetesHTTP01Solver } from './solver.ts';
import { httpRouteFits, SOLVER_LABEL, SOLVER_PORT, solverHTTPRoute, type HTTPRoute, type Pod, type Service } from './resources.ts';

const parentRefs = [{ name: 'gw', namespace: 'edge', sectionName: 'http' }];

function challenge(dnsName: string, route: Record<string, unknown> = { parentRefs, labels: { team: 'web' } }, uid = 'ch-uid'): Challenge {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', metadata: { name: 'c', namespace: 'default', uid },
    spec: {
      url: 'https://acme/chall/c', authorizationURL: 'https://acme/authz/c', dnsName, wildcard: false, type: 'HTTP-01',
      token: 'tok-1', key: 'tok-1.thumb', solver: { http01: { gatewayHTTPRoute: route } },
      issuerRef: { name: 'pebble', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    },
  } as Challenge;
}

test('the solver HTTPRoute: owned by the Challenge, parentRefs and labels from the solver, the token path exactly, to the solver Service', () => {
  const r = solverHTTPRoute(challenge('a.example.test'), 'cm-acme-http-solver-abcde');
  assert.equal(r.apiVersion, 'gateway.networking.k8s.io/v1');
  assert.equal(r.kind, 'HTTPRoute');
  assert.equal(r.metadata.generateName, 'cm-acme-http-solver-');
  assert.equal(r.metadata.namespace, 'default');
  assert.deepEqual(r.metadata.ownerReferences, [{ apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', name: 'c', uid: 'ch-uid', controller: true, blockOwnerDeletion: true }]);
  assert.equal(r.metadata.labels?.team, 'web');
  assert.equal(r.metadata.labels?.[SOLVER_LABEL], 'true');
  assert.deepEqual(r.spec, {
    parentRefs,
    hostnames: ['a.example.test'],
    rules: [{
      matches: [{ path: { type: 'Exact', value: '/.well-known/acme-challenge/tok-1' } }],
      backendRefs: [{ group: '', kind: 'Service', name: 'cm-acme-http-solver-abcde', namespace: 'default', port: SOLVER_PORT, weight: 1 }],
    }],
  });
  // Gateway API hostnames are DNS names only
  assert.equal(solverHTTPRoute(challenge('192.0.2.7'), 's').spec.hostnames, undefined);
  // the solver's own labels win over the user's, or the clean-up would not find the route
  assert.equal(solverHTTPRoute(challenge('a.example.test', { parentRefs, labels: { [SOLVER_LABEL]: 'no' } }), 's').metadata.labels?.[SOLVER_LABEL], 'true');
});

test('httpRouteFits tolerates fields a Gateway API server defaults, not a changed Service, path or parentRef', () => {
  const c = challenge('a.example.test');
  const built = solverHTTPRoute(c, 'svc-1');
  assert.ok(httpRouteFits(built, c, 'svc-1'));
  const defaulted: HTTPRoute = structuredClone(built);
  Object.assign(defaulted.spec.parentRefs![0], { group: 'gateway.networking.k8s.io', kind: 'Gateway' });
  assert.ok(httpRouteFits(defaulted, c, 'svc-1'));
  assert.ok(!httpRouteFits(built, c, 'svc-2'));
  const otherParent = structuredClone(built);
  otherParent.spec.parentRefs = [{ name: 'other' }];
  assert.ok(!httpRouteFits(otherParent, c, 'svc-1'));
  const otherPath = structuredClone(built);
  otherPath.spec.rules![0].matches![0].path!.type = 'PathPrefix';
  assert.ok(!httpRouteFits(otherPath, c, 'svc-1'));
});

test('present makes a Pod, Service and HTTPRoute (no Ingress), idempotently; cleanUp removes them; without enableGatewayAPI it refuses', async () => {
  const store: Store = openSqliteStore({ path: ':memory:', clock: new FakeClock('2026-01-01T00:00:00Z') });
  try {
    const c = await store.create<Challenge>(ChallengeType, { ...challenge('a.example.test'), metadata: { name: 'c', namespace: 'default' } });
    const list = async (type: typeof PodType) => (await store.list(type, { namespace: 'default', labelSelector: `${SOLVER_LABEL}=true` })).items;

    await assert.rejects(kubernetesHTTP01Solver({ store, options: {} }, c).present(), /--enable-gateway-api/);
    assert.equal((await list(PodType)).length, 0, 'nothing made without the flag');

    const solver = kubernetesHTTP01Solver({ store, options: { enableGatewayAPI: true } }, c);
    await solver.present();
    await solver.present();
    const [pod] = (await list(PodType)) as Pod[];
    const [svc] = (await list(ServiceType)) as Service[];
    const routes = (await list(HTTPRouteType)) as HTTPRoute[];
    assert.equal(routes.length, 1);
    assert.equal((await list(IngressType)).length, 0);
    assert.equal(routes[0].spec.rules![0].backendRefs![0].name, svc.metadata.name);
    for (const [k, v] of Object.entries(svc.spec.selector!)) assert.equal(pod.metadata.labels![k], v);

    // a route edited away from the challenge is replaced by a fitting one
    const edited = structuredClone(routes[0]);
    edited.spec.rules![0].backendRefs![0].name = 'elsewhere';
    await store.update(HTTPRouteType, edited);
    await solver.present();
    const [replaced] = (await list(HTTPRouteType)) as HTTPRoute[];
    assert.equal(replaced.spec.rules![0].backendRefs![0].name, svc.metadata.name);

    await solver.cleanUp();
    for (const type of [PodType, ServiceType, HTTPRouteType]) assert.deepEqual(await list(type), [], type.plural);
  } finally {
    await store.close();
  }
});
