// Shell of the Order controller ("orders"): performs the step decideOrder picks, with the
// issuer's ACME client, and writes the Order status once per pass.
import { Challenge, ClusterIssuer, Issuer, Order } from '../../../api/resources.ts';
import type { KubeObject } from '../../../api/meta.ts';
import type { ACMEIssuer, IssuerStatus, Challenge as ChallengeObj, Order as OrderObj, OrderStatus, ACMEState } from '../../../api/types.ts';
import { isRefusal, isTransientProblem } from '../../../acme/errors.ts';
import { AcmeError, failedOrderProblem, type AcmeClient, type AcmeOrder } from '../../../acme/client.ts';
import { rateLimitWaitMs } from '../../../acme/errors.ts';
import { isNotFound, StoreError } from '../../../store/store.ts';
import { controllerOwnerKey } from '../../../runtime/controller.ts';
import type { ControllerContext, ControllerSpec } from '../../context.ts';
import { record, forController, componentNameOf } from '../../context.ts';
import { splitKey } from '../../../runtime/controller.ts';
import { lookupIssuer } from '../../../shared/issuer-lookup.ts';
import { decodeBase64 } from '../../../shared/parse-memo.ts';
import { parseDuration } from '../../../api/duration.ts';
import { clientForIssuer, reportAccountGone } from '../issuer-account.ts';
import { reportServerUnreachable } from '../server-unreachable.ts';
import { describeProfiles } from '../account/account.ts';
import { isTrue, rfc3339 } from '../../../api/conditions.ts';
import { accountGoneProblem, ANN_ACCOUNT, ANN_CREATING, ANN_FAILURE_CAUSE, ANN_RATE_LIMITED, invalidatedDespiteValidAuthorizations, isUnreachable, notFoundAtCA, type FailureCause } from '../recovery.ts';
import { acmeAction } from '../account/registry.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { WrittenVersions } from '../written-versions.ts';
import { ACCOUNT_CHANGED_WHY, decideOrder, decideOrderLook, failedStatus, orderIdentifiers, type ChallengeDraft, type OrderStep } from './order.ts';
import { retryBackoff } from '../../../runtime/workqueue.ts';
import { BoundedCache } from '../../../runtime/bounded-cache.ts';

const MANAGER = 'orders';
/**
 * newOrder calls in flight at once. After a restart every Order without a URL wants one; a
 * burst of them, cut by a second kill, orphans the whole burst at the CA (issue 20).
 */
export const MAX_CONCURRENT_NEW_ORDERS = 4;

/** A counting semaphore: at most `max` holders; the rest wait in arrival order. */
export function semaphore(max: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    if (active >= max) await new Promise<void>((r) => waiting.push(r));
    else active++;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/** ACME says deactivated/revoked; the Order API has no such states, and both are final failures. */
function stateOf(s: string): ACMEState {
  return (['valid', 'ready', 'pending', 'processing', 'invalid', 'expired'] as const).find((x) => x === s) ?? 'invalid';
}

/** A problem the server stated about this request (4xx, or an order/authorization document's error). */
function isTerminal(e: unknown): e is AcmeError {
  return e instanceof AcmeError && e.status < 500 && !isTransientProblem(e);
}

export function orderController(shared: ControllerContext, rt: AcmeRuntime): ControllerSpec {
  const ctx = forController(shared, MANAGER);
  const orders = ctx.informers.informerFor<OrderObj>(Order);
  const challenges = ctx.informers.informerFor<ChallengeObj>(Challenge);
  const issuerInformers = [Issuer, ClusterIssuer].map((t) => ({ kind: t.kind, informer: ctx.informers.informerFor(t) }));

  const written = new WrittenVersions();
  const newOrderSlot = semaphore(MAX_CONCURRENT_NEW_ORDERS);

  async function writeStatus(order: OrderObj, status: OrderStatus): Promise<OrderObj> {
    if (JSON.stringify(status) === JSON.stringify(order.status ?? {})) return order;
    return written.noteWrite(await ctx.store.updateStatus(Order, { ...order, status }, { fieldManager: componentNameOf(MANAGER) })) as OrderObj;
  }

  async function annotate(order: OrderObj, annotations: Record<string, string>): Promise<OrderObj> {
    return written.noteWrite(await ctx.store.update(Order, {
      ...order, metadata: { ...order.metadata, annotations: { ...(order.metadata.annotations ?? {}), ...annotations } },
    }, { fieldManager: componentNameOf(MANAGER) })) as OrderObj;
  }

  /** Fails the Order; with a cause, the request controller retries it without counting an issuance attempt. */
  async function fail(order: OrderObj, status: OrderStatus, cause?: FailureCause): Promise<void> {
    const cur = cause && order.metadata.annotations?.[ANN_FAILURE_CAUSE] !== cause ? await annotate(order, { [ANN_FAILURE_CAUSE]: cause }) : order;
    await writeStatus(cur, status);
  }

  async function authorizations(client: AcmeClient, urls: string[]): Promise<NonNullable<OrderStatus['authorizations']>> {
    return Promise.all(urls.map(async (url) => {
      const a = await acmeAction('get_authorization', () => client.getAuthorization(url));
      return {
        url, identifier: a.identifier.value, ...(a.wildcard ? { wildcard: true } : {}), initialState: stateOf(a.status),
        challenges: a.challenges.map((c) => ({ url: c.url, type: c.type, token: c.token })),
      };
    }));
  }

  /**
   * Acts on what the ACME server said the order is (the answer to finalize, or one look at it):
   * downloads a valid order's certificate, or records when to look again and requeues. Never waits.
   */
  async function proceed(client: AcmeClient, order: OrderObj, acme: ACMEIssuer, o: AcmeOrder, retryAfterMs?: number): Promise<{ requeueAfterMs: number } | undefined> {
    const next = decideOrderLook(order, o.status, ctx.clock.now(), retryAfterMs);
    switch (next.kind) {
      case 'failed':
        throw failedOrderProblem(o)!;
      case 'no-certificate':
        throw new Error(`order ${o.url} is ${o.status} without a certificate URL`);
      case 'look-later': {
        // The mark first: the status write wakes this Order, and the mark says not before then.
        const marked = await annotate(order, next.annotations);
        await writeStatus(marked, { ...(order.status ?? {}), state: stateOf(o.status) });
        return { requeueAfterMs: next.afterMs };
      }
      case 'download': {
        if (!o.certificate) throw new Error(`order ${o.url} is ${o.status} without a certificate URL`);
        const pem = await acmeAction('fetch_cert', () => client.downloadCertificate(o.certificate!, { preferredChain: acme.preferredChain }));
        ctx.recorder.event(order, 'Normal', 'Complete', 'Order completed successfully');
        await writeStatus(order, { ...(order.status ?? {}), state: 'valid', certificate: Buffer.from(pem).toString('base64') });
        return undefined;
      }
    }
  }

  // One listing of the account's orders serves every lost Order found after the same restart.
  const listings = new BoundedCache<string, { at: number; urls: Promise<string[]> }>(64);
  const LISTING_TTL_MS = 10_000;
  /** most orders of the list looked at per lost Order (newest first) */
  const MAX_CANDIDATES = 8;

  async function findLostOrder(client: AcmeClient, order: OrderObj): Promise<AcmeOrder | undefined> {
    const account = client.accountUrl ?? '';
    let listing = listings.get(account);
    if (!listing || ctx.clock.now().getTime() - listing.at > LISTING_TTL_MS) {
      const urls = (async () => {
        const acct = await acmeAction('get_account', () => client.getAccount());
        if (!acct.orders) return [];
        return (await acmeAction('list_orders', () => client.listOrders(acct.orders!, 20))).urls;
      })();
      listing = { at: ctx.clock.now().getTime(), urls };
      listings.set(account, listing);
      urls.catch(() => listings.delete(account));
    }
    const recorded = new Set(orders.list().map((o) => o.status?.url).filter(Boolean));
    const want = orderIdentifiers(order).join(',');
    const candidates = (await listing.urls).filter((u) => !recorded.has(u)).reverse().slice(0, MAX_CANDIDATES);
    for (const url of candidates) {
      const o = await acmeAction('get_order', () => client.getOrder(url));
      if (o.identifiers.map((i) => i.value).sort().join(',') === want && (o.status === 'pending' || o.status === 'ready')) return o;
    }
    return undefined;
  }

  /** An order the interrupted newOrder of an earlier process created, found in the account's list and recorded; false when not found. */
  async function recordLostOrder(client: AcmeClient, order: OrderObj, key: string): Promise<boolean> {
    // The CA may list the account's orders (Pebble does; Let's Encrypt does not): the order the
    // interrupted newOrder created is the one with these identifiers that no Order resource holds.
    const found = await findLostOrder(client, order).catch((e: unknown) => {
      ctx.logger.warn({ order: key, err: (e as Error).message }, 'looking up the lost ACME order in the account\'s orders list failed');
      return undefined;
    });
    if (!found) {
      // Let's Encrypt lists no account orders; Pebble lists them oldest first, and only the
      // first 20 pages are read (an account with more orders hides its newest); a CA's list may
      // also lag: one order at the CA stays unused (it expires on its own); say so instead of guessing.
      ctx.recorder.event(order, 'Warning', 'OrderLost', `newOrder was being sent at ${order.metadata.annotations?.[ANN_CREATING]} and its answer was never recorded (certsmith stopped or the answer was lost): creating another ACME order; if the first one was created, it stays unused at the ACME server until it expires`);
      return false;
    }
    ctx.recorder.event(order, 'Normal', 'OrderFound', `Found the ACME order ${found.url} that newOrder created before certsmith stopped (from the account's orders list); no new order needed`);
    const status: OrderStatus = {
      ...(order.status ?? {}), url: found.url, finalizeURL: found.finalize, state: stateOf(found.status),
      authorizations: found.authorizations.map((url) => ({ url })),
    };
    const recorded = await writeStatus(order, status);
    await writeStatus(recorded, { ...status, authorizations: await authorizations(client, found.authorizations) });
    return true;
  }

  /** newOrder, with the RFC 9773 replaces hint when the CA takes it. */
  async function sendNewOrder(client: AcmeClient, order: OrderObj): Promise<AcmeOrder> {
    const request = {
      identifiers: orderIdentifiers(order),
      ...(order.spec.duration ? { notAfter: new Date(ctx.clock.now().getTime() + parseDuration(order.spec.duration)) } : {}),
      ...(order.spec.profile ? { profile: order.spec.profile } : {}),
    };
    try {
      return await acmeAction('authorize_order', () => client.createOrder({ ...request, ...(order.spec.replaces ? { replaces: order.spec.replaces } : {}) }));
    } catch (e) {
      if (!(order.spec.replaces && replacesRefused(e))) throw e;
      // RFC 9773 §5: the certificate was already replaced (another order named it) or the CA
      // does not know it: the renewal must not fail for that; order without the hint.
      ctx.recorder.event(order, 'Normal', 'ReplacesDropped', `The ACME server refused "replaces: ${order.spec.replaces}" (${(e as AcmeError).shortType}: ${(e as AcmeError).detail}); ordering without it`);
      return acmeAction('authorize_order', () => client.createOrder(request));
    }
  }

  /** The create step: a new ACME order behind a write-ahead mark, or the one a lost newOrder created. */
  async function createOrder(client: AcmeClient, order: OrderObj, key: string, lost: boolean, issuerAccountUrl: string | undefined): Promise<void> {
    if (lost && await recordLostOrder(client, order, key)) return;
    // Write-ahead: the mark is stored before newOrder is sent, so a restart knows an order may exist.
    const account = client.accountUrl || issuerAccountUrl;
    const marked = await annotate(order, { [ANN_CREATING]: rfc3339(ctx.clock.now()), ...(account ? { [ANN_ACCOUNT]: account } : {}) });
    let created: AcmeOrder;
    try {
      created = await sendNewOrder(client, order);
    } catch (e) {
      // An error answer or a refused connection: certainly no order at the CA, so the mark goes
      // (a reset or a timeout after sending leaves it: the order may exist).
      if (notSent(e)) {
        const { [ANN_CREATING]: _, ...rest } = marked.metadata.annotations ?? {};
        await ctx.store.update(Order, { ...marked, metadata: { ...marked.metadata, annotations: rest } }, { fieldManager: componentNameOf(MANAGER) }).then((o) => written.noteWrite(o));
      }
      throw e;
    }
    // The URL first, before anything else can happen to this order (fetching authorizations, a kill).
    // A rate-limit reason from an earlier attempt is over now.
    const { reason: _over, ...before } = order.status ?? {};
    const status: OrderStatus = {
      ...before, url: created.url, finalizeURL: created.finalize, state: stateOf(created.status),
      authorizations: created.authorizations.map((url) => ({ url })),
    };
    const recorded = await writeStatus(marked, status);
    if (order.spec.profile) ctx.recorder.event(order, 'Normal', 'Profile', `Created ACME order ${created.url} with profile "${order.spec.profile}"${created.profile && created.profile !== order.spec.profile ? ` (the ACME server answered profile "${created.profile}")` : ''}`);
    const authz = await authorizations(client, created.authorizations);
    await writeStatus(recorded, { ...status, authorizations: authz });
  }

  async function fetchMissingAuthorizations(client: AcmeClient, order: OrderObj): Promise<void> {
    const missing = (order.status?.authorizations ?? []).filter((a) => !a.identifier).map((a) => a.url);
    const fetched = new Map((await authorizations(client, missing)).map((a) => [a.url, a]));
    await writeStatus(order, { ...order.status, authorizations: order.status!.authorizations!.map((a) => fetched.get(a.url) ?? a) });
  }

  async function createChallenges(client: AcmeClient, order: OrderObj, drafts: ChallengeDraft[]): Promise<void> {
    for (const draft of drafts) {
      const key = draft.spec.type === 'HTTP-01' ? client.keyAuthorization(draft.spec.token) : client.dns01TxtValue(draft.spec.token);
      try {
        await ctx.store.create(Challenge, { ...draft, spec: { ...draft.spec, key } }, { fieldManager: componentNameOf(MANAGER) });
      } catch (e) {
        if (!(e instanceof StoreError && e.reason === 'AlreadyExists')) throw e;
        continue;
      }
      ctx.recorder.event(order, 'Normal', 'Created', `Created Challenge resource "${draft.metadata.name}" for domain "${draft.spec.dnsName}"`);
    }
  }

  async function finalize(client: AcmeClient, order: OrderObj, acme: ACMEIssuer): Promise<{ requeueAfterMs: number } | undefined> {
    const csrPem = decodeBase64(order.spec.request);
    let finalized: AcmeOrder;
    try {
      // Without waiting: a processing order is looked at again by a requeue, not by a sleeping worker.
      finalized = await acmeAction('create_order_cert', () => client.finalizeOrder(order.status!.finalizeURL!, csrPem, { orderUrl: order.status!.url, wait: false }));
    } catch (e) {
      if (!(e instanceof AcmeError && (e.shortType === 'orderNotReady' || e.status === 403))) throw e;
      // Finalized before (a lost response) or not ready after all: ask once what the order is.
      const current = await acmeAction('get_order', () => client.getOrder(order.status!.url!));
      if (current.status === 'invalid') {
        const authzs = await Promise.all(current.authorizations.map((url) => acmeAction('get_authorization', () => client.getAuthorization(url))));
        if (invalidatedDespiteValidAuthorizations(current.status, authzs.map((a) => a.status))) {
          const why = current.error ? ` (${current.error.detail ?? current.error.type})` : '';
          const reason = `The ACME server made this order invalid although all its authorizations are valid${why}; a new Order follows: ${e.message}`;
          await fail(order, failedStatus(order, 'invalid', reason, ctx.clock.now()), 'order-invalidated');
          ctx.recorder.event(order, 'Warning', 'OrderInvalidated', reason);
          return undefined;
        }
      }
      if (current.status !== 'valid' && current.status !== 'processing') {
        await writeStatus(order, isFailedAcmeStatus(current.status)
          ? failedStatus(order, current.status === 'expired' ? 'expired' : 'invalid', `Failed to finalize Order: ${e.message}`, ctx.clock.now())
          : { ...(order.status ?? {}), state: stateOf(current.status) });
        return undefined;
      }
      finalized = current;
    }
    return proceed(client, order, acme, finalized);
  }

  /** Performs a step that talks to the ACME server. */
  async function act(step: OrderStep, client: AcmeClient, order: OrderObj, key: string, acme: ACMEIssuer, issuerAccountUrl: string | undefined): Promise<{ requeueAfterMs: number } | undefined> {
    switch (step.kind) {
      case 'create':
        await newOrderSlot(() => createOrder(client, order, key, step.lost, issuerAccountUrl));
        return undefined;
      case 'fetch-authorizations':
        await fetchMissingAuthorizations(client, order);
        return undefined;
      case 'create-challenges':
        await createChallenges(client, order, step.challenges);
        return undefined;
      case 'finalize':
        return finalize(client, order, acme);
      case 'download': {
        const { order: current, retryAfterMs } = await acmeAction('wait_order', () => client.lookAtOrder(order.status!.url!));
        return proceed(client, order, acme, current, retryAfterMs);
      }
      default:
        return undefined;
    }
  }

  /**
   * What an error of a step the ACME server answered does to the Order: a gone account fails it
   * for the issuer to register again, a rate limit holds it, a stated problem fails it; anything
   * else is thrown for the retry backoff.
   */
  async function failedStep(e: unknown, step: OrderStep, client: AcmeClient, order: OrderObj, issuer: KubeObject): Promise<{ requeueAfterMs: number } | undefined> {
    const { namespace, name } = order.metadata;
    const now = () => ctx.clock.now();
    const gone = accountGoneProblem(e);
    if (gone) {
      await reportAccountGone(ctx, issuer, client.accountUrl, gone);
      // The cache may not have our own writes of this pass yet.
      const fresh = (await ctx.store.get<OrderObj>(Order, namespace, name!)) ?? order;
      const reason = `The ACME account is gone at the server (${gone.reason}); a new Order follows once the issuer has registered again: ${(e as Error).message}`;
      await fail(fresh, failedStatus(fresh, 'errored', reason, now()), 'account-gone');
      ctx.recorder.event(order, 'Warning', gone.reason, reason);
      return undefined;
    }
    if (step.kind !== 'create' && notFoundAtCA(e)) {
      const reason = `The ACME server no longer knows this order (it restarted or purged it); a new Order follows: ${(e as Error).message}`;
      await fail(order, failedStatus(order, 'errored', reason, now()), 'order-gone');
      ctx.recorder.event(order, 'Warning', 'NotFoundAtCA', reason);
      return undefined;
    }
    if (e instanceof AcmeError && e.shortType === 'rateLimited') {
      // RFC 8555 §6.6: which limit (the problem's detail) and until when, on the Order and in an
      // Event; the mark keeps every controller pass, and a restart, from asking before then.
      const waitMs = rateLimitWaitMs(e.retryAfterMs);
      const until = rfc3339(new Date(now().getTime() + waitMs));
      const reason = `Rate limited by the ACME server until ${until}: ${e.detail || e.message}`;
      let fresh = (await ctx.store.get<OrderObj>(Order, namespace, name!)) ?? order;
      fresh = await annotate(fresh, { [ANN_RATE_LIMITED]: until });
      await writeStatus(fresh, { ...(fresh.status ?? {}), reason });
      ctx.recorder.event(order, 'Warning', 'RateLimited', `${reason}; no request for this order is sent before then`);
      return { requeueAfterMs: waitMs };
    }
    if (isUnreachable(e)) {
      ctx.recorder.event(order, 'Warning', 'ACMEServerUnreachable', `Could not reach the ACME server; retrying with backoff: ${(e as Error).message}`);
      // and on the Issuer's Ready condition, which its controller clears once the server answers (issue 20)
      await reportServerUnreachable(ctx, issuer, e as Error);
    }
    if (!isTerminal(e)) throw e;
    const what = { create: 'Failed to create Order', 'fetch-authorizations': 'Failed to fetch authorization', finalize: 'Failed to finalize Order', download: 'Failed to retrieve Order resource' }[step.kind as string] ?? 'ACME error';
    let explained = '';
    if (e.shortType === 'invalidProfile') {
      // draft-aaron-acme-profiles §4: say what the CA offers, from its (cached) directory.
      const offered = await client.getDirectory().then((d) => describeProfiles(d.meta?.profiles), () => 'unknown (directory not available)');
      explained = `; the ACME server does not accept profile "${order.spec.profile ?? ''}" for this order; it offers: ${offered}. Set spec.acme.profile on issuer "${order.spec.issuerRef.name}" to one of them, or remove it`;
    }
    // The create step annotated the Order (write-ahead mark) in this pass: the cached object is stale.
    const fresh = step.kind === 'create' ? (await ctx.store.get<OrderObj>(Order, namespace, name!)) ?? order : order;
    const status = failedStatus(fresh, 'errored', `${what}: ${e.message}${explained}`, now());
    await writeStatus(fresh, status);
    ctx.recorder.event(order, 'Warning', 'Failed', status.reason!);
    return undefined;
  }

  /** The steps that need no ACME client: nothing to do, waits, events, failures and deleting Challenges; true when handled. */
  async function settledWithoutClient(step: OrderStep, order: OrderObj): Promise<{ handled: boolean; result?: { requeueAfterMs: number } }> {
    switch (step.kind) {
      case 'none':
      case 'wait-issuer':
        return { handled: true };
      case 'rate-limited':
        return { handled: true, result: { requeueAfterMs: step.untilMs } };
      case 'look-later':
        return { handled: true, result: { requeueAfterMs: step.afterMs } };
      case 'no-solver':
        // Waits for an issuer change, which re-queues the Order.
        record(ctx, order, [step.event]);
        return { handled: true };
      case 'fail':
        await fail(order, step.status, step.cause);
        record(ctx, order, [step.event]);
        return { handled: true };
      case 'delete-challenges':
        for (const n of step.names) await ctx.store.delete(Challenge, order.metadata.namespace, n).catch((e) => { if (!isNotFound(e)) throw e; });
        return { handled: true };
      default:
        return { handled: false };
    }
  }

  return {
    name: MANAGER,
    workers: 8,
    retry: retryBackoff.acme,
    watch(enqueue) {
      const key = (o: KubeObject) => enqueue(`${o.metadata.namespace}/${o.metadata.name}`);
      orders.onAdd(key);
      orders.onUpdate((_, n) => key(n));
      orders.onDelete((o) => written.forget(o));
      const byOwner = (c: ChallengeObj) => {
        const k = controllerOwnerKey(c, Order);
        if (k) enqueue(k);
      };
      challenges.onAdd(byOwner);
      challenges.onUpdate((_, n) => byOwner(n));
      challenges.onDelete(byOwner);
      for (const { kind, informer } of issuerInformers) {
        const wake = (i: KubeObject) => {
          for (const o of orders.list(kind === 'Issuer' ? i.metadata.namespace : undefined)) {
            if ((o.spec.issuerRef.kind || 'Issuer') === kind && o.spec.issuerRef.name === i.metadata.name) key(o);
          }
        };
        informer.onAdd(wake);
        informer.onUpdate((_, n) => wake(n));
      }
    },
    async reconcile(key) {
      const { namespace, name } = splitKey(key);
      const order = orders.get(namespace, name);
      if (!order || order.metadata.deletionTimestamp || written.isStale(order)) return;
      const issuer = lookupIssuer(ctx, namespace, order.spec.issuerRef) as (KubeObject & { spec?: { acme?: ACMEIssuer }; status?: IssuerStatus }) | undefined;
      const owned = challenges.list(namespace).filter((c) => controllerOwnerKey(c, Order) === key);
      const issuerState = issuer?.spec?.acme ? { ready: isTrue(issuer.status?.conditions, 'Ready'), accountUrl: issuer.status?.acme?.uri || undefined } : undefined;
      const step = decideOrder({ order, solvers: issuer?.spec?.acme?.solvers ?? [], challenges: owned, issuer: issuerState }, ctx.clock.now());
      const settled = await settledWithoutClient(step, order);
      if (settled.handled) return settled.result;
      if (!issuer?.spec?.acme) throw new Error(`issuer "${order.spec.issuerRef.name}" of Order ${key} not found or not an ACME issuer`);
      const client = await clientForIssuer(ctx, rt, issuer);
      const createdUnder = order.metadata.annotations?.[ANN_ACCOUNT];
      if (step.kind !== 'create' && createdUnder && client.accountUrl && createdUnder !== client.accountUrl) {
        // The issuer cache may lag behind a fresh registration; the client already holds the new account.
        const reason = `The ACME account this order was created under (${createdUnder}) was replaced by ${client.accountUrl}: ${ACCOUNT_CHANGED_WHY}`;
        await fail(order, failedStatus(order, 'errored', reason, ctx.clock.now()), 'account-gone');
        ctx.recorder.event(order, 'Warning', 'AccountChanged', `Order failed: ${reason}`);
        return;
      }
      try {
        return await act(step, client, order, key, issuer.spec.acme, issuerState?.accountUrl);
      } catch (e) {
        return failedStep(e, step, client, order, issuer);
      }
    },
  };
}

/**
 * RFC 9773 §5: 409 alreadyReplaced, or a CA refusing the replaces value itself, whatever problem
 * type it uses (malformed; Let's Encrypt's unauthorized "Could not validate ARI 'replaces' field"
 * when another account obtained the certificate, as after an issuerRef change). The hint must
 * never block the renewal; a rate limit or a server error is not about the hint.
 */
export function replacesRefused(e: unknown): boolean {
  if (!(e instanceof AcmeError)) return false;
  if (e.shortType === 'alreadyReplaced') return true;
  return isRefusal(e) && /replace/i.test(e.detail);
}

/** Whether a failed request certainly did not create anything at the CA. */
function notSent(e: unknown): boolean {
  if (e instanceof AcmeError) return e.status >= 400 && e.status < 500;
  const code = ((e as Error).cause as { code?: string } | undefined)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EAI_AGAIN';
}

function isFailedAcmeStatus(s: string): boolean {
  return ['invalid', 'expired', 'deactivated', 'revoked'].includes(s);
}
