// core/v1 Events written like client-go's recorder: an identical repeat (same object,
// type, reason and message) bumps count and lastTimestamp on the Event already written
// instead of creating another, so a controller retrying every few seconds leaves one Event;
// and, as client-go's spam filter, each object gets a burst of 25 events then one per 5
// minutes, so an object failing in a tight loop cannot flood the store.
import { BoundedCache } from './bounded-cache.ts';
import type { KubeObject } from '../api/meta.ts';
import { rfc3339 } from '../api/time.ts';
import { EventType } from '../api/resources.ts';
import { isNotFound, type Store } from '../store/store.ts';
import { realClock, type Clock } from './clock.ts';
import { silentLogger, type Logger } from './logger.ts';

export type EventKind = 'Normal' | 'Warning';

export interface CoreEvent extends KubeObject {
  involvedObject: { kind: string; apiVersion: string; namespace?: string; name: string; uid?: string; resourceVersion?: string };
  reason: string;
  message: string;
  type: EventKind;
  source: { component: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent: string;
  reportingInstance: string;
}

export interface EventRecorderOptions {
  store: Store;
  /** e.g. "cert-manager-certificates-issuing": cert-manager's component names, so event filters keep working */
  component: string;
  host?: string;
  clock?: Clock;
  logger?: Logger;
  /** how many distinct events are remembered for aggregation (client-go: 4096) */
  cacheSize?: number;
  /** events one object may have in a burst, and the seconds that earn it one more (client-go: 25 and 300) */
  spamBurst?: number;
  spamRefillSeconds?: number;
}

interface Seen { namespace: string; name: string; count: number; firstTimestamp: string }
interface Bucket { tokens: number; at: number }


export class EventRecorder {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly log: Logger;
  /** the logger given, without the component binding: each Event names the component it comes from */
  private readonly eventLog: Logger;
  private readonly component: string;
  private readonly host: string;
  private readonly seen: BoundedCache<string, Seen>;
  private readonly buckets: BoundedCache<string, Bucket>;
  private readonly spamBurst: number;
  private readonly refillMs: number;
  /** one write at a time per aggregation key, so that a burst of repeats counts up instead of racing to create */
  private readonly inFlight = new Map<string, Promise<void>>();
  private seq = 0;

  constructor(opts: EventRecorderOptions) {
    this.store = opts.store;
    this.clock = opts.clock ?? realClock;
    this.component = opts.component;
    this.host = opts.host ?? '';
    this.seen = new BoundedCache(opts.cacheSize ?? 4096);
    this.buckets = new BoundedCache(opts.cacheSize ?? 4096);
    this.spamBurst = opts.spamBurst ?? 25;
    this.refillMs = (opts.spamRefillSeconds ?? 300) * 1000;
    this.eventLog = opts.logger ?? silentLogger;
    this.log = this.eventLog.child({ component: opts.component });
  }

  /** Records an event about obj. Never rejects: a failure to record is logged, not raised. */
  event(obj: KubeObject, type: EventKind, reason: string, message: string): Promise<void> {
    return this.eventFrom(this.component, obj, type, reason, message);
  }

  /**
   * A recorder whose Events come from another component: cert-manager's controllers each record
   * as "cert-manager-<controller name>". The aggregation cache and the per-object spam filter
   * stay this recorder's, shared by every component, so their bounds hold for the whole process.
   */
  forComponent(component: string): Pick<EventRecorder, 'event'> {
    return { event: (obj, type, reason, message) => this.eventFrom(component, obj, type, reason, message) };
  }

  private eventFrom(component: string, obj: KubeObject, type: EventKind, reason: string, message: string): Promise<void> {
    let key: string;
    try {
      const m = obj.metadata;
      key = JSON.stringify([component, this.host, obj.kind, obj.apiVersion, m.namespace ?? '', m.name, m.uid ?? '', type, reason, message]);
    } catch {
      return Promise.resolve();
    }
    if (!this.takeToken(obj)) {
      this.log.debug({ reason, object: `${obj.metadata.namespace ?? ''}/${obj.metadata.name}` }, 'event dropped: too many events for this object');
      return Promise.resolve();
    }
    // the log tells the story too, as cert-manager's event broadcaster writes every Event to its
    // log: what went wrong at warn, the rest at debug (an Event never holds a key)
    this.eventLog[type === 'Warning' ? 'warn' : 'debug']({ component, kind: obj.kind, object: `${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`, reason }, message);
    const previous = this.inFlight.get(key) ?? Promise.resolve();
    const write = previous.then(() => this.write(component, key, obj, type, reason, message)).catch((err: Error) => {
      // NotFound: the object's namespace was deleted meanwhile (a controller finishing its work on
      // something that was in it), which the Event has nothing to add to
      this.log[isNotFound(err) ? 'debug' : 'warn']({ reason, object: `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`, err: err.message }, 'could not record event');
    });
    this.inFlight.set(key, write);
    void write.then(() => { if (this.inFlight.get(key) === write) this.inFlight.delete(key); });
    return write;
  }

  /** A token bucket per object (client-go's EventSourceObjectSpamFilter), refilled by the recorder's clock. */
  private takeToken(obj: KubeObject): boolean {
    const m = obj.metadata;
    const key = `${obj.apiVersion}/${obj.kind}/${m.namespace ?? ''}/${m.name}/${m.uid ?? ''}`;
    const now = this.clock.now().getTime();
    const b = this.buckets.get(key) ?? { tokens: this.spamBurst, at: now };
    b.tokens = Math.min(this.spamBurst, b.tokens + Math.max(0, now - b.at) / this.refillMs);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Resolves when every event recorded so far is written (or has failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.all(this.inFlight.values());
  }

  private async write(component: string, key: string, obj: KubeObject, type: EventKind, reason: string, message: string): Promise<void> {
    const now = rfc3339(this.clock.now());
    const prior = this.seen.get(key);
    if (prior) {
      const count = prior.count + 1;
      try {
        await this.store.patch(EventType, prior.namespace, prior.name, 'merge', { count, lastTimestamp: now, message });
        this.remember(key, { ...prior, count });
        return;
      } catch (err) {
        // The Event was deleted (or expired) meanwhile: write it again, keeping its history.
        if (!isNotFound(err)) throw err;
        await this.create(component, key, obj, type, reason, message, { ...prior, count }, now);
        return;
      }
    }
    const namespace = obj.metadata.namespace || 'default';
    await this.create(component, key, obj, type, reason, message, { namespace, name: this.eventName(obj), count: 1, firstTimestamp: now }, now);
  }

  private async create(component: string, key: string, obj: KubeObject, type: EventKind, reason: string, message: string, s: Seen, now: string): Promise<void> {
    const m = obj.metadata;
    const ev: CoreEvent = {
      apiVersion: 'v1', kind: 'Event',
      metadata: { namespace: s.namespace, name: s.name },
      involvedObject: {
        kind: obj.kind, apiVersion: obj.apiVersion, name: m.name ?? '',
        ...(m.namespace ? { namespace: m.namespace } : {}), ...(m.uid ? { uid: m.uid } : {}),
        ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
      },
      reason, message, type,
      source: { component, ...(this.host ? { host: this.host } : {}) },
      firstTimestamp: s.firstTimestamp, lastTimestamp: now, count: s.count,
      reportingComponent: component, reportingInstance: this.host,
    };
    await this.store.create(EventType, ev);
    this.remember(key, s);
  }

  /** `<object name>.<hex>` like client-go (which uses the nanosecond time); a counter keeps names unique under a fake clock. */
  private eventName(obj: KubeObject): string {
    const ns = BigInt(this.clock.now().getTime()) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    return `${obj.metadata.name}.${ns.toString(16)}`;
  }

  private remember(key: string, s: Seen): void {
    this.seen.set(key, s);
  }
}
