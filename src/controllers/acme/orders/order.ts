// The Order controller's decision (cert-manager's acmeorders/sync.go): what to do next with
// an Order given its status, its issuer's solvers and the Challenges it owns. Once the Order
// is final nothing here calls the ACME server again.
import net from 'node:net';
import { rfc3339 } from '../../../api/conditions.ts';
import type { ACMESolver, Challenge, ChallengeSpec, Order, OrderStatus } from '../../../api/types.ts';
import { ownerRefTo } from '../../../shared/ownership.ts';
import type { EventSpec } from '../../decision.ts';
import { computeName } from '../names.ts';
import { selectSolver } from '../../../shared/solver-selection.ts';
import { withHTTP01Overrides } from './http01-overrides.ts';
import { ANN_ACCOUNT, ANN_CREATING, ANN_FAILURE_CAUSE, ANN_RATE_LIMITED, isFailureCause, type FailureCause } from '../recovery.ts';
import { ANN_FINALIZED_AT, ANN_NEXT_LOOK, lookDueInMs, nextLookDelayMs, ORDER_PACE, preciseTime, waitedAtLook } from '../look-schedule.ts';

export const FAILURE_STATES = ['invalid', 'expired', 'errored'];
export const FINAL_STATES = ['valid', ...FAILURE_STATES];

/** A Challenge to create; the shell fills spec.key, which needs the account key. */
export type ChallengeDraft = Challenge & { spec: Omit<ChallengeSpec, 'key'> & { key: '' } };

export type OrderStep =
  | { kind: 'none' }
  /** the ACME server said 429 with Retry-After: nothing is sent before then (ANN_RATE_LIMITED) */
  | { kind: 'rate-limited'; untilMs: number }
  /** lost: an earlier process sent newOrder and died before it recorded the answer (write-ahead mark without URL) */
  | { kind: 'create'; lost: boolean }
  /** the issuer is registering (again): nothing is sent to the ACME server meanwhile; an issuer update wakes the Order */
  | { kind: 'wait-issuer' }
  | { kind: 'fetch-authorizations' }
  | { kind: 'delete-challenges'; names: string[] }
  | { kind: 'create-challenges'; challenges: ChallengeDraft[] }
  | { kind: 'no-solver'; event: EventSpec }
  | { kind: 'finalize' }
  /** the order is being processed and was looked at recently: look again then (ANN_NEXT_LOOK) */
  | { kind: 'look-later'; afterMs: number }
  /** one look at the order; a valid one's certificate is downloaded */
  | { kind: 'download' }
  | { kind: 'fail'; status: OrderStatus; event: EventSpec; cause?: FailureCause };

export interface OrderInput {
  order: Order;
  solvers: ACMESolver[];
  /** Challenges the Order controls */
  challenges: Challenge[];
  /** the issuer's readiness and current account URL (status.acme.uri); absent: not checked */
  issuer?: { ready: boolean; accountUrl?: string };
}

/** Identifiers of the ACME order: dnsNames ∪ ipAddresses ∪ commonName, sorted, without repeats. */
export function orderIdentifiers(order: Order): string[] {
  const ids = new Set([...(order.spec.dnsNames ?? []), ...(order.spec.ipAddresses ?? [])]);
  const cn = order.spec.commonName;
  if (cn && (net.isIP(cn) || cn.includes('.'))) ids.add(cn);
  return [...ids].sort();
}

/** The Challenges the Order needs: one per authorization that was not already valid. */
export function requiredChallenges(input: OrderInput): { challenges: ChallengeDraft[]; error?: string } {
  const order = input.order;
  const out: ChallengeDraft[] = [];
  const unsolvable: string[] = [];
  for (const authz of order.status?.authorizations ?? []) {
    if (authz.initialState === 'valid') continue;
    const identifier = authz.identifier ?? '';
    const picked = selectSolver(input.solvers, { identifier, wildcard: authz.wildcard, challenges: authz.challenges ?? [] }, order.metadata.labels ?? {});
    if (!picked) {
      unsolvable.push(authz.wildcard ? `*.${identifier}` : identifier);
      continue;
    }
    const spec = {
      url: picked.challenge.url,
      authorizationURL: authz.url,
      dnsName: identifier,
      ...(authz.wildcard ? { wildcard: true } : {}),
      type: picked.challenge.type === 'http-01' ? 'HTTP-01' as const : 'DNS-01' as const,
      token: picked.challenge.token,
      key: '' as const,
      solver: withHTTP01Overrides(picked.solver, order.metadata.annotations),
      issuerRef: order.spec.issuerRef,
    };
    // As cert-manager: the name hashes the spec before the key is known.
    const name = computeName(order.metadata.name!, spec);
    out.push({
      apiVersion: 'acme.cert-manager.io/v1',
      kind: 'Challenge',
      metadata: {
        name, namespace: order.metadata.namespace, labels: { ...(order.metadata.labels ?? {}) }, ownerReferences: [ownerRefTo(order)],
        // the account the challenge belongs to: under another one it can only fail (see recovery.ts)
        ...(order.metadata.annotations?.[ANN_ACCOUNT] ? { annotations: { [ANN_ACCOUNT]: order.metadata.annotations[ANN_ACCOUNT] } } : {}),
      },
      spec,
    });
  }
  if (unsolvable.length) {
    return { challenges: out, error: `no configured challenge solvers can be used for this challenge: ${unsolvable.join(', ')}` };
  }
  return { challenges: out };
}

/** Why an issuer's account changes under its Orders: said without blaming the CA, which may not be the cause. */
export const ACCOUNT_CHANGED_WHY = 'the issuer registered again, because the ACME server forgot or deactivated the account or because the issuer\'s account key Secret changed';

export function failedStatus(order: Order, state: 'invalid' | 'errored' | 'expired', reason: string, now: Date): OrderStatus {
  return { ...(order.status ?? {}), state, reason, failureTime: order.status?.failureTime ?? rfc3339(now) };
}

export function decideOrder(input: OrderInput, now: Date): OrderStep {
  const order = input.order;
  const st = order.status ?? {};
  const state = st.state ?? '';
  if (FAILURE_STATES.includes(state)) {
    // Final Challenges are kept for debugging, as cert-manager keeps them. One still in flight can
    // no longer help, holds its record, and holds back a replacement Order's Challenge for the
    // same name (the scheduler runs one per name and type): it goes, and its finalizer cleans up.
    const inFlight = input.challenges.filter((c) => !FINAL_STATES.includes(c.status?.state ?? ''));
    return inFlight.length ? { kind: 'delete-challenges', names: inFlight.map((c) => c.metadata.name!) } : { kind: 'none' };
  }
  const done = state === 'valid' && !!st.certificate;
  const limitedUntil = Date.parse(order.metadata.annotations?.[ANN_RATE_LIMITED] ?? '');
  if (!done && limitedUntil > now.getTime()) return { kind: 'rate-limited', untilMs: limitedUntil - now.getTime() };
  const createdUnder = order.metadata.annotations?.[ANN_ACCOUNT];
  if (!done && input.issuer?.ready && input.issuer.accountUrl && createdUnder && st.url && createdUnder !== input.issuer.accountUrl) {
    // RFC 8555 binds an order to its account: under the account the issuer has now, this one
    // can be neither read nor finished. Not the user's failure: the request retries with a new Order.
    const reason = `The ACME account this order was created under (${createdUnder}) is no longer the issuer's account (${input.issuer.accountUrl}): ${ACCOUNT_CHANGED_WHY}`;
    return { kind: 'fail', status: failedStatus(order, 'errored', reason, now), event: { type: 'Warning', reason: 'AccountChanged', message: `Order failed: ${reason}` }, cause: 'account-gone' };
  }
  if (!done && input.issuer && !input.issuer.ready) return { kind: 'wait-issuer' };
  if (!st.url) return { kind: 'create', lost: !!order.metadata.annotations?.[ANN_CREATING] };
  if (done) {
    // Kept for debugging only when the Order failed; a valid Order needs its Challenges no more.
    return input.challenges.length ? { kind: 'delete-challenges', names: input.challenges.map((c) => c.metadata.name!) } : { kind: 'none' };
  }
  if ((st.authorizations ?? []).some((a) => !a.identifier)) return { kind: 'fetch-authorizations' };
  if (state === 'valid' || state === 'processing') {
    const dueInMs = lookDueInMs(order.metadata.annotations, now);
    return dueInMs > 0 ? { kind: 'look-later', afterMs: dueInMs } : { kind: 'download' };
  }

  const required = requiredChallenges(input);
  if (required.error) {
    return { kind: 'no-solver', event: { type: 'Warning', reason: 'Solver', message: `Failed to determine a valid solver configuration for the set of domains on the Order: ${required.error}` } };
  }
  const have = new Map(input.challenges.map((c) => [c.metadata.name!, c]));
  const missing = required.challenges.filter((c) => !have.has(c.metadata.name!));
  if (missing.length) return { kind: 'create-challenges', challenges: missing };
  const wanted = new Set(required.challenges.map((c) => c.metadata.name!));
  const extra = input.challenges.filter((c) => !wanted.has(c.metadata.name!));
  if (extra.length) return { kind: 'delete-challenges', names: extra.map((c) => c.metadata.name!) };

  const mine = required.challenges.map((c) => have.get(c.metadata.name!)!);
  const failed = mine.filter((c) => FAILURE_STATES.includes(c.status?.state ?? ''));
  if (failed.length) {
    // An invalid authorization makes the ACME order invalid (RFC 8555 §7.1.6); no need to ask the server.
    const reason = failed.map((c) => `${c.spec.type} challenge for "${c.spec.wildcard ? '*.' : ''}${c.spec.dnsName}" is ${c.status?.state}: ${c.status?.reason ?? ''}`).join('; ');
    // Only when every failed Challenge failed for a cause that is not the user's is the Order's failure not theirs either.
    const causes = new Set(failed.map((c) => c.metadata.annotations?.[ANN_FAILURE_CAUSE]));
    const [only] = causes;
    const cause = causes.size === 1 && isFailureCause(only) ? only : undefined;
    return { kind: 'fail', status: failedStatus(order, 'invalid', reason, now), event: { type: 'Warning', reason: 'Failed', message: `Order failed: ${reason}` }, ...(cause ? { cause } : {}) };
  }
  // All authorizations valid means the order is ready (RFC 8555 §7.1.6): finalize without asking first.
  if (mine.every((c) => c.status?.state === 'valid')) return { kind: 'finalize' };
  return { kind: 'none' };
}

/** What one look at an order being waited on (after finalize) leads to. */
export type OrderLookStep =
  /** valid: download the certificate now */
  | { kind: 'download' }
  /** invalid or expired: the order's problem is the error */
  | { kind: 'failed' }
  /** final without a certificate (deactivated, revoked): nothing to download */
  | { kind: 'no-certificate' }
  /** not final yet: record when to look again (and since when it is waited on), requeue */
  | { kind: 'look-later'; afterMs: number; annotations: Record<string, string> };

/**
 * The decision after one look at the ACME order (or the answer to finalize): the wait before the
 * next look doubles with the time waited since the order was first found processing, bounded by
 * ORDER_PACE, and is never shorter than the server's Retry-After.
 */
export function decideOrderLook(order: Order, acmeStatus: string, now: Date, retryAfterMs?: number): OrderLookStep {
  if (acmeStatus === 'valid') return { kind: 'download' };
  if (acmeStatus === 'invalid' || acmeStatus === 'expired') return { kind: 'failed' };
  if (acmeStatus === 'deactivated' || acmeStatus === 'revoked') return { kind: 'no-certificate' };
  const since = order.metadata.annotations?.[ANN_FINALIZED_AT];
  const waited = since ? waitedAtLook(since, order.metadata.annotations, now) : 0;
  const afterMs = nextLookDelayMs(ORDER_PACE, waited, retryAfterMs);
  return {
    kind: 'look-later', afterMs,
    annotations: { ...(since ? {} : { [ANN_FINALIZED_AT]: preciseTime(now) }), [ANN_NEXT_LOOK]: preciseTime(new Date(now.getTime() + afterMs)) },
  };
}
