// Reads what the certificate controllers decide on from the shared caches, and maps changes
// of requests and Secrets back to the Certificates they belong to.
import { Certificate, CertificateRequest, SecretType } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { Informer } from '../../runtime/informer.ts';
import { controllerOwnerKey, splitKey } from '../../runtime/controller.ts';
import { wakeOnEverything, type CertificateWakes } from './wake.ts';
import type { ControllerContext } from '../context.ts';
import { ManagedLabel } from '../../api/annotations.ts';
import { CERTIFICATES_BY_SECRET, indexCertificatesBySecret } from '../../shared/certificate-index.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { type Secret } from '../../api/meta.ts';
import { controllerOwnerUID } from '../../shared/ownership.ts';
import type { CertificateInput } from './policies.ts';
import { nextRevision, requestForRevision } from '../../shared/revisions.ts';
import { secretCache } from '../../shared/secret-cache.ts';
import { getForUpdate } from '../../store/store.ts';

export const BY_OWNER = 'owner';

export interface CertificateCaches {
  certificates: Informer<CertificateObj>;
  requests: Informer<CertificateRequestObj>;
  secrets: Informer<Secret>;
}

function ensureIndex<T extends KubeObject>(inf: Informer<T>, name: string, fn: (o: T) => string[]): void {
  if (!inf.hasIndex(name)) inf.addIndex(name, fn);
}

export function certificateCaches(ctx: ControllerContext): CertificateCaches {
  const certificates = ctx.informers.informerFor<CertificateObj>(Certificate);
  const requests = ctx.informers.informerFor<CertificateRequestObj>(CertificateRequest);
  const secrets = secretCache(ctx.informers);
  indexCertificatesBySecret(certificates);
  ensureIndex(requests, BY_OWNER, (r) => { const u = controllerOwnerUID(r); return u ? [u] : []; });
  ensureIndex(secrets, BY_OWNER, (s) => { const u = controllerOwnerUID(s); return u ? [u] : []; });
  return { certificates, requests, secrets };
}

interface Subscriber {
  enqueue: (key: string) => void;
  wakes: CertificateWakes;
}

/**
 * The controllers subscribed to each certificate graph before its caches filled, by its
 * Certificates' informer. One set of informer handlers serves them all: what an event is about
 * (the Certificate owning a Secret or a request, the Certificates naming a Secret) is looked up
 * once per event, not once per controller (seven of them; the lookups were most of a
 * restart's replay of its caches).
 */
const subscribersByGraph = new WeakMap<Informer<CertificateObj>, Subscriber[]>();

/**
 * Wires the usual wake-ups: the Certificate itself, its requests, its Secrets, each asked of
 * `wakes` first (wake.ts), so a controller is not woken for changes it never acts on. Every
 * event reaches the subscribers in the order they subscribed.
 */
export function watchCertificateGraph(c: CertificateCaches, enqueue: (key: string) => void, wakes: CertificateWakes = wakeOnEverything): void {
  const subscriber = { enqueue, wakes };
  // once a cache has filled, a controller that comes later (after winning an election) is told
  // of what it holds by handlers of its own: the informer replays its objects to a new handler
  if ([c.certificates, c.secrets, c.requests].some((i) => i.hasSynced())) {
    routeGraph(c, [subscriber]);
    return;
  }
  const known = subscribersByGraph.get(c.certificates);
  if (known) known.push(subscriber);
  else {
    const subs = [subscriber];
    subscribersByGraph.set(c.certificates, subs);
    routeGraph(c, subs);
  }
}

/** Informer handlers that wake `subs` (which may grow) for changes of the graph c. */
function routeGraph(c: CertificateCaches, subs: Subscriber[]): void {
  const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
  /** fn for every subscriber, each on its own: one whose predicate throws (a malformed object) does not keep the event from the rest */
  const each = (fn: (s: Subscriber) => void) => {
    let failure: unknown;
    for (const s of subs) {
      try {
        fn(s);
      } catch (err) {
        failure ??= err;
      }
    }
    // the informer logs it, as when each controller had a handler of its own
    if (failure) throw failure;
  };
  c.certificates.onAdd((crt) => {
    const secret = c.secrets.get(crt.metadata.namespace, crt.spec?.secretName);
    const key = keyOf(crt);
    each((s) => { if (s.wakes.added(crt, secret)) s.enqueue(key); });
  });
  // the same object twice is an informer resync: the periodic second look it exists for
  c.certificates.onUpdate((old, crt) => {
    const key = keyOf(crt);
    each((s) => { if (old === crt || s.wakes.changed(old, crt)) s.enqueue(key); });
  });
  c.certificates.onDelete((crt) => {
    const key = keyOf(crt);
    each((s) => s.enqueue(key));
  });
  /** Asks `wake` of the cached controlling Certificate of old and next, for each subscriber; wakes everyone when it is not cached. */
  const byOwner = <T extends KubeObject>(old: T | undefined, next: T | undefined, wake: (s: Subscriber, crt: CertificateObj) => boolean) => {
    const first = old && controllerOwnerKey(old, Certificate);
    const second = next && controllerOwnerKey(next, Certificate);
    for (const k of first === second ? [first] : [first, second]) {
      if (!k) continue;
      const { namespace, name } = splitKey(k);
      const crt = c.certificates.get(namespace, name);
      each((s) => { if (!crt || wake(s, crt)) s.enqueue(k); });
    }
  };
  const onSecret = (old: Secret | undefined, next: Secret | undefined) => {
    const secret = (next ?? old)!;
    const resync = old === next;
    const targeting = c.certificates.byIndex(CERTIFICATES_BY_SECRET, `${secret.metadata.namespace}/${secret.metadata.name}`);
    each((s) => { for (const crt of targeting) if (resync || s.wakes.targetSecret(crt, old, next)) s.enqueue(keyOf(crt)); });
    const nextKey = old?.metadata.labels?.[ManagedLabel.nextPrivateKey] === 'true' || next?.metadata.labels?.[ManagedLabel.nextPrivateKey] === 'true';
    // the target Secret was handled by name above; any other owned Secret wakes as before
    byOwner(old, next, (s, crt) => nextKey ? resync || s.wakes.nextKeySecret(crt, old, next) : secret.metadata.name !== crt.spec.secretName);
  };
  c.secrets.onAdd((s) => onSecret(undefined, s));
  c.secrets.onUpdate(onSecret);
  c.secrets.onDelete((s) => onSecret(s, undefined));
  const onRequest = (old: CertificateRequestObj | undefined, next: CertificateRequestObj | undefined) => byOwner(old, next, (s, crt) => old === next || s.wakes.request(crt, old, next));
  c.requests.onAdd((r) => onRequest(undefined, r));
  c.requests.onUpdate(onRequest);
  c.requests.onDelete((r) => onRequest(r, undefined));
}

export function ownedRequests(c: CertificateCaches, crt: CertificateObj): CertificateRequestObj[] {
  return c.requests.byIndex(BY_OWNER, crt.metadata.uid!);
}

/**
 * The target Secret, read whole: from the cache when certsmith manages it, otherwise from the
 * store (a Secret someone else made holds only metadata in the cache).
 */
export async function targetSecret(ctx: ControllerContext, c: CertificateCaches, crt: CertificateObj): Promise<Secret | undefined> {
  const cached = c.secrets.get(crt.metadata.namespace, crt.spec.secretName);
  if (!cached || cached.data || cached.metadata.labels?.[ManagedLabel.fao] === 'true') return cached;
  return ctx.store.get<Secret>(SecretType, crt.metadata.namespace, crt.spec.secretName);
}

export async function gatherCertificate(ctx: ControllerContext, c: CertificateCaches, crt: CertificateObj): Promise<CertificateInput> {
  return withRequests(c, crt, await targetSecret(ctx, c, crt));
}

/** A Certificate and its Secret with its current and next CertificateRequests from the caches. */
export function withRequests<S extends Secret | undefined>(c: CertificateCaches, crt: CertificateObj, secret: S): CertificateInput & { secret: S } {
  const requests = ownedRequests(c, crt);
  return {
    certificate: crt,
    secret,
    currentCR: requestForRevision(requests, crt.status?.revision),
    nextCR: requestForRevision(requests, nextRevision(crt)),
  };
}

/**
 * The same input with the Certificate and its Secret read from the store instead of the caches,
 * as the next write will find them (Store.getForUpdate): a plain get would commit the store's
 * open batch, a commit of its own for each issuance this starts.
 */
export async function gatherFresh(ctx: ControllerContext, c: CertificateCaches, crt: CertificateObj): Promise<CertificateInput | undefined> {
  const fresh = await getForUpdate<CertificateObj>(ctx.store, Certificate, crt.metadata.namespace, crt.metadata.name!);
  if (!fresh) return undefined;
  return withRequests(c, fresh, await getForUpdate<Secret>(ctx.store, SecretType, fresh.metadata.namespace, fresh.spec.secretName));
}

export function nextKeySecrets(c: CertificateCaches, crt: CertificateObj): Secret[] {
  return c.secrets.byIndex(BY_OWNER, crt.metadata.uid!).filter((s) => s.metadata.labels?.[ManagedLabel.nextPrivateKey] === 'true');
}

