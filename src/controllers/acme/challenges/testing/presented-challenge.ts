// A test rig for the Challenge controller's accept and poll steps: one presented HTTP-01
// Challenge (no self-check: its next step accepts) of a ClusterIssuer, the real ACME runtime
// adopting a fake keeper (so the connection drops when a test says), a fixed clock, and a fake
// ACME client the test builds from the store (to see what it holds when a request leaves).
import assert from 'node:assert/strict';
import { Challenge, ClusterIssuer } from '../../../../api/resources.ts';
import type { Challenge as ChallengeObj } from '../../../../api/types.ts';
import type { KubeObject } from '../../../../api/meta.ts';
import type { AcmeClient } from '../../../../acme/client.ts';
import { InformerFactory } from '../../../../runtime/informer.ts';
import { openTestStore } from '../../../../runtime/testing/test-store.ts';
import type { Store } from '../../../../store/store.ts';
import type { ControllerContext } from '../../../context.ts';
import { createAcmeRuntime } from '../../runtime.ts';
import { challengeController } from '../controller.ts';
import { FINALIZER } from '../challenge.ts';
import { fixedClock, NOW } from '../../../testing/fixtures.ts';
import { fakeKeeper } from '../../solvers/testing/fake-keeper.ts';
import { freePort } from '../../../../../test/rig/ports.ts';

export const CHALLENGE_URL = 'https://ca.test/chall/1';

export async function until(what: string, fn: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(what);
}

export async function presentedChallenge(o: { annotations?: Record<string, string>; acme: (store: Store) => AcmeClient }) {
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const store = openTestStore();
  await store.create(ClusterIssuer, {
    apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'le' },
    spec: { acme: { server: 'https://ca.test/dir', privateKeySecretRef: { name: 'le-account' }, solvers: [{ http01: { ingress: {} } }] } },
  } as unknown as KubeObject);
  const created = await store.create<ChallengeObj>(Challenge, {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', finalizers: [FINALIZER], ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      url: CHALLENGE_URL, authorizationURL: 'https://ca.test/authz/1', dnsName: 'a.example.test', type: 'HTTP-01', token: 'tok', key: 'tok.thumb',
      solver: { http01: { ingress: {} }, waitInsteadOfSelfCheck: '0s' }, issuerRef: { name: 'le', kind: 'ClusterIssuer' },
    },
  } as ChallengeObj);
  await store.updateStatus<ChallengeObj>(Challenge, { ...created, status: { processing: true, presented: true, presentedAt: NOW.toISOString(), state: 'pending' } });

  const clock = fixedClock();
  const events: string[] = [];
  const recorder = { event: (_o: unknown, _t: string, reason: string) => events.push(reason) };
  const infos: string[] = [];
  const informers = new InformerFactory(store);
  const ctx = {
    store, informers, clock, options: { acmeHTTP01Listen: `127.0.0.1:${port}` }, recorder, recorderFor: () => recorder,
    logger: { info: (_o: unknown, msg: string) => infos.push(msg), warn() {}, error() {}, debug() {} },
  } as unknown as ControllerContext;
  const rt = createAcmeRuntime(ctx); // adopts the fake keeper on the control socket
  const acme = o.acme(store);
  rt.registry.forIssuer = () => acme;
  const controller = challengeController(ctx, rt);
  controller.watch(() => {});
  informers.informerFor(ClusterIssuer); // what lookupIssuer reads
  informers.start();
  await informers.waitForSync();

  const current = () => informers.informerFor<ChallengeObj>(Challenge).get('default', 'c')!;
  return {
    keeper, clock, events, infos, rt, current,
    /** one pass on the cache's copy, once the cache holds what the last pass wrote */
    async pass(): Promise<void> {
      await controller.reconcile('default/c');
      const stored = (await store.get<ChallengeObj>(Challenge, 'default', 'c'))!.metadata.resourceVersion;
      await until('the cache caught up', () => current().metadata.resourceVersion === stored);
    },
    async stop(): Promise<void> {
      informers.stop();
      await rt.close();
      await keeper.die();
    },
  };
}
