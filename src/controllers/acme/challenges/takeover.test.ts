// After a restart with a fresh HTTP-01 responder (the old keeper gone, or the in-process one),
// the tokens of the Challenges already presented or accepted are served again as soon as the
// server takes the responder over, not one by one when each Challenge's next look comes due: the
// CA may validate in between (issue 20). The decision is pure (needsServing); the shell gives
// every such token to the responder whenever it starts, is taken over or is replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Challenge } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj, ChallengeStatus } from '../../../api/types.ts';
import { InformerFactory } from '../../../runtime/informer.ts';
import { openTestStore } from '../../../runtime/testing/test-store.ts';
import type { ControllerContext } from '../../context.ts';
import { createAcmeRuntime } from '../runtime.ts';
import { challengeController } from './controller.ts';
import { FINALIZER, needsServing } from './challenge.ts';
import { ANN_ACCEPTED_AT, ANN_ACCEPTED_BY, ANN_NEXT_LOOK } from '../look-schedule.ts';
import { fixedClock, NOW } from '../../testing/fixtures.ts';

const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

function challenge(name: string, status: ChallengeStatus, o: { annotations?: Record<string, string>; type?: 'HTTP-01' | 'DNS-01'; deleting?: boolean } = {}): ChallengeObj {
  const type = o.type ?? 'HTTP-01';
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: {
      name, namespace: 'default', uid: name, finalizers: [FINALIZER], annotations: o.annotations ?? {},
      ...(o.deleting ? { deletionTimestamp: at(-1) } : {}),
    },
    spec: {
      url: `https://ca.test/chall/${name}`, authorizationURL: `https://ca.test/authz/${name}`, dnsName: `${name}.example.test`, type, token: `tok-${name}`, key: `tok-${name}.thumb`,
      solver: (type === 'HTTP-01' ? { http01: { ingress: {} } } : { dns01: { rfc2136: { nameserver: '127.0.0.1' } } }) as never,
      issuerRef: { name: 'le', kind: 'ClusterIssuer' },
    },
    status,
  } as ChallengeObj;
}

const accepted: ChallengeStatus = { processing: true, presented: true, presentedAt: at(-5_000), state: 'processing' };
const checking: ChallengeStatus = { processing: true, presented: true, presentedAt: at(-1_000), state: 'pending' };
const fresh: ChallengeStatus = { processing: true, state: 'pending' };
const valid: ChallengeStatus = { processing: true, presented: true, presentedAt: at(-5_000), state: 'valid' };

test('needsServing: presented or accepted, and neither final nor being deleted', () => {
  const rows: [string, ChallengeObj, boolean][] = [
    ['accepted (the CA validates)', challenge('a', accepted), true],
    ['presented, being self-checked', challenge('a', checking), true],
    ['not presented yet (its present step serves it)', challenge('a', fresh), false],
    ['valid: final', challenge('a', valid), false],
    ['invalid: final', challenge('a', { ...accepted, state: 'invalid' }), false],
    ['being deleted', challenge('a', accepted, { deleting: true }), false],
    ['not scheduled', challenge('a', {}), false],
  ];
  for (const [name, c, want] of rows) assert.equal(needsServing(c), want, name);
});

/** the CA's GET: for the Challenge's name, which the responder checks */
function get(port: number, c: ChallengeObj): Promise<number> {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: `/.well-known/acme-challenge/${c.spec.token}`, headers: { host: c.spec.dnsName }, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

test('a restarted server re-presents every presented or accepted HTTP-01 token when it takes the responder over, before any look is due', async () => {
  const store = openTestStore();
  const objs = [
    challenge('accepted', accepted, { annotations: { [ANN_ACCEPTED_AT]: at(0), [ANN_ACCEPTED_BY]: 'an earlier process' } }),
    challenge('checking', checking, { annotations: { [ANN_NEXT_LOOK]: at(5_000) } }),
    challenge('fresh', fresh),
    challenge('valid', valid),
    challenge('dns', accepted, { type: 'DNS-01', annotations: { [ANN_ACCEPTED_AT]: at(0) } }),
  ];
  for (const o of objs) {
    const created = await store.create<ChallengeObj>(Challenge, { ...o, status: undefined });
    await store.updateStatus<ChallengeObj>(Challenge, { ...created, status: o.status });
  }
  const informers = new InformerFactory(store);
  const ctx = {
    store, informers, clock: fixedClock(), options: { acmeHTTP01Listen: '127.0.0.1:0' },
    recorder: { event() {} }, recorderFor: () => ({ event() {} }), logger: { info() {}, warn() {}, error() {}, debug() {} },
  } as unknown as ControllerContext;
  const rt = createAcmeRuntime(ctx); // port 0: the in-process responder, fresh as after a restart
  const realHttp01 = rt.http01.bind(rt);
  let starts = 0;
  rt.http01 = () => {
    starts++;
    return realHttp01();
  };
  const controller = challengeController(ctx, rt);
  controller.watch(() => {});
  informers.start();
  await informers.waitForSync();
  try {
    // the first pass after the restart: the accepted Challenge's first look is not due yet
    const r = await controller.reconcile('default/accepted');
    assert.equal((r as { requeueAfterMs?: number } | undefined)?.requeueAfterMs, 50, 'nothing asked of the CA yet');
    assert.ok(starts > 0, 'the pass took the responder over, though no look was due');
    const port = (await realHttp01()).port;
    const served = async () => Object.fromEntries(await Promise.all(objs.map(async (o) => [o.metadata.name, await get(port, o)] as const)));
    for (let i = 0; i < 50 && (await served()).checking !== 200; i++) await new Promise((res) => setTimeout(res, 10));
    assert.deepEqual(await served(), { accepted: 200, checking: 200, fresh: 404, valid: 404, dns: 404 });
  } finally {
    informers.stop();
    await rt.close();
  }
});
