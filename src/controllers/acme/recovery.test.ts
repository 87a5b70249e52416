// Table tests for issue 20's decisions: what a refused challenge POST, a lost account, a
// validation against a dead responder and an interrupted newOrder turn into. No I/O, fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AcmeError, type AcmeAuthorization, type AcmeStatus } from '../../acme/client.ts';
import type { Challenge, Order } from '../../api/types.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import {
  accountGoneProblem, ANN_ACCOUNT, ANN_CREATING, ANN_FAILURE_CAUSE, ANN_RETRY, challengeAtCA, invalidatedDespiteValidAuthorizations, isUnreachable, notFoundAtCA,
  RETRY_BOUNDS, shouldReadAfterAcceptError, solverWasUnavailable,
} from './recovery.ts';
import { decideOrder } from './orders/order.ts';
import { accountGoneStatus } from './account/account.ts';
import { decideOrderRequest, retryableFailure, retryOf } from './requests/order-request.ts';
import { semaphore } from './orders/controller.ts';
import { createCSR } from '../../pki/csr.ts';
import { generatePrivateKey } from '../../pki/keys.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const P = 'urn:ietf:params:acme:error:';
const acmeErr = (type: string, detail: string, status = 400) => new AcmeError({ type: `${P}${type}`, detail, status });

function authz(status: AcmeAuthorization['status'], ch: Partial<AcmeAuthorization['challenges'][number]> = {}): AcmeAuthorization {
  return {
    url: 'https://ca/authz/1', status, identifier: { type: 'dns', value: 'a.example.test' },
    challenges: [{ type: 'http-01', url: 'https://ca/chal/1', token: 't', status: 'pending', ...ch }],
  };
}

test('a refused challenge POST is read, not believed: only 4xx that are not a lost account or a rate limit', () => {
  const rows: [unknown, boolean][] = [
    [acmeErr('malformed', 'Cannot update challenge with status valid, only status pending'), true],
    [acmeErr('malformed', 'Cannot update challenge with status processing, only status pending'), true],
    [acmeErr('unauthorized', 'something else'), true],
    [acmeErr('rateLimited', 'slow down', 429), false],
    [acmeErr('accountDoesNotExist', 'unknown account'), false],
    [acmeErr('serverInternal', 'boom', 500), false],
    [new Error('POST https://ca/chal/1: socket hang up'), false],
  ];
  for (const [e, want] of rows) assert.equal(shouldReadAfterAcceptError(e), want, String(e));
});

test('the CA\'s authorization says what a challenge is', () => {
  const url = 'https://ca/chal/1';
  assert.deepEqual(challengeAtCA(authz('valid', { status: 'valid' }), url), { kind: 'valid' });
  assert.deepEqual(challengeAtCA(authz('pending', { status: 'processing' }), url), { kind: 'processing' });
  assert.deepEqual(challengeAtCA(authz('pending', { status: 'valid' }), url), { kind: 'processing' });
  assert.deepEqual(challengeAtCA(authz('pending'), url), { kind: 'pending' });
  const problem = { type: `${P}connection`, detail: 'Connection refused' };
  assert.deepEqual(challengeAtCA(authz('invalid', { status: 'invalid', error: problem }), url), { kind: 'failed', state: 'invalid', problem });
  assert.equal(challengeAtCA(authz('expired'), url).kind, 'failed');
  assert.equal(challengeAtCA(authz('deactivated'), url).kind, 'failed');
});

test('a lost account is recognised by accountDoesNotExist or an unauthorized about a deactivated account', () => {
  assert.equal(accountGoneProblem(acmeErr('accountDoesNotExist', 'Account "x" not found'))?.reason, 'AccountDoesNotExist');
  assert.equal(accountGoneProblem(acmeErr('unauthorized', 'Account has status "deactivated"', 403))?.reason, 'AccountDeactivated');
  assert.equal(accountGoneProblem(acmeErr('unauthorized', 'The key authorization file did not match', 403)), undefined);
  assert.equal(accountGoneProblem(new Error('x')), undefined);
});

test('a 404 for a URL the CA handed out means the CA lost it; a lost account is not that', () => {
  assert.equal(notFoundAtCA(new AcmeError({ type: 'about:blank', detail: '', status: 404 })), true, "Pebble's answer for an order it does not know");
  assert.equal(notFoundAtCA(acmeErr('malformed', 'No order found', 404)), true);
  assert.equal(notFoundAtCA(acmeErr('accountDoesNotExist', 'Account not found', 404)), false, 'the account, not the order: the Issuer registers again');
  assert.equal(notFoundAtCA(acmeErr('malformed', 'Cannot update challenge with status valid', 400)), false);
  assert.equal(notFoundAtCA(new Error('404')), false);
});

test('unreachable means no answer at all, never an answer the server gave', () => {
  assert.equal(isUnreachable(new Error('POST https://127.0.0.1:1/dir: connect ECONNREFUSED 127.0.0.1:1', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) })), true);
  assert.equal(isUnreachable(new Error('POST https://ca/x: socket hang up')), true);
  assert.equal(isUnreachable(acmeErr('serverInternal', 'x', 500)), false);
  assert.equal(isUnreachable(new Error('issuer "x" not found')), false);
});

test('a failed HTTP-01 validation is ours only when an earlier process accepted it and the CA could not get the token', () => {
  const refused = { type: `${P}connection`, detail: '127.0.0.1: Fetching http://a.example.test:5002/.well-known/acme-challenge/t: Connection refused' };
  const notFound = { type: `${P}unauthorized`, detail: 'Non-200 status code from HTTP: http://a/.well-known/acme-challenge/t returned 404' };
  const mismatch = { type: `${P}unauthorized`, detail: 'The key authorization file from the server did not match this challenge' };
  const base = { type: 'HTTP-01', embeddedResponder: true, acceptedByEarlierProcess: true };
  assert.equal(solverWasUnavailable({ ...base, problem: refused }), true);
  assert.equal(solverWasUnavailable({ ...base, problem: notFound }), true);
  assert.equal(solverWasUnavailable({ ...base, problem: mismatch }), false, 'a wrong answer is not an absent one');
  assert.equal(solverWasUnavailable({ ...base, acceptedByEarlierProcess: false, problem: refused }), false, 'our responder was up the whole time');
  assert.equal(solverWasUnavailable({ ...base, embeddedResponder: false, problem: refused }), false, 'solver pods outlive us');
  assert.equal(solverWasUnavailable({ ...base, type: 'DNS-01', problem: refused }), false);
  assert.equal(solverWasUnavailable({ ...base }), false);
});

test('a failed HTTP-01 validation of a challenge accepted here is ours when the responder connection was lost or replaced after the accept', () => {
  const notFound = { type: `${P}unauthorized`, detail: 'Non-200 status code from HTTP: http://a/.well-known/acme-challenge/t returned 404' };
  const mismatch = { type: `${P}unauthorized`, detail: 'The key authorization file from the server did not match this challenge' };
  const base = { type: 'HTTP-01', embeddedResponder: true, acceptedByEarlierProcess: false, problem: notFound, acceptedAt: '2026-01-01T00:00:00.500Z' };
  const at = (ms: number) => new Date(Date.parse(base.acceptedAt) + ms);
  assert.equal(solverWasUnavailable({ ...base, responderLostAt: at(200) }), true, 'lost after the accept');
  assert.equal(solverWasUnavailable({ ...base, responderLostAt: at(0) }), true, 'lost in the same millisecond');
  assert.equal(solverWasUnavailable({ ...base, responderLostAt: at(-200) }), false, 'lost and replaced before the accept: the token was served when the CA looked');
  assert.equal(solverWasUnavailable({ ...base, responderLostAt: undefined }), false, 'never lost');
  assert.equal(solverWasUnavailable({ ...base, acceptedAt: undefined, responderLostAt: at(-200) }), true, 'accepted at an unknown time: counted as before the loss');
  assert.equal(solverWasUnavailable({ ...base, problem: mismatch, responderLostAt: at(200) }), false, 'a wrong answer is not an absent one');
  assert.equal(solverWasUnavailable({ ...base, embeddedResponder: false, responderLostAt: at(200) }), false);
});

test('the Issuer says the account is gone, unless it has already moved on to another account', () => {
  const issuer = {
    kind: 'ClusterIssuer', metadata: { name: 'p', generation: 1 }, spec: { acme: { server: 'https://ca/dir', privateKeySecretRef: { name: 'k' } } },
    status: { acme: { uri: 'https://ca/acct/1' }, conditions: [{ type: 'Ready', status: 'True' as const, reason: 'ACMEAccountRegistered', message: '' }] },
  };
  const problem = { reason: 'AccountDoesNotExist', message: 'accountDoesNotExist: unknown' };
  const st = accountGoneStatus(issuer as never, 'https://ca/acct/1', problem, NOW)!;
  const ready = st.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'AccountDoesNotExist');
  assert.equal(st.acme?.uri, '', 'cleared: the issuer controller registers again');
  assert.equal(accountGoneStatus(issuer as never, 'https://ca/acct/0', problem, NOW), undefined, 'a stale request must not undo a fresh registration');
});

// --- Order decisions -------------------------------------------------------------------------

function order(status: Order['status'] = {}, annotations: Record<string, string> = {}): Order {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Order',
    metadata: { name: 'o', namespace: 'default', uid: 'o-uid', annotations },
    spec: { request: '', issuerRef: { name: 'p', kind: 'ClusterIssuer' }, dnsNames: ['a.example.test'] },
    status,
  };
}

function challenge(state: string, annotations: Record<string, string> = {}): Challenge {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'c', namespace: 'default', annotations },
    spec: { url: 'u', authorizationURL: 'https://ca/authz/1', dnsName: 'a.example.test', type: 'HTTP-01', token: 't', key: 'k', solver: { http01: { ingress: {} } }, issuerRef: { name: 'p' } },
    status: { state: state as never, processing: true },
  };
}

const solvers = [{ http01: { ingress: {} } }];
const withAuthz = { url: 'https://ca/order/1', finalizeURL: 'https://ca/fin/1', state: 'pending' as const, authorizations: [{ url: 'https://ca/authz/1', identifier: 'a.example.test', initialState: 'pending' as const, challenges: [{ url: 'u', type: 'http-01', token: 't' }] }] };

test('an Order created under an account the issuer no longer has fails as account-gone, without asking the CA', () => {
  const o = order(withAuthz, { [ANN_ACCOUNT]: 'https://ca/acct/1' });
  const step = decideOrder({ order: o, solvers, challenges: [], issuer: { ready: true, accountUrl: 'https://ca/acct/2' } }, NOW);
  assert.equal(step.kind, 'fail');
  assert.equal(step.kind === 'fail' && step.cause, 'account-gone');
  assert.equal(step.kind === 'fail' && step.status.state, 'errored');
  // same account: carries on
  assert.notEqual(decideOrder({ order: o, solvers, challenges: [], issuer: { ready: true, accountUrl: 'https://ca/acct/1' } }, NOW).kind, 'fail');
  // a valid Order with its certificate has nothing left to ask
  const done = order({ ...withAuthz, state: 'valid', certificate: 'Y2VydA==' }, { [ANN_ACCOUNT]: 'https://ca/acct/1' });
  assert.equal(decideOrder({ order: done, solvers, challenges: [], issuer: { ready: true, accountUrl: 'https://ca/acct/2' } }, NOW).kind, 'none');
});

test('while the issuer registers again, Orders wait without a call to the CA', () => {
  assert.equal(decideOrder({ order: order(), solvers, challenges: [], issuer: { ready: false } }, NOW).kind, 'wait-issuer');
  assert.equal(decideOrder({ order: order(withAuthz), solvers, challenges: [challenge('processing')], issuer: { ready: false } }, NOW).kind, 'wait-issuer');
});

test('write-ahead: an Order marked creating without a URL knows its first newOrder was lost', () => {
  const fresh = decideOrder({ order: order(), solvers, challenges: [], issuer: { ready: true } }, NOW);
  assert.deepEqual(fresh, { kind: 'create', lost: false });
  const lost = decideOrder({ order: order({}, { [ANN_CREATING]: '2026-01-01T00:00:00Z' }), solvers, challenges: [], issuer: { ready: true } }, NOW);
  assert.deepEqual(lost, { kind: 'create', lost: true });
  // the URL recorded before the authorizations were fetched: they are fetched, no second order
  const urlOnly = order({ url: 'https://ca/order/1', finalizeURL: 'f', state: 'pending', authorizations: [{ url: 'https://ca/authz/1' }] }, { [ANN_CREATING]: 'x' });
  assert.equal(decideOrder({ order: urlOnly, solvers, challenges: [], issuer: { ready: true } }, NOW).kind, 'fetch-authorizations');
});

test('an Order fails with a cause only when every failed Challenge has that cause', () => {
  const cause = (cs: Challenge[]) => {
    const s = decideOrder({ order: order(withAuthz), solvers, challenges: cs }, NOW);
    assert.equal(s.kind, 'fail');
    return s.kind === 'fail' ? s.cause : 'n/a';
  };
  const mk = (state: string, a: Record<string, string> = {}) => {
    const c = challenge(state, a);
    // the name decideOrder expects for the only authorization
    c.metadata.name = (decideOrder({ order: order(withAuthz), solvers, challenges: [] }, NOW) as { challenges: Challenge[] }).challenges[0].metadata.name;
    return c;
  };
  assert.equal(cause([mk('invalid', { [ANN_FAILURE_CAUSE]: 'solver-unavailable' })]), 'solver-unavailable');
  assert.equal(cause([mk('errored', { [ANN_FAILURE_CAUSE]: 'account-gone' })]), 'account-gone');
  assert.equal(cause([mk('errored', { [ANN_FAILURE_CAUSE]: 'order-gone' })]), 'order-gone');
  assert.equal(cause([mk('errored', { [ANN_FAILURE_CAUSE]: 'toString' })]), undefined, 'only the causes recovery knows');
  assert.equal(cause([mk('invalid')]), undefined);
});

// --- CertificateRequest → Order retries ------------------------------------------------------

test('a request retries an Order that failed for a cause not the user\'s, bounded per cause, and never fails meanwhile', async () => {
  const csrPem = await createCSR({ dnsNames: ['a.example.test'] }, await generatePrivateKey({ algorithm: 'ECDSA' }));
  const cr: CertificateRequestObj = {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: { name: 'cr', namespace: 'default', uid: 'cr-uid' },
    spec: { request: Buffer.from(csrPem).toString('base64'), issuerRef: { name: 'p', kind: 'ClusterIssuer' } },
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'x', message: '' }] },
  } as CertificateRequestObj;
  const first = decideOrderRequest({ request: cr, issuer: {}, orders: [] }, NOW).createOrder!;
  assert.ok(first, 'the first Order');
  assert.equal(retryOf(first), 0);
  const failedAs = (o: Order, cause?: string): Order => ({
    ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, ...(cause ? { [ANN_FAILURE_CAUSE]: cause } : {}) } },
    status: { state: 'invalid', reason: 'x' },
  });
  // a cause of ours: a new Order, the request stays pending
  let orders = [failedAs(first, 'solver-unavailable')];
  for (let i = 1; i <= RETRY_BOUNDS['solver-unavailable']; i++) {
    const d = decideOrderRequest({ request: cr, issuer: {}, orders }, NOW);
    assert.ok(d.createOrder, `retry ${i}`);
    assert.equal(retryOf(d.createOrder), i);
    assert.notEqual(d.createOrder.metadata.name, orders.at(-1)!.metadata.name);
    assert.equal(d.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'Pending');
    assert.ok(d.events.some((e) => e.reason === 'OrderRetried' && /not count/.test(e.message)));
    orders = [...orders, failedAs(d.createOrder, 'solver-unavailable')];
  }
  // bound reached: the request fails as usual (one issuance attempt)
  const last = decideOrderRequest({ request: cr, issuer: {}, orders }, NOW);
  assert.equal(last.createOrder, undefined);
  assert.equal(last.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'Failed');
  // the user's failure: no retry at all
  const user = decideOrderRequest({ request: cr, issuer: {}, orders: [failedAs(first)] }, NOW);
  assert.equal(user.createOrder, undefined);
  assert.equal(user.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'Failed');
  // every cause is retried up to its own bound, then fails the request
  for (const cause of ['account-gone', 'order-gone'] as const) {
    let mine = [failedAs(first, cause)];
    for (let i = 1; i <= RETRY_BOUNDS[cause]; i++) mine = [...mine, failedAs(decideOrderRequest({ request: cr, issuer: {}, orders: mine }, NOW).createOrder!, cause)];
    assert.equal(mine.length, RETRY_BOUNDS[cause] + 1, cause);
    assert.equal(decideOrderRequest({ request: cr, issuer: {}, orders: mine }, NOW).status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'Failed', cause);
  }
  // the retry Order in progress is the one followed
  const retry1 = decideOrderRequest({ request: cr, issuer: {}, orders: [failedAs(first, 'account-gone')] }, NOW).createOrder!;
  const following = decideOrderRequest({ request: cr, issuer: {}, orders: [failedAs(first, 'account-gone'), { ...retry1, status: { state: 'pending' } }] }, NOW);
  assert.equal(following.createOrder, undefined);
  assert.match(following.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '', new RegExp(retry1.metadata.name!));
  assert.equal(retryableFailure({ ...retry1, status: { state: 'pending' } }, []), undefined);
  assert.equal(first.metadata.annotations?.[ANN_RETRY], undefined, 'the first Order keeps cert-manager\'s name and no retry mark');
});

test('at most N newOrder calls run at once', async () => {
  const slot = semaphore(2);
  let active = 0;
  let peak = 0;
  const releases: (() => void)[] = [];
  const runs = Array.from({ length: 5 }, () => slot(async () => {
    active++;
    peak = Math.max(peak, active);
    await new Promise<void>((r) => releases.push(r));
    active--;
  }));
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    releases.shift()?.();
  }
  while (releases.length) {
    await new Promise((r) => setImmediate(r));
    releases.shift()?.();
  }
  await Promise.all(runs);
  assert.equal(peak, 2);
});

test('an order the CA made invalid while every authorization of it is valid did not fail on validation: a bounded retry, not the user\'s failure', () => {
  const rows: [string, AcmeStatus, AcmeStatus[], boolean][] = [
    ['invalid, its one authorization valid (seen with Pebble when certsmith was killed during a batch)', 'invalid', ['valid'], true],
    ['invalid, all of several valid', 'invalid', ['valid', 'valid'], true],
    ['invalid because an authorization failed: the user\'s setup', 'invalid', ['valid', 'invalid'], false],
    ['invalid, an authorization still pending', 'invalid', ['pending'], false],
    ['invalid, an authorization expired or deactivated', 'invalid', ['deactivated'], false],
    ['invalid with no authorization to judge by', 'invalid', [], false],
    ['not invalid', 'ready', ['valid'], false],
  ];
  for (const [name, order, authzs, want] of rows) assert.equal(invalidatedDespiteValidAuthorizations(order, authzs), want, name);
  assert.equal(RETRY_BOUNDS['order-invalidated'], 2);
});
