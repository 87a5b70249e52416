// A Challenge this process accepted, whose validation failed with a 404 or a refused connection,
// is not the user's failure when this process's HTTP-01 responder connection was lost or
// replaced between the accept and the look (issue 20): the token may not have been served when
// the CA validated. It fails as solver-unavailable (the bounded retry that counts no issuance
// attempt). A loss before the accept changes nothing: the token was served again before the POST.
// The real runtime adopts a fake keeper, which drops the connection when the test says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Challenge, ClusterIssuer } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj } from '../../../api/types.ts';
import type { KubeObject } from '../../../api/meta.ts';
import type { AcmeAuthorization, AcmeClient } from '../../../acme/client.ts';
import { InformerFactory } from '../../../runtime/informer.ts';
import { openTestStore } from '../../../runtime/testing/test-store.ts';
import type { ControllerContext } from '../../context.ts';
import { createAcmeRuntime } from '../runtime.ts';
import { challengeController } from './controller.ts';
import { FINALIZER } from './challenge.ts';
import { ANN_FAILURE_CAUSE } from '../recovery.ts';
import { fixedClock, NOW } from '../../testing/fixtures.ts';
import { fakeKeeper } from '../solvers/testing/fake-keeper.ts';
import { freePort } from '../../../../test/rig/ports.ts';

async function until(what: string, fn: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(what);
}

const CHALLENGE_URL = 'https://ca.test/chall/1';

/** The CA's answer to every look: invalid, it got a 404 for the token. */
const notFound: AcmeAuthorization = {
  url: 'https://ca.test/authz/1', status: 'invalid', identifier: { type: 'dns', value: 'a.example.test' },
  challenges: [{
    type: 'http-01', url: CHALLENGE_URL, token: 'tok', status: 'invalid',
    error: { type: 'urn:ietf:params:acme:error:unauthorized', detail: 'Invalid response from http://a.example.test/.well-known/acme-challenge/tok: 404' },
  }],
};

async function rig() {
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const store = openTestStore();
  await store.create(ClusterIssuer, {
    apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'le' },
    spec: { acme: { server: 'https://ca.test/dir', privateKeySecretRef: { name: 'le-account' }, solvers: [{ http01: { ingress: {} } }] } },
  } as unknown as KubeObject);
  const created = await store.create<ChallengeObj>(Challenge, {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', finalizers: [FINALIZER] },
    spec: {
      url: CHALLENGE_URL, authorizationURL: 'https://ca.test/authz/1', dnsName: 'a.example.test', type: 'HTTP-01', token: 'tok', key: 'tok.thumb',
      solver: { http01: { ingress: {} }, waitInsteadOfSelfCheck: '0s' }, issuerRef: { name: 'le', kind: 'ClusterIssuer' },
    },
  } as ChallengeObj);
  // presented; no self-check: the next step accepts
  await store.updateStatus<ChallengeObj>(Challenge, { ...created, status: { processing: true, presented: true, presentedAt: NOW.toISOString(), state: 'pending' } });

  const clock = fixedClock();
  const events: string[] = [];
  const recorder = { event: (_o: unknown, _t: string, reason: string) => events.push(reason) };
  const infos: string[] = [];
  const informers = new InformerFactory(store);
  const ctx = {
    store, informers, clock, options: { acmeHTTP01Listen: `127.0.0.1:${port}` },
    recorder,
    recorderFor: () => recorder,
    logger: { info: (_o: unknown, msg: string) => infos.push(msg), warn() {}, error() {}, debug() {} },
  } as unknown as ControllerContext;
  const rt = createAcmeRuntime(ctx); // adopts the fake keeper on the control socket
  const acme = {
    accountUrl: undefined,
    respondChallenge: async () => ({ status: 'processing' }),
    lookAtAuthorization: async () => ({ authorization: notFound }),
    getAuthorization: async () => notFound,
  } as unknown as AcmeClient;
  rt.registry.forIssuer = () => acme;
  const controller = challengeController(ctx, rt);
  controller.watch(() => {});
  informers.informerFor(ClusterIssuer); // what lookupIssuer reads
  informers.start();
  await informers.waitForSync();

  const current = () => informers.informerFor<ChallengeObj>(Challenge).get('default', 'c')!;
  /** one pass on the cache's copy, once the cache holds what the last pass wrote */
  async function pass(): Promise<void> {
    await controller.reconcile('default/c');
    const stored = (await store.get<ChallengeObj>(Challenge, 'default', 'c'))!.metadata.resourceVersion;
    await until('the cache caught up', () => current().metadata.resourceVersion === stored);
  }
  /** the keeper closes our connection; the runtime replaces it (the keeper is still alive) */
  async function dropConnection(): Promise<void> {
    const n = keeper.conns.length;
    const replaced = () => infos.filter((m) => /connection replaced/.test(m)).length;
    const before = replaced();
    keeper.conns[n - 1].sock.destroy();
    // the runtime marks the replacement once the keeper acknowledged the tokens, a moment after the
    // keeper received them: the clock must not move before that, or the loss would date after it
    await until('the connection was replaced', () => keeper.conns.length > n && keeper.told(n).includes('present tok') && replaced() > before);
  }
  return {
    keeper, clock, events, rt, current, pass, dropConnection,
    async stop() {
      informers.stop();
      await rt.close();
      await keeper.die();
    },
  };
}

test('a 404 for a challenge accepted here, with the responder connection lost after the accept: solver-unavailable, not the user\'s failure', async () => {
  const r = await rig();
  try {
    await r.pass(); // accepts: the first pass takes the keeper over and serves the token
    assert.equal(r.current().status?.state, 'processing');
    assert.ok(r.keeper.told(0).includes('present tok'));
    r.clock.advance(20);
    await r.dropConnection();
    r.clock.advance(100);
    await r.pass(); // the look: the CA got a 404
    const c = r.current();
    assert.equal(c.status?.state, 'invalid');
    assert.equal(c.metadata.annotations?.[ANN_FAILURE_CAUSE], 'solver-unavailable');
    assert.ok(r.events.includes('SolverUnavailable'), r.events.join(', '));
    assert.match(c.status?.reason ?? '', /responder/);
  } finally {
    await r.stop();
  }
});

test('a 404 for a challenge accepted here, with the responder connection lost and replaced before the accept: the user\'s failure as before', async () => {
  const r = await rig();
  try {
    await r.rt.http01();
    await r.dropConnection();
    r.clock.advance(20);
    await r.pass(); // accepts after the replacement: the token was given to the new connection first
    assert.equal(r.current().status?.state, 'processing');
    r.clock.advance(100);
    await r.pass();
    const c = r.current();
    assert.equal(c.status?.state, 'invalid');
    assert.equal(c.metadata.annotations?.[ANN_FAILURE_CAUSE], undefined);
    assert.ok(r.events.includes('Failed') && !r.events.includes('SolverUnavailable'), r.events.join(', '));
  } finally {
    await r.stop();
  }
});
