// Shells of the challenge scheduler and the Challenge controller ("challenges"). One pass runs
// consecutive steps on the object each write returns, so a Challenge goes from scheduled to
// accepted without waiting for the cache between steps; waits (self-check, authorization
// polling) are requeues, never sleeps.
import { Challenge, Order } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj, ChallengeStatus, Order as OrderObj, ACMEState } from '../../../api/types.ts';
import { isTransientProblem } from '../../../acme/errors.ts';
import { AcmeError, type AcmeAuthorization, type AcmeClient } from '../../../acme/client.ts';
import { getForUpdate, isConflict, isNotFound } from '../../../store/store.ts';
import { controllerOwnerKey } from '../../../runtime/controller.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { forController, componentNameOf } from '../../context.ts';
import { splitKey } from '../../../runtime/controller.ts';
import { lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { clientForIssuer, reportAccountGone } from '../issuer-account.ts';
import { reportServerUnreachable } from '../server-unreachable.ts';
import { acmeAction } from '../account/registry.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { afterCleanUp, afterFailedSelfCheck, afterPendingAuthorization, afterThrottledPresent, decideChallenge, FINALIZER, needsServing } from './challenge.ts';
import { ANN_ACCEPTED_AT, ANN_ACCEPTED_BY, ANN_ACCEPTING, AUTHORIZATION_PACE, preciseTime, SELF_CHECK_PACE } from '../look-schedule.ts';
import { randomUUID } from 'node:crypto';
import { scheduleChallenges } from './scheduler.ts';
import { WrittenVersions } from '../written-versions.ts';
import { solverFor, usesEmbeddedResponder } from './solvers.ts';
import { ProviderThrottledError } from '../solvers/dns01/secret-ref.ts';
import {
  accountGoneProblem, ANN_ACCOUNT, ANN_FAILURE_CAUSE, challengeAtCA, isUnreachable, notFoundAtCA, shouldReadAfterAcceptError, solverWasUnavailable, type FailureCause, RETRY_BOUNDS,
} from '../recovery.ts';
import { retryBackoff } from '../../../runtime/workqueue.ts';

const MANAGER = 'challenges';
/** writes of a finished cleanup that conflict are redone on the fresh object this many times in all */
const CLEANUP_RECORD_TRIES = 5;
const SCHEDULE_KEY = 'schedule';

export function challengeSchedulerController(shared: ControllerContext): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const challenges = ctx.informers.informerFor<ChallengeObj>(Challenge);
  return {
    name: 'challenges-scheduler',
    watch(enqueue) {
      challenges.onAdd(() => enqueue(SCHEDULE_KEY));
      challenges.onUpdate(() => enqueue(SCHEDULE_KEY));
      challenges.onDelete(() => enqueue(SCHEDULE_KEY));
    },
    async reconcile() {
      for (const c of scheduleChallenges(challenges.list())) {
        try {
          await ctx.store.updateStatus(Challenge, { ...c, status: { ...(c.status ?? {}), processing: true } }, { fieldManager: componentNameOf(MANAGER) });
        } catch (e) {
          // The cache was behind; the update that made it so re-runs this pass.
          if (isConflict(e) || isNotFound(e)) continue;
          throw e;
        }
        ctx.recorder.event(c, 'Normal', 'Started', 'Challenge scheduled for processing');
      }
    },
  };
}

function stateOf(s: string): ACMEState {
  if (s === 'deactivated' || s === 'revoked') return 'invalid';
  return (['valid', 'ready', 'pending', 'processing', 'invalid', 'expired'] as const).find((x) => x === s) ?? 'pending';
}

/** cert-manager's handling of ACME errors on a Challenge: malformed → expired, other 4xx → errored, else retried. */
function acmeFailure(e: unknown): ACMEState | undefined {
  if (!(e instanceof AcmeError) || e.status === 0 || e.status >= 500 || isTransientProblem(e)) return undefined;
  return e.shortType === 'malformed' ? 'expired' : 'errored';
}

/** The problem of a failed authorization, in the words waitForAuthorization would use. */
function authorizationProblem(authz: AcmeAuthorization): string {
  const failed = authz.challenges.find((c) => c.error) ?? authz.challenges.find((c) => c.status === 'invalid');
  const problem = failed?.error ?? { type: 'urn:ietf:params:acme:error:unauthorized', detail: 'no challenge error given' };
  return new AcmeError(problem, { context: `authorization for ${authz.identifier.value} is ${authz.status}${failed ? ` (${failed.type})` : ''}` }).message;
}

type StepResult = { next: ChallengeObj } | { done: { requeueAfterMs?: number } | undefined };

export function challengeController(shared: ControllerContext, rt: AcmeRuntime): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const challenges = ctx.informers.informerFor<ChallengeObj>(Challenge);
  const orders = ctx.informers.informerFor<OrderObj>(Order);
  const written = new WrittenVersions();
  /**
   * Names this controller instance on the Challenges it accepts (ANN_ACCEPTED_BY): one accepted by
   * an earlier process was validated while that process's HTTP-01 responder may have been down.
   */
  const instance = randomUUID();

  async function annotate(c: ChallengeObj, annotations: Record<string, string>): Promise<ChallengeObj> {
    return written.noteWrite(await ctx.store.update<ChallengeObj>(Challenge, {
      ...c, metadata: { ...c.metadata, annotations: { ...(c.metadata.annotations ?? {}), ...annotations } },
    }, { fieldManager: componentNameOf(MANAGER) })) as ChallengeObj;
  }

  async function setStatus(c: ChallengeObj, patch: Partial<ChallengeStatus>): Promise<ChallengeObj> {
    const status = { ...(c.status ?? {}), ...patch };
    if (JSON.stringify(status) === JSON.stringify(c.status ?? {})) return c;
    return written.noteWrite(await ctx.store.updateStatus<ChallengeObj>(Challenge, { ...c, status }, { fieldManager: componentNameOf(MANAGER) })) as ChallengeObj;
  }

  async function client(c: ChallengeObj) {
    const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
    if (!issuer) throw new Error(`issuer "${c.spec.issuerRef.name}" of Challenge ${c.metadata.namespace}/${c.metadata.name} not found`);
    return clientForIssuer(ctx, rt, issuer);
  }

  /** Marks the Challenge failed for a cause that is not the user's (annotation first: the Order reads both together). */
  async function failForCause(c: ChallengeObj, cause: FailureCause, patch: Partial<ChallengeStatus>): Promise<ChallengeObj> {
    let cur = c;
    if (c.metadata.annotations?.[ANN_FAILURE_CAUSE] !== cause) {
      cur = written.noteWrite(await ctx.store.update<ChallengeObj>(Challenge, {
        ...c, metadata: { ...c.metadata, annotations: { ...(c.metadata.annotations ?? {}), [ANN_FAILURE_CAUSE]: cause } },
      }, { fieldManager: componentNameOf(MANAGER) })) as ChallengeObj;
    }
    return setStatus(cur, patch);
  }

  /**
   * The issuer registered a new account since this Challenge's order was created (the client is
   * the truth here, not the issuer cache): the challenge belongs to the old account and can only fail.
   */
  async function accountMoved(c: ChallengeObj, acme: AcmeClient): Promise<StepResult | undefined> {
    const createdUnder = c.metadata.annotations?.[ANN_ACCOUNT];
    if (!createdUnder || !acme.accountUrl || createdUnder === acme.accountUrl) return undefined;
    const reason = `The ACME account this challenge belongs to (${createdUnder}) was replaced by ${acme.accountUrl}; the Order is retried under the new account`;
    return { next: await failForCause(c, 'account-gone', { state: 'errored', reason }) };
  }

  /**
   * The CA no longer has what this Challenge is about: the account (tell the Issuer, which registers
   * again) or the order (404 for the challenge or its authorization). Either way only a new Order can
   * go on, so the Challenge is given up for a cause that is not the user's.
   */
  async function lostAtCA(c: ChallengeObj, acme: AcmeClient, e: unknown): Promise<StepResult | undefined> {
    if (notFoundAtCA(e)) {
      const reason = `The ACME server no longer knows this challenge or its authorization (it restarted or purged the order); the Order is retried: ${(e as Error).message}`;
      ctx.recorder.event(c, 'Warning', 'NotFoundAtCA', reason);
      return { next: await failForCause(c, 'order-gone', { state: 'errored', reason }) };
    }
    const problem = accountGoneProblem(e);
    if (!problem) return undefined;
    const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
    if (issuer) await reportAccountGone(ctx, issuer, acme.accountUrl, problem);
    const reason = `The ACME account is gone at the server (${problem.reason}); the Order is retried under a new registration: ${problem.message}`;
    ctx.recorder.event(c, 'Warning', problem.reason, reason);
    return { next: await failForCause(c, 'account-gone', { state: 'errored', reason }) };
  }

  /** An embedded HTTP-01 token lost with an earlier process is served again before the CA is asked to look or is polled. */
  async function restoreSolver(c: ChallengeObj): Promise<void> {
    if (!usesEmbeddedResponder(ctx, c) || !c.status?.presented) return;
    await solverFor(ctx, rt, c).restore?.();
  }

  /**
   * Every token this process should be serving, given to a responder that has just started, been
   * taken over or been replaced: a Challenge the CA may validate must not wait for its next look
   * to be served again (issue 20).
   */
  async function serveAll(): Promise<void> {
    for (const c of challenges.list()) {
      if (!usesEmbeddedResponder(ctx, c) || !needsServing(c)) continue;
      try {
        await restoreSolver(c);
      } catch (e) {
        ctx.logger.warn?.({ challenge: `${c.metadata.namespace}/${c.metadata.name}`, err: (e as Error).message }, 'could not serve the HTTP-01 token again');
      }
    }
  }
  rt.onHTTP01Serving(serveAll);

  /**
   * The first pass over a Challenge whose token must be served starts (or takes over) the
   * responder, which then serves every such token (serveAll), though no look is due yet.
   */
  let takenOver = false;
  async function takeOverResponder(c: ChallengeObj): Promise<void> {
    if (takenOver || !usesEmbeddedResponder(ctx, c) || !needsServing(c)) return;
    try {
      await rt.http01();
      takenOver = true;
    } catch (e) {
      // the step that needs the token reports it; the next pass tries again
      ctx.logger.warn?.({ err: (e as Error).message }, 'could not start the HTTP-01 responder');
    }
  }

  /** The Challenge status for a failed authorization, with the cause when it was certsmith's own absence. */
  async function authorizationFailed(c: ChallengeObj, authz: AcmeAuthorization, state: ACMEState): Promise<StepResult> {
    const reason = `Error accepting authorization: ${authorizationProblem(authz)}`;
    const problem = authz.challenges.find((x) => x.url === c.spec.url)?.error ?? authz.challenges.find((x) => x.error)?.error;
    const acceptedByEarlierProcess = c.metadata.annotations?.[ANN_ACCEPTED_BY] !== instance;
    const acceptedAt = c.metadata.annotations?.[ANN_ACCEPTED_AT];
    const responderLostAt = rt.http01LostAt();
    if (solverWasUnavailable({ type: c.spec.type, embeddedResponder: usesEmbeddedResponder(ctx, c), acceptedByEarlierProcess, problem, acceptedAt, responderLostAt })) {
      const when = acceptedByEarlierProcess
        ? 'the challenge was accepted before certsmith restarted, so its HTTP-01 responder was not serving the token while the ACME server validated'
        : `the HTTP-01 responder's connection was lost or replaced at ${responderLostAt!.toISOString()}, after the challenge was accepted, so the token may not have been served while the ACME server validated`;
      const why = `${reason} (${when}; the Order is retried, at most ${RETRY_BOUNDS['solver-unavailable']} times per request, without counting as a failed issuance)`;
      ctx.recorder.event(c, 'Warning', 'SolverUnavailable', why);
      return { next: await failForCause(c, 'solver-unavailable', { state, reason: why }) };
    }
    ctx.recorder.event(c, 'Warning', 'Failed', reason);
    return { next: await setStatus(c, { state, reason }) };
  }

  /** Cleans up what was presented and removes the finalizer: the Challenge is final or being deleted. */
  async function cleanUp(c: ChallengeObj): Promise<StepResult> {
    if (c.status?.presented) {
      // The cache can lag behind the pass before this one: that pass cleaned up and removed the
      // last finalizer of a Challenge being deleted, and the deletion's watch event (which queued
      // this pass) is not in the cache yet. The store says whether CleanUp is still to be done;
      // asking the solver twice is what cert-manager's webhook contract does not expect.
      const now = await getForUpdate<ChallengeObj>(ctx.store, Challenge, c.metadata.namespace, c.metadata.name ?? '');
      if (!now || now.metadata.uid !== c.metadata.uid) return { done: undefined };
      c = now;
    }
    if (c.status?.presented) {
      try {
        await solverFor(ctx, rt, c).cleanUp();
      } catch (e) {
        const issuerGone = !lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
        if (!issuerGone) {
          ctx.recorder.event(c, 'Warning', 'CleanUpError', `Error cleaning up challenge: ${(e as Error).message}`);
          await setStatus(c, { reason: `Error cleaning up challenge: ${(e as Error).message}` });
          throw e;
        }
      }
    }
    // CleanUp is done. A write here that conflicts is retried on the fresh object, not left to a
    // new pass: that pass would still read presented=true and call CleanUp again (the Order
    // deletes a valid Challenge while its CleanUp is in flight, and our write then conflicts).
    let cur: ChallengeObj | undefined = c;
    for (let attempt = 1; cur; attempt++) {
      try {
        await recordCleanUp(cur);
        break;
      } catch (e) {
        if (isNotFound(e)) break;
        if (!isConflict(e) || attempt >= CLEANUP_RECORD_TRIES) throw e;
        const fresh: ChallengeObj | undefined = await getForUpdate<ChallengeObj>(ctx.store, Challenge, c.metadata.namespace, c.metadata.name ?? '');
        cur = fresh?.metadata.uid === c.metadata.uid ? fresh : undefined;
      }
    }
    return { done: undefined };
  }

  /** Writes what afterCleanUp says records the cleanup: presented=false, then the finalizer's removal. */
  async function recordCleanUp(c: ChallengeObj): Promise<void> {
    const { status, finalizers } = afterCleanUp(c);
    const cur = status ? await setStatus(c, status) : c;
    if (finalizers) await ctx.store.update(Challenge, { ...cur, metadata: { ...cur.metadata, finalizers } }, { fieldManager: componentNameOf(MANAGER) });
  }

  /** The challenge's state at the CA, from the Order's copy of its authorization, else asked once. */
  async function initialState(c: ChallengeObj): Promise<StepResult> {
    // The Order copied each authorization's state when it created the order: no need to ask again.
    const order = orders.get(c.metadata.namespace, controllerOwnerKey(c, Order)?.split('/')[1] ?? '');
    const known = order?.status?.authorizations?.find((a) => a.url === c.spec.authorizationURL)?.initialState;
    if (known) return { next: await setStatus(c, { state: known }) };
    const acme = await client(c);
    try {
      const authz = await acmeAction('get_authorization', () => acme.getAuthorization(c.spec.authorizationURL));
      const ch = authz.challenges.find((x) => x.url === c.spec.url);
      if (!ch) throw new Error(`authorization ${c.spec.authorizationURL} has no challenge ${c.spec.url}`);
      return { next: await setStatus(c, { state: stateOf(ch.status), ...(ch.error ? { reason: ch.error.detail ?? ch.error.type } : {}) }) };
    } catch (e) {
      const gone = await lostAtCA(c, acme, e);
      if (gone) return gone;
      const state = acmeFailure(e);
      if (!state) throw e;
      return { next: await setStatus(c, { state, reason: `Failed to retrieve authorization: ${(e as Error).message}` }) };
    }
  }

  async function present(c: ChallengeObj, now: Date): Promise<StepResult> {
    try {
      await solverFor(ctx, rt, c).present();
    } catch (e) {
      const reason = `Error presenting challenge: ${(e as Error).message}`;
      ctx.recorder.event(c, 'Warning', 'PresentError', reason);
      if (e instanceof ProviderThrottledError && e.retryAfterMs > 0) {
        const later = afterThrottledPresent(now, e.retryAfterMs);
        // The mark first: the status write wakes this Challenge, and the mark says not before then.
        await setStatus(await annotate(c, later.annotations), { reason });
        return { done: { requeueAfterMs: later.afterMs } };
      }
      await setStatus(c, { reason });
      throw e;
    }
    ctx.recorder.event(c, 'Normal', 'Presented', `Presented challenge using ${c.spec.type} challenge mechanism`);
    // With milliseconds: the self-check pace counts from here, and its first waits are 200 ms.
    return { next: await setStatus(c, { presented: true, presentedAt: preciseTime(now), reason: '' }) };
  }

  async function selfCheck(c: ChallengeObj, now: Date): Promise<StepResult> {
    const result = await solverFor(ctx, rt, c).check();
    if (result.ok) return accept(c);
    const later = afterFailedSelfCheck(c, now);
    // The mark first: the status write wakes this Challenge, and the mark says not before then.
    const marked = await annotate(c, later.annotations);
    await setStatus(marked, { reason: `Waiting for ${c.spec.type} challenge propagation: ${result.reason}` });
    return { done: { requeueAfterMs: later.afterMs } };
  }

  /** One look at the authorization the CA is validating; the next look's time goes into the annotations. */
  async function poll(c: ChallengeObj, now: Date): Promise<StepResult> {
    // After a restart the CA may not have looked yet: the token must be there when it does.
    await restoreSolver(c);
    const acme = await client(c);
    const moved = await accountMoved(c, acme);
    if (moved) return moved;
    let authz: AcmeAuthorization;
    let retryAfterMs: number | undefined;
    try {
      ({ authorization: authz, retryAfterMs } = await acmeAction('wait_authorization', () => acme.lookAtAuthorization(c.spec.authorizationURL)));
    } catch (e) {
      const gone = await lostAtCA(c, acme, e);
      if (gone) return gone;
      const state = acmeFailure(e);
      if (!state) throw e;
      return { next: await setStatus(c, { state, reason: `Error accepting authorization: ${(e as Error).message}` }) };
    }
    if (authz.status === 'valid') return verified(c);
    if (authz.status !== 'pending') return authorizationFailed(c, authz, stateOf(authz.status));
    const later = afterPendingAuthorization(c, now, retryAfterMs);
    if (later.kind === 'give-up') return { next: await setStatus(c, { state: 'errored', reason: later.reason }) };
    await annotate(c, later.annotations);
    return { done: { requeueAfterMs: later.afterMs } };
  }

  /** Runs the step decideChallenge picks; returns the object to continue with, or a result that ends the pass. */
  async function step(c: ChallengeObj): Promise<StepResult> {
    const now = ctx.clock.now();
    const decision = decideChallenge(c, now);
    switch (decision.kind) {
      case 'none':
        return { done: undefined };
      case 'look-later':
        return { done: { requeueAfterMs: decision.afterMs } };
      case 'cleanup':
        return cleanUp(c);
      case 'add-finalizer':
        return { next: written.noteWrite(await ctx.store.update<ChallengeObj>(Challenge, { ...c, metadata: { ...c.metadata, finalizers: [...(c.metadata.finalizers ?? []), FINALIZER] } }, { fieldManager: componentNameOf(MANAGER) })) as ChallengeObj };
      case 'initial-state':
        return initialState(c);
      case 'present':
        return present(c, now);
      case 'self-check':
        return selfCheck(c, now);
      case 'wait':
        await setStatus(c, { reason: decision.reason });
        return { done: { requeueAfterMs: Math.min(decision.remainingMs, SELF_CHECK_PACE.maxMs) } };
      case 'accept':
        return accept(c);
      case 'poll':
        return poll(c, now);
    }
  }

  async function verified(c: ChallengeObj): Promise<StepResult> {
    ctx.recorder.event(c, 'Normal', 'DomainVerified', `Domain "${c.spec.dnsName}" verified with "${c.spec.type}" validation`);
    return { next: await setStatus(c, { state: 'valid', reason: 'Successfully authorized domain' }) };
  }

  /**
   * Polls from now on; acceptedHere says whether this process's own POST started the validation.
   * The marks go first: the status write wakes this Challenge, and they say when the first look is due.
   */
  async function startPolling(c: ChallengeObj, acceptedHere: boolean, reason: string, acceptedAt = ctx.clock.now()): Promise<StepResult> {
    const marked = await annotate(c, { [ANN_ACCEPTED_AT]: preciseTime(acceptedAt), [ANN_ACCEPTED_BY]: acceptedHere ? instance : 'an earlier process' });
    await setStatus(marked, { state: 'processing', reason });
    return { done: { requeueAfterMs: AUTHORIZATION_PACE.firstMs } };
  }

  /**
   * What the CA's authorization says, acted on: valid, accepted (then polled), failed; undefined
   * when the challenge is still pending there (never accepted). `why` is the Event's message for
   * a challenge the CA had already accepted.
   */
  async function fromCA(c: ChallengeObj, acme: AcmeClient, why: string): Promise<StepResult | undefined> {
    let authz: AcmeAuthorization | undefined;
    try {
      authz = await acmeAction('get_authorization', () => acme.getAuthorization(c.spec.authorizationURL));
    } catch (readError) {
      const goneOnRead = await lostAtCA(c, acme, readError);
      if (goneOnRead) return goneOnRead;
      if (!acmeFailure(readError)) throw readError;
      return undefined;
    }
    const at = challengeAtCA(authz, c.spec.url);
    if (at.kind === 'valid') return verified(c);
    if (at.kind === 'processing') {
      ctx.recorder.event(c, 'Normal', 'AlreadyAccepted', `The ACME server had already accepted this challenge (${why})`);
      return startPolling(c, false, 'Waiting for the ACME server to validate the challenge (accepted earlier)');
    }
    if (at.kind === 'failed') return authorizationFailed(c, authz, at.state);
    return undefined;
  }

  /**
   * How long after an accepting POST a CA may still show the challenge pending while it validates
   * (Pebble's VA sleeps up to 15 s): a restarted process waits this long from the mark before
   * it accepts again.
   */
  const ACCEPT_SETTLE_MS = 30_000;

  async function accept(c: ChallengeObj): Promise<StepResult> {
    // 'wait' (no self-check) reaches here without check() having served the token in this process.
    await restoreSolver(c);
    const acme = await client(c);
    const moved = await accountMoved(c, acme);
    if (moved) return moved;
    const marked = Date.parse(c.metadata.annotations?.[ANN_ACCEPTING] ?? '');
    if (Number.isFinite(marked)) {
      // a process was killed around its accepting POST: a second POST would start a second
      // validation (Pebble runs both; the second, after cleanup, invalidates a valid authorization)
      const known = await fromCA(c, acme, 'a process accepted it and was stopped before recording that');
      if (known) return known;
      // still pending there: never sent, or being validated (Pebble 2.4 shows a challenge
      // pending until its validation is done); the CA gets time to finish before a second POST
      const settleMs = marked + ACCEPT_SETTLE_MS - ctx.clock.now().getTime();
      if (settleMs > 0) {
        await setStatus(c, { reason: 'Waiting for the ACME server: this challenge may have been accepted before a restart' });
        return { done: { requeueAfterMs: Math.min(settleMs, AUTHORIZATION_PACE.maxMs) } };
      }
    } else {
      // write-ahead: the mark is stored before the POST leaves
      c = await annotate(c, { [ANN_ACCEPTING]: preciseTime(ctx.clock.now()) });
    }
    // From the moment the POST leaves, the CA may validate: a responder connection lost from then on counts.
    const postedAt = ctx.clock.now();
    try {
      await acmeAction('accept_challenge', () => acme.respondChallenge(c.spec.url));
    } catch (e) {
      const gone = await lostAtCA(c, acme, e);
      if (gone) return gone;
      if (shouldReadAfterAcceptError(e)) {
        // The CA refused to accept it again: read what it says before believing in a failure.
        const known = await fromCA(c, acme, `an earlier answer was lost: ${(e as Error).message}`);
        if (known) return known;
      }
      const state = acmeFailure(e);
      if (!state) throw e;
      return { next: await setStatus(c, { state, reason: `Error accepting challenge: ${(e as Error).message}` }) };
    }
    return startPolling(c, true, 'Waiting for the ACME server to validate the challenge', postedAt);
  }

  return {
    name: MANAGER,
    workers: 16,
    retry: retryBackoff.acme,
    watch(enqueue) {
      const key = (o: ChallengeObj) => enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      challenges.onAdd(key);
      challenges.onUpdate((_, n) => key(n));
      challenges.onDelete((o) => written.forget(o));
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      let c = challenges.get(namespace, name);
      if (c && written.isStale(c)) return undefined;
      if (c) await takeOverResponder(c);
      // Each step writes and hands back the fresh object; a handful of steps covers a whole pass.
      for (let i = 0; c && i < 10; i++) {
        let r: StepResult;
        try {
          r = await step(c);
        } catch (e) {
          // Otherwise only the log would say so (issue 20); the retry backoff bounds how often.
          if (isUnreachable(e)) {
            ctx.recorder.event(c, 'Warning', 'ACMEServerUnreachable', `Could not reach the ACME server; retrying with backoff: ${(e as Error).message}`);
            // and on the Issuer's Ready condition, which its controller clears once the server answers
            const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
            if (issuer) await reportServerUnreachable(ctx, issuer, e as Error);
          }
          throw e;
        }
        if ('done' in r) return r.done;
        c = r.next;
      }
      return undefined;
    },
  };
}
