// A challenge is accepted once (RFC 8555 §7.5.1), also across a kill -9 between the accepting
// POST and the write that records it: the mark is written first, and a process that finds it
// reads the CA's view before anything else. Pebble validates a challenge POSTed twice twice; the
// second validation, after the first made the authorization valid and certsmith cleaned the
// record up, made it invalid, and the certificate went into an hour of backoff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Challenge, ClusterIssuer } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj } from '../../../api/types.ts';
import type { KubeObject } from '../../../api/meta.ts';
import type { AcmeAuthorization, AcmeClient } from '../../../acme/client.ts';
import { InformerFactory } from '../../../runtime/informer.ts';
import { openTestStore } from '../../../runtime/testing/test-store.ts';
import type { ControllerContext } from '../../context.ts';
import { ACMELookAnnotation } from '../../../api/annotations.ts';
import { createAcmeRuntime } from '../runtime.ts';
import { challengeController } from './controller.ts';
import { FINALIZER } from './challenge.ts';
import { fixedClock, NOW } from '../../testing/fixtures.ts';
import { fakeKeeper } from '../solvers/testing/fake-keeper.ts';
import { freePort } from '../../../../test/rig/ports.ts';

const CHALLENGE_URL = 'https://ca.test/chall/1';
const authz = (challenge: 'pending' | 'processing' | 'valid', status: 'pending' | 'valid' = 'pending'): AcmeAuthorization => ({
  url: 'https://ca.test/authz/1', status, identifier: { type: 'dns', value: 'a.example.test' },
  challenges: [{ type: 'http-01', url: CHALLENGE_URL, token: 'tok', status: challenge }],
});

async function until(what: string, fn: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(what);
}

/** A presented HTTP-01 Challenge (no self-check: the next step accepts), with `annotations`, and a CA whose authorization says `atCA`. */
async function rig(annotations: Record<string, string>, ca: AcmeAuthorization) {
  let atCA = ca;
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const store = openTestStore();
  await store.create(ClusterIssuer, {
    apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'le' },
    spec: { acme: { server: 'https://ca.test/dir', privateKeySecretRef: { name: 'le-account' }, solvers: [{ http01: { ingress: {} } }] } },
  } as unknown as KubeObject);
  const created = await store.create<ChallengeObj>(Challenge, {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', finalizers: [FINALIZER], annotations },
    spec: {
      url: CHALLENGE_URL, authorizationURL: 'https://ca.test/authz/1', dnsName: 'a.example.test', type: 'HTTP-01', token: 'tok', key: 'tok.thumb',
      solver: { http01: { ingress: {} }, waitInsteadOfSelfCheck: '0s' }, issuerRef: { name: 'le', kind: 'ClusterIssuer' },
    },
  } as ChallengeObj);
  await store.updateStatus<ChallengeObj>(Challenge, { ...created, status: { processing: true, presented: true, presentedAt: NOW.toISOString(), state: 'pending' } });

  const clock = fixedClock();
  const events: string[] = [];
  const recorder = { event: (_o: unknown, _t: string, reason: string) => events.push(reason) };
  const informers = new InformerFactory(store);
  const ctx = {
    store, informers, clock, options: { acmeHTTP01Listen: `127.0.0.1:${port}` }, recorder, recorderFor: () => recorder,
    logger: { info() {}, warn() {}, error() {}, debug() {} },
  } as unknown as ControllerContext;
  const rt = createAcmeRuntime(ctx);
  /** what the Challenge carried in the store when each accepting POST left */
  const posts: (Record<string, string> | undefined)[] = [];
  const acme = {
    accountUrl: undefined,
    respondChallenge: async () => {
      posts.push((await store.get<ChallengeObj>(Challenge, 'default', 'c'))!.metadata.annotations);
      return { status: 'processing' };
    },
    lookAtAuthorization: async () => ({ authorization: atCA }),
    getAuthorization: async () => atCA,
  } as unknown as AcmeClient;
  rt.registry.forIssuer = () => acme;
  const controller = challengeController(ctx, rt);
  controller.watch(() => {});
  informers.informerFor(ClusterIssuer);
  informers.start();
  await informers.waitForSync();
  const current = () => informers.informerFor<ChallengeObj>(Challenge).get('default', 'c')!;
  return {
    posts, events, current, clock,
    setCA(next: AcmeAuthorization) { atCA = next; },
    async pass() {
      await controller.reconcile('default/c');
      const stored = (await store.get<ChallengeObj>(Challenge, 'default', 'c'))!.metadata.resourceVersion;
      await until('the cache caught up', () => current().metadata.resourceVersion === stored);
    },
    async stop() {
      informers.stop();
      await rt.close();
      await keeper.die();
    },
  };
}

test('the accepting POST leaves only after the Challenge records that it is about to (write-ahead), and is sent once', async () => {
  const r = await rig({}, authz('processing'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 1);
    assert.ok(r.posts[0]?.[ACMELookAnnotation.acceptingSince], `the mark was stored before the POST: ${JSON.stringify(r.posts[0])}`);
    assert.equal(r.current().status?.state, 'processing');
  } finally {
    await r.stop();
  }
});

test('killed between the POST and its record: the restarted process reads the CA, sees the challenge accepted and polls it, with no second POST', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('processing'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 0, 'not accepted a second time');
    assert.equal(r.current().status?.state, 'processing');
    assert.ok(r.events.includes('AlreadyAccepted'), r.events.join(', '));
  } finally {
    await r.stop();
  }
});

test('killed between the POST and its record, the CA already done: valid at once, no second POST', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('valid', 'valid'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 0);
    assert.equal(r.current().status?.state, 'valid');
  } finally {
    await r.stop();
  }
});

test('a mark, and the CA still says pending: it may be validating the POST sent before the restart (Pebble 2.4 shows pending until done), so no second POST until 30 s after the mark; then the CA\'s answer decides', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('pending'));
  try {
    r.clock.advance(4_000);
    await r.pass();
    assert.equal(r.posts.length, 0, '4 s after the mark: not accepted again');
    // the CA finished the first validation meanwhile
    r.setCA(authz('valid', 'valid'));
    r.clock.advance(10_000);
    await r.pass();
    assert.equal(r.posts.length, 0);
    assert.equal(r.current().status?.state, 'valid');
  } finally {
    await r.stop();
  }
});

test('killed after the mark but before the POST left: 30 s after the mark, still pending at the CA, it is accepted, once', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('pending'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 0);
    r.clock.advance(31_000);
    await r.pass();
    assert.equal(r.posts.length, 1);
    assert.equal(r.current().status?.state, 'processing');
  } finally {
    await r.stop();
  }
});
