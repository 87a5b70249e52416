import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../../../store/sqlite/index.ts';
import { FakeClock } from '../../../../runtime/clock.ts';
import { silentLogger } from '../../../../runtime/logger.ts';
import { Challenge as ChallengeType, IngressType, PodType, ServiceType } from '../../../../api/resources.ts';
import type { Challenge } from '../../../../api/types.ts';
import type { Store } from '../../../../store/store.ts';
import { startAcmeSolver } from '../../../../cli/acmesolver.ts';
import { kubernetesHTTP01Solver } from './solver.ts';
import { challengePath, SOLVER_LABEL, type Ingress, type Pod, type Service } from './resources.ts';

async function withStore(fn: (store: Store) => Promise<void>) {
  const store = openSqliteStore({ path: ':memory:', clock: new FakeClock('2026-01-01T00:00:00Z') });
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

async function storedChallenge(store: Store, name: string, dnsName: string, ingress: Record<string, unknown>): Promise<Challenge> {
  return store.create<Challenge>(ChallengeType, {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', metadata: { name, namespace: 'default' },
    spec: {
      url: `https://acme/chall/${name}`, authorizationURL: `https://acme/authz/${name}`, dnsName, wildcard: false, type: 'HTTP-01',
      token: `token-${name}`, key: `token-${name}.thumb`, solver: { http01: { ingress } },
      issuerRef: { name: 'pebble', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    },
  } as Challenge);
}

const all = async <T extends Pod | Service | Ingress>(store: Store, type: typeof PodType) =>
  (await store.list<T>(type, { namespace: 'default', labelSelector: `${SOLVER_LABEL}=true` })).items;

test('present is idempotent: one Pod, Service and Ingress per challenge, wired together; cleanUp removes them', async () => {
  await withStore(async (store) => {
    const c = await storedChallenge(store, 'a', 'a.example.test', { ingressClassName: 'nginx' });
    const other = await storedChallenge(store, 'b', 'b.example.test', {});
    const solver = kubernetesHTTP01Solver({ store, options: { acmeHTTP01SolverImage: 'img:1' } }, c);
    await solver.present();
    await solver.present();
    await kubernetesHTTP01Solver({ store, options: {} }, other).present();
    const pods = await all<Pod>(store, PodType);
    const svcs = await all<Service>(store, ServiceType);
    const ings = await all<Ingress>(store, IngressType);
    assert.equal(pods.length, 2);
    assert.equal(svcs.length, 2);
    assert.equal(ings.length, 2);
    const mine = <T extends Pod | Service | Ingress>(xs: T[]) => xs.filter((x) => x.metadata.ownerReferences?.[0].uid === c.metadata.uid);
    const [pod] = mine(pods);
    const [svc] = mine(svcs);
    const [ing] = mine(ings);
    assert.match(pod.metadata.name!, /^cm-acme-http-solver-[a-z0-9]{5}$/);
    assert.equal(pod.spec.containers[0].image, 'img:1');
    assert.equal(ing.spec.ingressClassName, 'nginx');
    assert.equal(ing.spec.rules![0].http!.paths[0].backend.service?.name, svc.metadata.name);
    for (const [k, v] of Object.entries(svc.spec.selector!)) assert.equal(pod.metadata.labels![k], v);

    // a Service replaced behind our back: the Ingress follows it
    await store.delete(ServiceType, 'default', svc.metadata.name!);
    await solver.present();
    const [svc2] = mine(await all<Service>(store, ServiceType));
    const [ing2] = mine(await all<Ingress>(store, IngressType));
    assert.notEqual(svc2.metadata.name, svc.metadata.name);
    assert.equal(ing2.spec.rules![0].http!.paths[0].backend.service?.name, svc2.metadata.name);
    assert.equal(mine(await all<Ingress>(store, IngressType)).length, 1);

    await solver.cleanUp();
    for (const type of [PodType, ServiceType, IngressType]) {
      const left = await all(store, type);
      assert.equal(left.length, 1, `${type.kind}: only the other challenge's remains`);
      assert.equal(left[0].metadata.ownerReferences?.[0].uid, other.metadata.uid);
    }
    await solver.cleanUp(); // nothing left: no error
  });
});

test('ingress.name: the named Ingress gets the path rule and loses it on cleanUp; a missing one is an error', async () => {
  await withStore(async (store) => {
    const original: Ingress = {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'default' },
      spec: { rules: [{ host: 'www.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } }] },
    };
    await store.create(IngressType, original);
    const c = await storedChallenge(store, 'w', 'www.example.test', { name: 'web' });
    const solver = kubernetesHTTP01Solver({ store, options: {} }, c);
    await solver.present();
    await solver.present();
    const web = (await store.get<Ingress>(IngressType, 'default', 'web'))!;
    const [svc] = await all<Service>(store, ServiceType);
    assert.deepEqual(web.spec.rules![0].http!.paths.map((p) => [p.path, p.backend.service?.name]), [[challengePath('token-w'), svc.metadata.name], ['/', 'app']]);
    assert.equal((await all(store, IngressType)).length, 0, 'no Ingress of its own');
    await solver.cleanUp();
    assert.deepEqual((await store.get<Ingress>(IngressType, 'default', 'web'))!.spec, original.spec);
    assert.equal((await all(store, PodType)).length, 0);

    const lost = kubernetesHTTP01Solver({ store, options: {} }, await storedChallenge(store, 'x', 'x.example.test', { name: 'absent' }));
    await assert.rejects(lost.present(), /ingress "default\/absent".*not found/);
  });
});

test('check presents again, then GETs the token from the self-check port', async () => {
  await withStore(async (store) => {
    const c = await storedChallenge(store, 'l', '127.0.0.1', {});
    const running = await startAcmeSolver({ host: '127.0.0.1', port: 0, domain: '127.0.0.1', token: c.spec.token, key: c.spec.key, logger: silentLogger });
    try {
      const solver = kubernetesHTTP01Solver({ store, options: { acmeHTTP01SelfCheckPort: running.port } }, c);
      assert.deepEqual(await solver.check(), { ok: true });
      assert.equal((await all(store, PodType)).length, 1, 'the check made sure the Pod exists');
      const wrong = kubernetesHTTP01Solver({ store, options: { acmeHTTP01SelfCheckPort: running.port } }, { ...c, spec: { ...c.spec, key: 'other' } });
      const r = await wrong.check();
      assert.equal(r.ok, false);
      assert.match(r.reason!, /does not match/);
    } finally {
      await running.close();
    }
  });
});
