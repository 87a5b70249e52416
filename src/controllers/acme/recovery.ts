// Recovery from what is nobody's fault but ours or the CA's (issue 20): a restart of certsmith
// at the wrong second, an answer lost on the way back, an ACME server that forgot the account.
// Each decision here reads only its inputs, so that the shells stay thin and the table tests
// can run them with a fake clock.
import type { AcmeAuthorization, AcmeProblem, AcmeStatus } from '../../acme/client.ts';
import { AcmeError, isRefusal } from '../../acme/errors.ts';
import type { ACMEState } from '../../api/types.ts';
import { ACMEOrderAnnotation } from '../../api/annotations.ts';

/**
 * Why an Order or Challenge failed when the failure is not the user's, written by the controller
 * that saw it (Challenge, then Order). The ACME request controller retries such an Order with a
 * new one without failing the CertificateRequest, so no issuance attempt is counted (seed 000).
 */
export const ANN_FAILURE_CAUSE = ACMEOrderAnnotation.failureCause;
/** the account URL an Order's ACME order was created under; another account cannot continue it */
export const ANN_ACCOUNT = ACMEOrderAnnotation.account;
/**
 * Write-ahead mark: set on the Order before newOrder is sent. An Order that carries it without
 * status.url was interrupted between sending newOrder and recording the answer.
 */
export const ANN_CREATING = ACMEOrderAnnotation.creatingSince;
/** RFC 8555 §6.6: the ACME server answered 429 rateLimited; nothing is sent for this Order before this time */
export const ANN_RATE_LIMITED = ACMEOrderAnnotation.rateLimitedUntil;
/** which retry of its CertificateRequest an Order is (absent: the first Order) */
export const ANN_RETRY = ACMEOrderAnnotation.retry;

export type FailureCause =
  /** the CA validated an HTTP-01 token while certsmith (and its responder) was down or restarting */
  | 'solver-unavailable'
  /** the CA no longer knows the account the order belongs to (restarted, deactivated, replaced) */
  | 'account-gone'
  /** the CA answers 404 for the order, one of its authorizations or challenges: it lost them (restarted, purged) */
  | 'order-gone'
  /**
   * the CA made the order invalid although every authorization of it is valid, so not on a failed
   * validation (CI met it with Pebble when certsmith was SIGKILLed during a batch, cause at the CA unknown)
   */
  | 'order-invalidated';

/**
 * How many Orders of one CertificateRequest each cause may cost before the request fails as usual.
 * Two for our own restarts (the "twice per revision"); three for a lost account, since a CA
 * that forgets accounts does so for every in-flight order at once and may do it again.
 */
export const RETRY_BOUNDS: Record<FailureCause, number> = { 'solver-unavailable': 2, 'account-gone': 3, 'order-gone': 2, 'order-invalidated': 2 };

/**
 * An order the CA calls invalid while each of its authorizations is valid: whatever made it so, it
 * was not the user's DNS or web server (a failed validation leaves an authorization invalid).
 */
export function invalidatedDespiteValidAuthorizations(order: AcmeStatus, authorizations: AcmeStatus[]): boolean {
  return order === 'invalid' && authorizations.length > 0 && authorizations.every((a) => a === 'valid');
}

export function isFailureCause(v: string | undefined): v is FailureCause {
  return v !== undefined && Object.hasOwn(RETRY_BOUNDS, v);
}

/** `accountDoesNotExist`, or `unauthorized` about a deactivated/unknown account: the account must be registered again. */
export function accountGoneProblem(e: unknown): { reason: 'AccountDoesNotExist' | 'AccountDeactivated'; message: string } | undefined {
  if (!(e instanceof AcmeError)) return undefined;
  if (e.shortType === 'accountDoesNotExist') return { reason: 'AccountDoesNotExist', message: e.message };
  if (e.shortType === 'unauthorized' && /account/i.test(e.detail) && /deactivated|does not exist|not found|unknown/i.test(e.detail)) {
    return { reason: /deactivated/i.test(e.detail) ? 'AccountDeactivated' : 'AccountDoesNotExist', message: e.message };
  }
  return undefined;
}

/**
 * A 404 for a URL the CA itself handed out (an order, authorization, challenge or certificate):
 * the CA no longer has it. Pebble answers so (about:blank, no detail) for an order it lost in a
 * restart when the request's account is one it knows (CI met it in the Pebble-restart test of
 * test/acme/restart.test.ts); a CA may also purge old orders. Only a new order can go on, never a
 * retry of the same URL.
 */
export function notFoundAtCA(e: unknown): boolean {
  return e instanceof AcmeError && e.status === 404 && !accountGoneProblem(e);
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ECONNABORTED']);

/**
 * The ACME server could not be asked at all (refused, reset, timed out, no answer): that says
 * nothing about the order, and is worth an Event since otherwise only the log would tell.
 */
export function isUnreachable(e: unknown): boolean {
  if (e instanceof AcmeError || !(e instanceof Error)) return false;
  const code = (e.cause as { code?: string } | undefined)?.code ?? (e as { code?: string }).code;
  if (code && NETWORK_CODES.has(code)) return true;
  return /socket hang up|timed out|ECONNREFUSED|ECONNRESET/.test(e.message) && /^(GET|POST|HEAD) https?:/.test(e.message);
}

/**
 * After a challenge POST was refused with a 4xx (other than a lost account or a rate limit), the
 * challenge may well be past `pending`: the answer to an earlier POST was lost, or a previous
 * process accepted it before it was killed. Pebble says "Cannot update challenge with status
 * valid, only status pending". Such a refusal means "read it", never "fail".
 */
export function shouldReadAfterAcceptError(e: unknown): boolean {
  return isRefusal(e) && !accountGoneProblem(e);
}

export type ChallengeAtCA =
  | { kind: 'valid' }
  /** accepted: the CA validates (or has validated the challenge and not yet the authorization) */
  | { kind: 'processing' }
  /** not accepted yet */
  | { kind: 'pending' }
  | { kind: 'failed'; state: ACMEState; problem?: AcmeProblem };

/** What the CA's authorization says about one of its challenges (RFC 8555 §7.1.6). */
export function challengeAtCA(authz: AcmeAuthorization, challengeUrl: string): ChallengeAtCA {
  const ch = authz.challenges.find((c) => c.url === challengeUrl);
  const problem = ch?.error ?? authz.challenges.find((c) => c.error)?.error;
  switch (authz.status) {
    case 'valid':
      return { kind: 'valid' };
    case 'pending':
      if (!ch || ch.status === 'pending') return { kind: 'pending' };
      if (ch.status === 'processing' || ch.status === 'valid') return { kind: 'processing' };
      return { kind: 'failed', state: 'invalid', problem };
    case 'expired':
      return { kind: 'failed', state: 'expired', problem };
    default:
      return { kind: 'failed', state: 'invalid', problem };
  }
}

/**
 * Whether a failed HTTP-01 validation was certsmith's own absence rather than the user's setup:
 * it is served by the embedded responder (which lives and dies with the process, or with its
 * keeper connection), the CA could not reach the token or got a 404 for it, which is what a
 * responder that was down or had not yet been given the token looks like, and either the
 * challenge was accepted by an earlier process (this one never sent the POST) or this process's
 * responder connection was lost or replaced at or after the accept (responderLostAt; an accept
 * of unknown time counts as before it). A user whose port 80 is really broken loses at most
 * RETRY_BOUNDS['solver-unavailable'] extra orders before the request fails as usual.
 */
export function solverWasUnavailable(opts: {
  type: string; embeddedResponder: boolean; acceptedByEarlierProcess: boolean; problem?: AcmeProblem;
  /** when the challenge was accepted (ANN_ACCEPTED_AT) */
  acceptedAt?: string;
  /** when this process's responder connection was last lost or replaced */
  responderLostAt?: Date;
}): boolean {
  if (opts.type !== 'HTTP-01' || !opts.embeddedResponder || !opts.problem) return false;
  if (!opts.acceptedByEarlierProcess && !responderLostSinceAccept(opts.acceptedAt, opts.responderLostAt)) return false;
  const text = `${opts.problem.type} ${opts.problem.detail ?? ''}`;
  return /:connection\b|connection refused|connection reset|ECONNREFUSED|ECONNRESET|\bEOF\b|\b404\b|timeout/i.test(text);
}

/** The responder connection was lost or replaced at or after the accept (an accept of unknown time counts as before). */
export function responderLostSinceAccept(acceptedAt: string | undefined, lostAt: Date | undefined): boolean {
  if (!lostAt) return false;
  const accepted = Date.parse(acceptedAt ?? '');
  return !Number.isFinite(accepted) || lostAt.getTime() >= accepted;
}
