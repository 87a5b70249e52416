// The dashboard's picture of the cluster: informers (list, then watch; relist after a broken
// watch, e.g. a restarted server) over the kinds it shows, and the derived views. Secrets are
// not watched: the leaf is read when a Certificate's status says it changed, and only its public
// fields are kept.
import { Certificate, CertificateRequest, Challenge, EventType, Order, SecretType } from '../../api/resources.ts';
import type { KubeObject, Secret } from '../../api/meta.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { Informer, cacheKey } from '../../runtime/informer.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { ListOptions, ListResult, Store } from '../../store/store.ts';
import type { ResourceType } from '../../api/resources.ts';
import type { BackoffConfig } from '../../shared/backoff.ts';
import { detail, summarize, type CertificateDetail, type CertificateSummary, type RelatedObjects, type ViewContext } from '../model/certificate-view.ts';
import { leafOf, type ParsedLeaf } from '../model/public-certificate.ts';
import { byCodeUnits } from '../../api/ordering.ts';
import { controllerOwnerUID } from '../../shared/ownership.ts';

/** the requests informer's index: a request's controlling owner (its Certificate) */
const BY_CONTROLLER = 'controller';

export interface Snapshot {
  /** grows with every change seen: the browser refetches what it shows when it moves */
  version: number;
  generatedAt: string;
  /** whether the API answers: while it does not, the list is what was last seen */
  upstream: { reachable: boolean; problem?: string; since?: string };
  certificates: CertificateSummary[];
}

/**
 * What changed since the list or change list with version `from`: the certificates whose row
 * differs (new ones included) and those that went. It may list none: Orders, Challenges and
 * Events changed, which only a certificate's own page shows.
 */
export interface Changes {
  from: number;
  version: number;
  generatedAt: string;
  upstream: Snapshot['upstream'];
  upserted: CertificateSummary[];
  removed: { namespace: string; name: string }[];
}

/** What a page receives: the whole list first (also after it reconnects), then change lists. */
export type StreamMessage = { event: 'snapshot'; data: Snapshot } | { event: 'changes'; data: Changes };

export interface LiveViewOptions {
  store: Store;
  clock: Clock;
  backoff: BackoffConfig;
  logger: Logger;
  /** how long changes are gathered before one snapshot is sent (a renewal touches many objects) */
  settleMs?: number;
}

/**
 * The longest a burst of changes waits. The wait is four times what computing the last list
 * took, so that with thousands of certificates issuing the dashboard takes about a fifth of the
 * process at most; a list that takes long because the API is slow waits no longer than this.
 */
const MAX_SETTLE_MS = 2000;

/** the last list computed: its rows as JSON (to diff the next against) and its message, one for every page that opens */
interface Published { snapshot: Snapshot; rows: Map<string, string>; whole: StreamMessage }

export class LiveView {
  private readonly certificates: Informer<CertificateObj>;
  private readonly requests: Informer<CertificateRequestObj>;
  private readonly orders: Informer<KubeObject>;
  private readonly challenges: Informer<KubeObject>;
  private readonly events: Informer<KubeObject>;
  private readonly leaves = new Map<string, { stamp: string; leaf: ParsedLeaf }>();
  /** each page, and whether it has been sent a whole list that later change lists continue */
  private readonly listeners = new Map<(m: StreamMessage) => void, { based: boolean }>();
  private version = 0;
  private pending?: NodeJS.Timeout;
  private computing = false;
  private stopped = false;
  private dirty = false;
  private lastComputeMs = 0;
  private published?: Published;
  private upstream: Snapshot['upstream'] = { reachable: true };

  constructor(private readonly opts: LiveViewOptions) {
    // a viewer retries its lists sooner than a controller would: a restarted server shows again within seconds
    const common = { clock: opts.clock, logger: opts.logger, listRetryMaxMs: 5000 };
    const store = this.observedStore(opts.store);
    this.certificates = new Informer<CertificateObj>(store, Certificate, common);
    this.requests = new Informer<CertificateRequestObj>(store, CertificateRequest, common);
    // each Certificate's requests, for its renewal time (dated from the current one, as the controllers do)
    this.requests.addIndex(BY_CONTROLLER, (r) => { const uid = controllerOwnerUID(r); return uid ? [uid] : []; });
    this.orders = new Informer(store, Order, common);
    this.challenges = new Informer(store, Challenge, common);
    this.events = new Informer(store, EventType, common);
    for (const inf of this.informers()) {
      const changed = () => this.changed();
      inf.onAdd(changed);
      inf.onUpdate(changed);
      inf.onDelete(changed);
    }
  }

  /**
   * The store as the informers use it, noting whether lists succeed: after a broken watch they
   * relist at once, so a failing list is an API that is gone (a restart, a network cut), and the
   * page must not claim to be live while it shows the last list it got.
   */
  private observedStore(store: Store): Store {
    const list = async <T extends KubeObject = KubeObject>(type: ResourceType, listOpts?: ListOptions): Promise<ListResult<T>> => {
      try {
        const result = await store.list<T>(type, listOpts);
        if (!this.upstream.reachable) this.setUpstream({ reachable: true });
        return result;
      } catch (e) {
        if (this.upstream.reachable) this.setUpstream({ reachable: false, problem: (e as Error).message, since: this.opts.clock.now().toISOString() });
        throw e;
      }
    };
    return new Proxy(store, {
      get: (target, prop) => {
        if (prop === 'list') return list;
        const v: unknown = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  private setUpstream(u: Snapshot['upstream']): void {
    this.upstream = u;
    if (u.reachable) this.opts.logger.info('dashboard: the API answers again');
    else this.opts.logger.warn({ err: u.problem }, 'dashboard: the API does not answer; showing the last list');
    this.changed();
  }

  private informers(): Informer<KubeObject>[] {
    return [this.certificates, this.requests, this.orders, this.challenges, this.events] as Informer<KubeObject>[];
  }

  async start(): Promise<void> {
    for (const inf of this.informers()) inf.start();
    await Promise.all(this.informers().map((i) => i.waitForSync()));
    // pages that connected while the lists were loading saw an empty list
    this.changed();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.pending);
    for (const inf of this.informers()) inf.stop();
    this.listeners.clear();
  }

  /**
   * Calls fn with the whole list (at once when one was computed, else when the first is), then
   * with what changed after each settled burst of changes. Returns the unsubscribe.
   */
  subscribe(fn: (m: StreamMessage) => void): () => void {
    this.listeners.set(fn, { based: !!this.published });
    if (this.published) fn(this.published.whole);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.version++;
    this.dirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.pending || this.computing || this.stopped) return;
    const wait = Math.min(MAX_SETTLE_MS, Math.max(this.opts.settleMs ?? 100, 4 * this.lastComputeMs));
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.publish();
    }, wait);
  }

  /** One list at a time, so change lists go out in the order of their versions. */
  private async publish(): Promise<void> {
    this.dirty = false;
    this.computing = true;
    const started = performance.now();
    try {
      const snapshot = await this.snapshot();
      const rows = new Map(snapshot.certificates.map((c) => [cacheKey(c.namespace, c.name), JSON.stringify(c)]));
      const previous = this.published;
      // one message object for every page: the stream serialises each object once (http-server.ts)
      const whole: StreamMessage = { event: 'snapshot', data: snapshot };
      this.published = { snapshot, rows, whole };
      const changes: StreamMessage | undefined = previous && { event: 'changes', data: changesBetween(previous, this.published) };
      for (const [fn, listener] of this.listeners) {
        if (changes && listener.based) fn(changes);
        else {
          listener.based = true;
          fn(whole);
        }
      }
    } catch (e) {
      this.opts.logger.warn({ err: (e as Error).message }, 'dashboard: cannot compute the certificate list');
    } finally {
      this.computing = false;
      this.lastComputeMs = performance.now() - started;
      if (this.dirty) this.schedule();
    }
  }

  private context(): ViewContext {
    return { now: this.opts.clock.now(), backoff: this.opts.backoff, certificates: this.certificates.list() };
  }

  /** The leaf in the Certificate's Secret, read again only when the status says it changed. */
  private async leafFor(crt: CertificateObj): Promise<ParsedLeaf> {
    const ns = crt.metadata.namespace ?? '';
    const key = cacheKey(ns, crt.metadata.name ?? '');
    const s = crt.status ?? {};
    const ready = crt.status?.conditions?.find((c) => c.type === 'Ready');
    const stamp = [crt.metadata.uid, crt.spec.secretName, s.notBefore, s.notAfter, s.revision, ready?.status, ready?.reason].join('|');
    const cached = this.leaves.get(key);
    if (cached?.stamp === stamp) return cached.leaf;
    const secret = await this.opts.store.get<Secret>(SecretType, ns, crt.spec.secretName);
    const leaf = leafOf(secret);
    this.leaves.set(key, { stamp, leaf });
    return leaf;
  }

  async snapshot(): Promise<Snapshot> {
    const version = this.version;
    const ctx = this.context();
    const crts = [...ctx.certificates];
    const live = new Set(crts.map((c) => cacheKey(c.metadata.namespace, c.metadata.name ?? '')));
    for (const k of this.leaves.keys()) if (!live.has(k)) this.leaves.delete(k);
    const certificates = await Promise.all(crts.map(async (c) => summarize(c, await this.leafFor(c), ctx, this.requests.byIndex(BY_CONTROLLER, c.metadata.uid ?? ''))));
    certificates.sort((a, b) => byCodeUnits(a.namespace, b.namespace) || byCodeUnits(a.name, b.name));
    return { version, generatedAt: ctx.now.toISOString(), upstream: this.upstream, certificates };
  }

  async certificate(namespace: string, name: string): Promise<CertificateDetail | undefined> {
    const crt = this.certificates.get(namespace, name);
    if (!crt) return undefined;
    const related: RelatedObjects = {
      requests: this.requests.list(namespace), orders: this.orders.list(namespace), challenges: this.challenges.list(namespace),
      events: this.events.list(namespace),
    };
    return detail(crt, await this.leafFor(crt), related, this.context());
  }
}

function changesBetween(before: Published, after: Published): Changes {
  const upserted = after.snapshot.certificates.filter((c) => before.rows.get(cacheKey(c.namespace, c.name)) !== after.rows.get(cacheKey(c.namespace, c.name)));
  const removed = before.snapshot.certificates.filter((c) => !after.rows.has(cacheKey(c.namespace, c.name))).map((c) => ({ namespace: c.namespace, name: c.name }));
  const { version, generatedAt, upstream } = after.snapshot;
  return { from: before.snapshot.version, version, generatedAt, upstream, upserted, removed };
}
