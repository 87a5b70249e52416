// Calls the admission webhooks registered in the embedded server, as kube-apiserver does:
// mutating webhooks one after the other (each JSON patch applied before the next is called),
// then validating webhooks all at once. The configurations are cached through a watch, so a
// write reads nothing extra unless a webhook's rules match it.
//
// A mutating webhook with reinvocationPolicy IfNeeded is called a second time when a webhook
// after it changed the object (see Reinvocation). certsmith's built-in defaulting of its own
// kinds runs once, after every mutating webhook (both rounds), so it never causes a reinvocation.
// matchConditions (CEL, match-conditions.ts) are evaluated on the object as each webhook would
// see it, after rules and selectors.
//
// Differences from kube-apiserver: matchPolicy is Exact in effect (certsmith serves one version
// of each kind); only AdmissionReview v1 is spoken.
import { randomUUID } from 'node:crypto';
import type { KubeObject, UserInfo } from '../../api/meta.ts';
import { MutatingWebhookConfigurationType, NamespaceType, ValidatingWebhookConfigurationType, type ResourceType } from '../../api/resources.ts';
import type { Logger } from '../../runtime/logger.ts';
import { applyJSONPatch, jsonEqual } from '../../store/patch.ts';
import { addWarning } from '../warnings.ts';
import { StoreError, type StatusCause, type Store, type StoreErrorReason, type Watch } from '../../store/store.ts';
import { CallFailure, postReview, resolveEndpoint } from './client.ts';
import {
  isExempt, matchingWebhooks, needsNamespaceLabels, ruleMatches, SelectorError,
  type AdmissionOperation, type RegisteredWebhook, type RequestAttributes, type WebhookConfiguration,
} from './matching.ts';
import { evaluateMatchConditions } from './match-conditions.ts';
import { admissionReview, denialStatus, InvalidResponse, requestAttributes, reviewOutcome, type ReviewOutcome } from './review.ts';

/** One write as admission sees it. */
export interface AdmissionCall {
  type: ResourceType;
  operation: Exclude<AdmissionOperation, 'CONNECT'>;
  /** 'status' for a status write */
  subresource?: string;
  name: string;
  namespace?: string;
  /** who makes the write */
  userInfo: UserInfo;
  /** the object as it would be stored; absent for DELETE */
  object?: KubeObject;
  /** the stored object, for UPDATE and DELETE */
  oldObject?: KubeObject;
  dryRun: boolean;
  /** the CreateOptions/UpdateOptions/PatchOptions/DeleteOptions of the request */
  options: Record<string, unknown>;
}

/** What the admitted store (src/server/admission.ts) asks of registered webhooks. */
export interface ExternalAdmission {
  /** false when no registered webhook's rules can match: the write skips reading the old object */
  interested(type: ResourceType, operation: AdmissionCall['operation'], subresource?: string): boolean;
  /** the object after every matching mutating webhook's patch */
  mutate(call: AdmissionCall): Promise<KubeObject | undefined>;
  /** resolves when every matching validating webhook allowed the write */
  validate(call: AdmissionCall): Promise<void>;
  /** a webhook configuration written through the admitted store: cached before its watch event arrives */
  observe(type: ResourceType, obj: KubeObject, deleted: boolean): void;
  stop(): void;
}

/** A webhook's refusal, with the code, reason and causes its response gave (kube's ToStatusErr). */
export class WebhookDenied extends StoreError {
  constructor(denial: ReturnType<typeof denialStatus>) {
    const details = denial.details as { causes?: unknown } | undefined;
    const causes = Array.isArray(details?.causes)
      ? details.causes.filter((c): c is StatusCause => !!c && typeof c === 'object' && typeof (c as StatusCause).message === 'string')
        .map((c) => ({ field: typeof c.field === 'string' ? c.field : '', message: c.message, ...(typeof c.reason === 'string' ? { reason: c.reason } : {}) }))
      : [];
    super('BadRequest', denial.message, causes);
    // the webhook chooses the status code and reason, not the fixed table StoreError keeps
    Object.defineProperty(this, 'code', { value: denial.code });
    Object.defineProperty(this, 'reason', { value: denial.reason as StoreErrorReason });
  }
}

const defaultTimeoutSeconds = 10;
const maxTimeoutSeconds = 30;
/** How long a write waits for the first listing of the configurations before it is refused. */
const syncWaitMs = 10_000;
const maxRelistDelayMs = 5_000;

function internalError(message: string): StoreError {
  return new StoreError('InternalError', `Internal error occurred: ${message}`, [{ field: '', message }]);
}

/** The configurations of one kind, by name, each with the revision it was last seen at. */
class ConfigurationCache {
  private entries = new Map<string, { rev: number; obj?: WebhookConfiguration }>();

  /** a newer revision wins; a deletion leaves a tombstone so a late older event cannot revive it */
  put(obj: KubeObject, deleted: boolean) {
    const name = obj.metadata?.name ?? '';
    const rev = Number(obj.metadata?.resourceVersion ?? 0);
    const cur = this.entries.get(name);
    if (cur && cur.rev >= rev) return;
    this.entries.set(name, { rev, obj: deleted ? undefined : obj as WebhookConfiguration });
  }

  /** a fresh listing; entries written after it (newer revisions) are kept */
  replace(items: KubeObject[], listRev: number) {
    const next = new Map<string, { rev: number; obj?: WebhookConfiguration }>();
    for (const [name, e] of this.entries) if (e.rev > listRev) next.set(name, e);
    this.entries = next;
    for (const o of items) this.put(o, false);
  }

  list(): WebhookConfiguration[] {
    const out: WebhookConfiguration[] = [];
    for (const e of this.entries.values()) if (e.obj) out.push(e.obj);
    return out;
  }
}

/**
 * Which mutating webhooks are called again (k8s.io/apiserver's webhookReinvokeContext): a
 * webhook with reinvocationPolicy IfNeeded that ran before some later webhook changed the
 * object is called once more in a second round; no webhook is called more than twice.
 */
class Reinvocation {
  private previouslyInvoked = new Set<string>();
  private toReinvoke = new Set<string>();
  private needed = false;

  /** a webhook's patch changed the object: every IfNeeded webhook that ran before it is due again */
  changedBy() {
    for (const uid of this.previouslyInvoked) this.toReinvoke.add(uid);
    this.previouslyInvoked.clear();
    this.needed = true;
  }

  /** an IfNeeded webhook was called (whether or not its call succeeded) */
  invoked(uid: string) {
    this.previouslyInvoked.add(uid);
  }

  shouldReinvoke(uid: string): boolean {
    return this.toReinvoke.has(uid);
  }

  /** whether a second round is due (only a change in the first round starts one) */
  roundNeeded(): boolean {
    const needed = this.needed && this.toReinvoke.size > 0;
    this.needed = false;
    return needed;
  }
}

/** The object after a mutating webhook's patch; a patch that cannot apply, or removes the metadata, is the webhook's failure. */
function applyPatch(h: RegisteredWebhook, object: KubeObject | undefined, patch: unknown[]): KubeObject {
  if (!object) throw internalError(`admission webhook ${JSON.stringify(h.hook.name)} attempted to modify the object, which is not supported for this operation`);
  let out: KubeObject;
  try {
    out = applyJSONPatch<KubeObject>(object, patch);
  } catch (e) {
    throw internalError(`admission webhook ${JSON.stringify(h.hook.name)}: the patch could not be applied: ${(e as Error).message}`);
  }
  if (!out || typeof out !== 'object' || Array.isArray(out) || !out.metadata || typeof out.metadata !== 'object') {
    throw internalError(`admission webhook ${JSON.stringify(h.hook.name)}: the patch removed the object metadata`);
  }
  return out;
}

export interface DispatcherOptions {
  /** the store the configurations, Services and Namespaces are read from (the backend) */
  store: Store;
  logger?: Logger;
}

export function startWebhookDispatcher(o: DispatcherOptions): ExternalAdmission {
  const { store } = o;
  const caches = new Map<ResourceType, ConfigurationCache>([
    [ValidatingWebhookConfigurationType, new ConfigurationCache()],
    [MutatingWebhookConfigurationType, new ConfigurationCache()],
  ]);
  let stopped = false;
  let synced = false;
  const watches = new Set<Watch>();
  const timers = new Set<NodeJS.Timeout>();
  let markSynced!: () => void;
  const firstSync = new Promise<void>((resolve) => { markSynced = resolve; });
  const pending = new Set<ResourceType>(caches.keys());

  const pause = (ms: number) => new Promise<void>((resolve) => {
    const t = setTimeout(() => { timers.delete(t); resolve(); }, ms);
    t.unref();
    timers.add(t);
  });

  // list, then watch from the listing's revision; a watch that ends (410 Gone, too slow) relists,
  // with a delay that doubles up to a bound
  async function keepSynced(type: ResourceType, cache: ConfigurationCache) {
    let failures = 0;
    while (!stopped) {
      try {
        const listing = await store.list(type);
        if (stopped) return;
        cache.replace(listing.items, Number(listing.resourceVersion));
        if (pending.delete(type) && pending.size === 0) { synced = true; markSynced(); }
        failures = 0;
        await new Promise<void>((resolve) => {
          const w = store.watch(type, { resourceVersion: listing.resourceVersion }, (e) => {
            if (e.type === 'BOOKMARK') return;
            cache.put(e.object, e.type === 'DELETED');
          }, (err) => {
            watches.delete(w);
            if (!stopped) o.logger?.debug({ err: err.message, kind: type.kind }, 'webhook configuration watch ended; listing again');
            resolve();
          });
          watches.add(w);
          if (stopped) { w.stop(); resolve(); }
        });
      } catch (e) {
        if (stopped) return;
        failures++;
        o.logger?.warn({ err: (e as Error).message, kind: type.kind }, 'listing webhook configurations failed');
      }
      if (!stopped) await pause(Math.min(100 * 2 ** failures, maxRelistDelayMs));
    }
  }
  for (const [type, cache] of caches) void keepSynced(type, cache);

  async function ready() {
    if (synced) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), syncWaitMs); });
    const r = await Promise.race([firstSync, late]);
    clearTimeout(timer);
    if (r === 'late') throw internalError('the admission webhook configurations could not be read; try again');
  }

  function attributes(call: AdmissionCall, object: KubeObject | undefined): RequestAttributes {
    return {
      group: call.type.group, version: call.type.version, resource: call.type.plural, subresource: call.subresource ?? '',
      operation: call.operation, namespace: call.type.namespaced ? call.namespace ?? '' : '',
      object, oldObject: call.oldObject,
    };
  }

  /** the webhooks whose rules and selectors match */
  async function matching(type: ResourceType, a: RequestAttributes): Promise<RegisteredWebhook[]> {
    const configs = caches.get(type)!.list();
    if (!configs.length) return [];
    let nsLabels: Record<string, string> | undefined;
    const byRules = configs.some((c) => (c.webhooks ?? []).some((h) => h && needsNamespaceLabels(h, a)));
    if (byRules) nsLabels = (await store.get(NamespaceType, undefined, a.namespace))?.metadata.labels;
    try {
      return matchingWebhooks(configs, a, nsLabels);
    } catch (e) {
      if (e instanceof SelectorError) throw internalError(e.message);
      throw e;
    }
  }

  /** What the review says about the write, apart from its uid, objects and options. */
  function described(c: AdmissionCall) {
    return {
      group: c.type.group, version: c.type.version, kind: c.type.kind, resource: c.type.plural, subresource: c.subresource ?? '',
      name: c.name, namespace: c.type.namespaced ? c.namespace ?? '' : '', operation: c.operation, userInfo: c.userInfo, dryRun: c.dryRun,
    };
  }

  /**
   * Whether `h`'s matchConditions let the write with `object` as it is now go to it. A condition
   * that cannot be evaluated is the failurePolicy's: Ignore skips the webhook, Fail refuses the
   * write with kube's 403.
   */
  function conditionsAllow(h: RegisteredWebhook, c: AdmissionCall, object: KubeObject | undefined): boolean {
    const conditions = h.hook.matchConditions;
    if (!Array.isArray(conditions) || !conditions.length) return true;
    const result = evaluateMatchConditions(conditions, { object: object ?? null, oldObject: c.oldObject ?? null, request: requestAttributes(described(c)) });
    if (result.outcome === 'call') return true;
    if (result.outcome === 'skip') return false;
    if (h.hook.failurePolicy === 'Ignore') {
      o.logger?.warn({ webhook: h.hook.name, configuration: h.configuration, err: result.message }, 'admission webhook match conditions failed; failurePolicy Ignore skips the webhook');
      return false;
    }
    const resource = c.type.group ? `${c.type.plural}.${c.type.group}` : c.type.plural;
    throw new StoreError('Forbidden', `${resource} ${JSON.stringify(c.name)} is forbidden: ${result.message}`);
  }

  /** kube refuses a dry run that would reach a webhook with side effects */
  function checkDryRun(hooks: RegisteredWebhook[], dryRun: boolean) {
    if (!dryRun) return;
    for (const { hook } of hooks) {
      if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
        throw new StoreError('BadRequest', `admission webhook ${JSON.stringify(hook.name)} does not support dry run`);
      }
    }
  }

  /** the hook's answer, or undefined when the call failed and its failurePolicy is Ignore */
  async function call(registered: RegisteredWebhook, c: AdmissionCall, object: KubeObject | undefined, mutating: boolean): Promise<ReviewOutcome | undefined> {
    const { hook } = registered;
    const raw = hook.timeoutSeconds;
    const timeoutSeconds = typeof raw === 'number' && Number.isInteger(raw) && raw >= 1 ? Math.min(raw, maxTimeoutSeconds) : defaultTimeoutSeconds;
    try {
      if (!Array.isArray(hook.admissionReviewVersions) || !hook.admissionReviewVersions.includes('v1')) {
        throw new CallFailure('webhook does not accept v1 AdmissionReview (admissionReviewVersions must include v1)');
      }
      const endpoint = await resolveEndpoint(store, hook.clientConfig, timeoutSeconds);
      const uid = randomUUID();
      const review = admissionReview({ uid, ...described(c), object, oldObject: c.oldObject, options: c.options });
      const outcome = reviewOutcome(await postReview(endpoint, review, timeoutSeconds * 1000), uid, mutating);
      // to the client as Warning headers, as kube-apiserver does; an in-process write has no client, so the log
      const unsent = outcome.warnings.filter((w) => !addWarning(w));
      if (unsent.length) o.logger?.info({ webhook: hook.name, warnings: unsent }, 'admission webhook warnings');
      return outcome;
    } catch (e) {
      if (!(e instanceof CallFailure || e instanceof InvalidResponse)) throw e;
      const message = `failed calling webhook ${JSON.stringify(hook.name)}: ${e.message}`;
      if (hook.failurePolicy === 'Ignore') {
        o.logger?.warn({ webhook: hook.name, configuration: registered.configuration, err: e.message }, 'admission webhook call failed; failurePolicy Ignore lets the write through');
        return undefined;
      }
      throw internalError(message);
    }
  }

  return {
    interested(type, operation, subresource) {
      if (isExempt(type.group, type.plural)) return false;
      if (!synced) return true;
      const a: RequestAttributes = { group: type.group, version: type.version, resource: type.plural, subresource: subresource ?? '', operation, namespace: '' };
      for (const cache of caches.values()) {
        for (const c of cache.list()) {
          // scope and selectors are decided per request; here only whether a rule could match at all
          if ((c.webhooks ?? []).some((h) => (h?.rules ?? []).some((r) => ruleMatches({ ...r, scope: undefined }, a)))) return true;
        }
      }
      return false;
    },

    async mutate(c) {
      if (isExempt(c.type.group, c.type.plural)) return c.object;
      await ready();
      const reinvocation = new Reinvocation();
      let object = c.object;
      // kube-apiserver's two rounds: the second only when a webhook changed the object, and in it
      // only the IfNeeded webhooks that ran before a later change (matched again on the object as it is now)
      for (let round = 0; round < 2; round++) {
        const hooks = await matching(MutatingWebhookConfigurationType, attributes(c, object));
        for (const h of hooks) {
          // decided at the webhook's turn, as kube does: an earlier patch in this round can make it
          // due again and can change what its conditions see; one not due is not evaluated again
          if (round === 1 && !reinvocation.shouldReinvoke(h.uid)) continue;
          if (!conditionsAllow(h, c, object)) continue;
          checkDryRun([h], c.dryRun);
          const outcome = await call(h, c, object, true);
          if (outcome && !outcome.allowed) throw new WebhookDenied(denialStatus(h.hook.name, outcome.status));
          if (outcome?.patch) {
            const patched = applyPatch(h, object, outcome.patch);
            if (!jsonEqual(object, patched)) reinvocation.changedBy();
            object = patched;
          }
          if (h.hook.reinvocationPolicy === 'IfNeeded') reinvocation.invoked(h.uid);
        }
        if (!reinvocation.roundNeeded()) break;
      }
      return object;
    },

    async validate(c) {
      if (isExempt(c.type.group, c.type.plural)) return;
      await ready();
      const hooks = (await matching(ValidatingWebhookConfigurationType, attributes(c, c.object))).filter((h) => conditionsAllow(h, c, c.object));
      if (!hooks.length) return;
      checkDryRun(hooks, c.dryRun);
      const results = await Promise.allSettled(hooks.map((h) => call(h, c, c.object, false)));
      // the first refusal in configuration order decides, whichever answered first
      results.forEach((r, i) => {
        if (r.status === 'rejected') throw r.reason;
        if (r.value && !r.value.allowed) throw new WebhookDenied(denialStatus(hooks[i].hook.name, r.value.status));
      });
    },

    observe(type, obj, deleted) {
      caches.get(type)?.put(obj, deleted);
    },

    stop() {
      stopped = true;
      for (const w of watches) w.stop();
      watches.clear();
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
