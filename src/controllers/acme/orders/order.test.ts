// decideOrder as a table: the next step for an Order (cert-manager's acmeorders sync) from its
// status, its issuer, its solvers and the Challenges it owns; one row per step and reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOrder, type OrderInput, type OrderStep } from './order.ts';
import type { ACMESolver, Challenge, Order } from '../../../api/types.ts';
import { ANN_ACCOUNT, ANN_CREATING, ANN_FAILURE_CAUSE, ANN_RATE_LIMITED } from '../recovery.ts';
import { ANN_NEXT_LOOK } from '../look-schedule.ts';
import { NOW, b64 } from '../../testing/fixtures.ts';

interface Row {
  name: string;
  why: string;
  input: OrderInput;
  want: Partial<OrderStep> & { kind: OrderStep['kind'] };
  /** further checks on the step */
  check?: (s: OrderStep) => void;
}

const ACCOUNT = 'https://ca.test/acct/1';
const http01: ACMESolver = { http01: { ingress: { class: 'x' } } };
const dnsOnlyForOther: ACMESolver = { dns01: { rfc2136: { nameserver: '127.0.0.1' } }, selector: { dnsNames: ['other.example.test'] } };
const authz = (identifier: string | undefined, initialState = 'pending') => ({
  url: `https://ca.test/authz/${identifier ?? 'x'}`,
  ...(identifier !== undefined ? { identifier } : {}),
  initialState: initialState as never,
  challenges: [{ url: `https://ca.test/chall/${identifier ?? 'x'}`, type: 'http-01', token: `tok-${identifier ?? 'x'}` }],
});

function order(o: { state?: string; url?: boolean; certificate?: boolean; annotations?: Record<string, string>; authorizations?: ReturnType<typeof authz>[] } = {}): Order {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Order',
    metadata: { name: 'a-1-123', namespace: 'default', uid: 'order-uid', annotations: { [ANN_ACCOUNT]: ACCOUNT, ...o.annotations } },
    spec: { request: '', issuerRef: { name: 'le' }, dnsNames: ['a.example.test'] },
    status: {
      ...(o.url !== false ? { url: 'https://ca.test/order/1', finalizeURL: 'https://ca.test/order/1/finalize' } : {}),
      ...(o.state ? { state: o.state as never } : {}),
      authorizations: o.authorizations ?? [authz('a.example.test')],
      ...(o.certificate ? { certificate: b64('chain') } : {}),
    },
  };
}

test('decideOrder: one row per step', () => {
  const issuer = { ready: true, accountUrl: ACCOUNT };
  const input = (o: Order, rest: Partial<OrderInput> = {}): OrderInput => ({ order: o, solvers: [http01], challenges: [], issuer, ...rest });
  // the Challenge the pending Order needs, as decideOrder drafts it; rows give it a state
  const first = decideOrder(input(order({ state: 'pending' })), NOW);
  assert.equal(first.kind, 'create-challenges');
  const draft = (first as Extract<OrderStep, { kind: 'create-challenges' }>).challenges[0];
  const challenge = (state: string, cause?: string): Challenge => ({
    ...draft, spec: { ...draft.spec, key: 'k' },
    metadata: { ...draft.metadata, ...(cause ? { annotations: { ...draft.metadata.annotations, [ANN_FAILURE_CAUSE]: cause } } : {}) },
    status: { state: state as never, reason: state === 'invalid' ? 'connection refused' : '' },
  });
  const stray: Challenge = { ...challenge('pending'), metadata: { ...draft.metadata, name: 'stray' } };
  const twoNames = (c: Challenge[]) => input(order({ state: 'pending', authorizations: [authz('a.example.test'), authz('b.example.test')] }), { challenges: c });
  const both = decideOrder(twoNames([]), NOW) as Extract<OrderStep, { kind: 'create-challenges' }>;
  const withState = (c: Challenge, state: string, cause?: string): Challenge => ({
    ...c, spec: { ...c.spec, key: 'k' }, status: { state: state as never, reason: 'r' },
    metadata: { ...c.metadata, ...(cause ? { annotations: { [ANN_FAILURE_CAUSE]: cause } } : {}) },
  });
  const rateLimited = { [ANN_RATE_LIMITED]: '2026-06-01T00:10:00Z' };

  const rows: Row[] = [
    { name: 'failed Order', why: 'a failed Order is final: nothing is sent to the ACME server again', input: input(order({ state: 'invalid', annotations: rateLimited })), want: { kind: 'none' } },
    {
      name: 'failed Order with Challenges still in flight', why: 'they can no longer help it, and a replacement Order\'s Challenge for the same name waits while one is processing: deleted (their finalizer cleans up), the final ones kept',
      input: input(order({ state: 'errored' }), { challenges: [withState(both.challenges[0], 'pending'), withState(both.challenges[1], 'invalid'), { ...stray, status: {} }] }),
      want: { kind: 'delete-challenges', names: [both.challenges[0].metadata.name!, 'stray'] },
    },
    { name: 'failed Order, its Challenges final', why: 'kept for debugging, as cert-manager keeps them', input: input(order({ state: 'invalid' }), { challenges: [challenge('invalid'), withState(stray, 'valid')] }), want: { kind: 'none' } },
    { name: 'rate limited', why: 'after a 429 nothing is sent before Retry-After', input: input(order({ state: 'pending', annotations: rateLimited })), want: { kind: 'rate-limited', untilMs: 600_000 } },
    { name: 'rate limit mark in the past', why: 'the Order goes on once the time has passed', input: input(order({ url: false, annotations: { [ANN_RATE_LIMITED]: '2026-05-31T23:59:59Z' } })), want: { kind: 'create', lost: false } },
    {
      name: 'the issuer\'s account changed', why: 'RFC 8555 binds an order to its account: errored, cause account-gone (retried, not the user\'s failure)',
      input: input(order({ state: 'pending' }), { issuer: { ready: true, accountUrl: 'https://ca.test/acct/2' } }), want: { kind: 'fail', cause: 'account-gone' },
      check: (s) => {
        const f = s as Extract<OrderStep, { kind: 'fail' }>;
        assert.equal(f.status.state, 'errored');
        assert.equal(f.status.failureTime, '2026-06-01T00:00:00Z');
        assert.equal(f.event.reason, 'AccountChanged');
      },
    },
    { name: 'account changed before the Order was created', why: 'an Order without a URL was never bound: it is created under the new account', input: input(order({ url: false }), { issuer: { ready: true, accountUrl: 'https://ca.test/acct/2' } }), want: { kind: 'create', lost: false } },
    { name: 'issuer not ready', why: 'nothing is sent while the issuer registers; an issuer update wakes the Order', input: input(order({ state: 'pending' }), { issuer: { ready: false } }), want: { kind: 'wait-issuer' } },
    { name: 'no URL yet', why: 'newOrder is sent', input: input(order({ url: false })), want: { kind: 'create', lost: false } },
    { name: 'no URL but a creating mark', why: 'an earlier process sent newOrder and died before recording the answer', input: input(order({ url: false, annotations: { [ANN_CREATING]: '2026-05-31T23:00:00Z' } })), want: { kind: 'create', lost: true } },
    { name: 'valid with its certificate, Challenges left', why: 'a valid Order needs its Challenges no more', input: input(order({ state: 'valid', certificate: true }), { challenges: [challenge('valid')] }), want: { kind: 'delete-challenges', names: [draft.metadata.name!] } },
    { name: 'valid with its certificate, no Challenges', why: 'done: nothing to do', input: input(order({ state: 'valid', certificate: true })), want: { kind: 'none' } },
    { name: 'done, rate-limit mark and issuer not ready', why: 'a finished Order only cleans up; neither mark nor issuer holds that back', input: input(order({ state: 'valid', certificate: true, annotations: rateLimited }), { issuer: { ready: false }, challenges: [challenge('valid')] }), want: { kind: 'delete-challenges', names: [draft.metadata.name!] } },
    { name: 'authorizations not fetched', why: 'identifiers come from the ACME server first', input: input(order({ state: 'pending', authorizations: [authz(undefined)] })), want: { kind: 'fetch-authorizations' } },
    { name: 'processing', why: 'finalized, never looked at: one look now (download when valid)', input: input(order({ state: 'processing' })), want: { kind: 'download' } },
    { name: 'processing, looked at moments ago', why: 'the Order controller requeues instead of sleeping: look again at the recorded next-look time', input: input(order({ state: 'processing', annotations: { [ANN_NEXT_LOOK]: '2026-06-01T00:00:02.500Z' } })), want: { kind: 'look-later', afterMs: 2500 } },
    { name: 'processing, next look due', why: 'one look at the order once its time has come', input: input(order({ state: 'processing', annotations: { [ANN_NEXT_LOOK]: '2026-06-01T00:00:00.000Z' } })), want: { kind: 'download' } },
    { name: 'valid without certificate', why: 'download the chain', input: input(order({ state: 'valid' })), want: { kind: 'download' } },
    {
      name: 'no solver for a name', why: 'Warning Solver event naming the identifier; no Challenge created',
      input: input(order({ state: 'pending' }), { solvers: [dnsOnlyForOther] }), want: { kind: 'no-solver' },
      check: (s) => assert.match((s as Extract<OrderStep, { kind: 'no-solver' }>).event.message, /can be used for this challenge: a\.example\.test$/),
    },
    {
      name: 'Challenge missing', why: 'one Challenge per pending authorization, from the selected solver',
      input: input(order({ state: 'pending' })), want: { kind: 'create-challenges' },
      check: (s) => {
        const c = (s as Extract<OrderStep, { kind: 'create-challenges' }>).challenges;
        assert.deepEqual(c.map((x) => [x.spec.type, x.spec.dnsName, x.spec.token, x.spec.key, x.metadata.annotations?.[ANN_ACCOUNT]]), [['HTTP-01', 'a.example.test', 'tok-a.example.test', '', ACCOUNT]]);
        assert.equal(c[0].metadata.ownerReferences?.[0].uid, 'order-uid');
      },
    },
    { name: 'one of two Challenges missing', why: 'only the missing one is created', input: twoNames([withState(both.challenges[0], 'pending')]), want: { kind: 'create-challenges' }, check: (s) => assert.deepEqual((s as Extract<OrderStep, { kind: 'create-challenges' }>).challenges.map((c) => c.spec.dnsName), ['b.example.test']) },
    { name: 'authorization already valid', why: 'no Challenge for it: with nothing else to solve the Order is finalized', input: input(order({ state: 'ready', authorizations: [authz('a.example.test', 'valid')] })), want: { kind: 'finalize' } },
    { name: 'a Challenge the Order no longer needs', why: 'deleted', input: input(order({ state: 'pending' }), { challenges: [challenge('pending'), stray] }), want: { kind: 'delete-challenges', names: ['stray'] } },
    { name: 'Challenge pending', why: 'wait for the Challenge controller', input: input(order({ state: 'pending' }), { challenges: [challenge('pending')] }), want: { kind: 'none' } },
    {
      name: 'Challenge invalid', why: 'an invalid authorization makes the Order invalid (RFC 8555 7.1.6) without asking the server',
      input: input(order({ state: 'pending' }), { challenges: [challenge('invalid')] }), want: { kind: 'fail' },
      check: (s) => {
        const f = s as Extract<OrderStep, { kind: 'fail' }>;
        assert.equal(f.status.state, 'invalid');
        assert.equal(f.status.reason, 'HTTP-01 challenge for "a.example.test" is invalid: connection refused');
        assert.equal(f.cause, undefined, 'the user\'s failure');
      },
    },
    { name: 'Challenge invalid because certsmith was restarting', why: 'the Order\'s failure carries the cause, so the request retries', input: input(order({ state: 'pending' }), { challenges: [challenge('invalid', 'solver-unavailable')] }), want: { kind: 'fail', cause: 'solver-unavailable' } },
    {
      name: 'two Challenges invalid, one for the user\'s cause', why: 'only when every failed Challenge has a cause not the user\'s is the Order\'s failure not theirs',
      input: twoNames([withState(both.challenges[0], 'invalid', 'solver-unavailable'), withState(both.challenges[1], 'invalid')]), want: { kind: 'fail' },
      check: (s) => assert.equal((s as Extract<OrderStep, { kind: 'fail' }>).cause, undefined),
    },
    { name: 'one Challenge valid, one pending', why: 'finalize waits for every authorization', input: twoNames([withState(both.challenges[0], 'valid'), withState(both.challenges[1], 'pending')]), want: { kind: 'none' } },
    { name: 'all Challenges valid', why: 'all authorizations valid means ready: finalize without asking first', input: twoNames([withState(both.challenges[0], 'valid'), withState(both.challenges[1], 'valid')]), want: { kind: 'finalize' } },
  ];

  const failures: string[] = [];
  for (const r of rows) {
    const s = decideOrder(r.input, NOW);
    try {
      const shown = Object.fromEntries(Object.keys(r.want).map((k) => [k, (s as Record<string, unknown>)[k]]));
      assert.deepEqual(shown, r.want);
      r.check?.(s);
    } catch (e) {
      failures.push(`${r.name} (${r.why}): got ${s.kind}: ${(e as Error).message}`);
    }
  }
  assert.deepEqual(failures, []);
});
