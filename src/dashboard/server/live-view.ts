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

export interface Snapshot {
  /** grows with every change seen: the browser refetches what it shows when it moves */
  version: number;
  generatedAt: string;
  /** whether the API answers: while it does not, the list is what was last seen */
  upstream: { reachable: boolean; problem?: string; since?: string };
  certificates: CertificateSummary[];
}

export interface LiveViewOptions {
  store: Store;
  clock: Clock;
  backoff: BackoffConfig;
  logger: Logger;
  /** how long changes are gathered before one snapshot is sent (a renewal touches many objects) */
  settleMs?: number;
}

export class LiveView {
  private readonly certificates: Informer<CertificateObj>;
  private readonly requests: Informer<CertificateRequestObj>;
  private readonly orders: Informer<KubeObject>;
  private readonly challenges: Informer<KubeObject>;
  private readonly events: Informer<KubeObject>;
  private readonly leaves = new Map<string, { stamp: string; leaf: ParsedLeaf }>();
  private readonly listeners = new Set<(s: Snapshot) => void>();
  private version = 0;
  private pending?: NodeJS.Timeout;
  private upstream: Snapshot['upstream'] = { reachable: true };

  constructor(private readonly opts: LiveViewOptions) {
    // a viewer retries its lists sooner than a controller would: a restarted server shows again within seconds
    const common = { clock: opts.clock, logger: opts.logger, listRetryMaxMs: 5000 };
    const store = this.observedStore(opts.store);
    this.certificates = new Informer<CertificateObj>(store, Certificate, common);
    this.requests = new Informer<CertificateRequestObj>(store, CertificateRequest, common);
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
    clearTimeout(this.pending);
    for (const inf of this.informers()) inf.stop();
    this.listeners.clear();
  }

  /** Called with a new snapshot after each settled burst of changes; returns the unsubscribe. */
  subscribe(fn: (s: Snapshot) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.version++;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.snapshot().then((s) => {
        for (const fn of this.listeners) fn(s);
      }, (e: Error) => this.opts.logger.warn({ err: e.message }, 'dashboard: cannot compute the certificate list'));
    }, this.opts.settleMs ?? 100);
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
    const certificates = await Promise.all(crts.map(async (c) => summarize(c, await this.leafFor(c), ctx)));
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
