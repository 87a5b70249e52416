// Leader election on a coordination.k8s.io/v1 Lease with client-go's rules: a candidate takes
// the Lease when its holder has not renewed it within the lease duration, judged by when this
// candidate last saw the record change (its own clock, so skew between hosts does not matter),
// and a leader that cannot renew within the renew deadline steps down.
import type { KubeObject } from '../api/meta.ts';
import { LeaseType } from '../api/resources.ts';
import type { Store } from '../store/store.ts';
import { realClock, type Clock } from './clock.ts';
import { silentLogger, type Logger } from './logger.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectionOptions {
  store: Store;
  namespace: string;
  /** the Lease's name, e.g. "cert-manager-controller" */
  name: string;
  /** unique per process, e.g. hostname plus a random suffix */
  identity: string;
  clock?: Clock;
  logger?: Logger;
  /** cert-manager's defaults: 60 s / 40 s / 15 s */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** acquire attempts wait retryPeriod * (1 + random() * jitterFactor), as client-go; 0 in tests */
  jitterFactor?: number;
  random?: () => number;
  /** on stop(), hand the Lease back so another candidate need not wait out the lease duration */
  releaseOnCancel?: boolean;
  /** a holder known to have ended (an earlier run of this candidate): its Lease is taken at once */
  supersedes?: (holder: string) => boolean;
  onStartedLeading: () => void;
  /** called once leadership is lost or given up; the elector is then stopped (client-go: the process exits) */
  onStoppedLeading: () => void;
  onNewLeader?: (identity: string) => void;
}

/** Lease times are MicroTime: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function sameRecord(a: LeaseSpec | undefined, b: LeaseSpec | undefined): boolean {
  return !!a && !!b && a.holderIdentity === b.holderIdentity && a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime && a.renewTime === b.renewTime && a.leaseTransitions === b.leaseTransitions;
}

export class LeaderElector {
  private readonly o: Required<Omit<LeaderElectionOptions, 'onNewLeader' | 'logger' | 'clock' | 'supersedes'>> & Pick<LeaderElectionOptions, 'onNewLeader' | 'supersedes'>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private state: 'new' | 'candidate' | 'leader' | 'stopped' = 'new';
  private observedRecord?: LeaseSpec;
  private observedTime = 0;
  private observedLeader?: string;
  private cancelTimer?: () => void;
  private attempt?: Promise<boolean>;
  /** when the current run of failed renewals began */
  private renewRoundStart?: number;

  constructor(opts: LeaderElectionOptions) {
    this.o = {
      leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 15_000, jitterFactor: 1.2, random: Math.random,
      releaseOnCancel: true, ...opts,
    } as typeof this.o;
    if (this.o.leaseDurationMs <= this.o.renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline');
    // client-go's check: a renew round must fit more than one (jittered) retry
    if (this.o.renewDeadlineMs <= 1.2 * this.o.retryPeriodMs) throw new Error('renewDeadline must be greater than 1.2 × retryPeriod');
    this.clock = opts.clock ?? realClock;
    this.log = (opts.logger ?? silentLogger).child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
  }

  isLeader(): boolean {
    return this.state === 'leader';
  }

  /** The holder last seen on the Lease (possibly this candidate). */
  getLeader(): string | undefined {
    return this.observedLeader;
  }

  start(): void {
    if (this.state !== 'new') return;
    this.state = 'candidate';
    void this.tryAcquire();
  }

  /** Stops campaigning; a leader steps down (onStoppedLeading) and, by default, releases the Lease. */
  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'new') { this.state = 'stopped'; return; }
    const wasLeader = this.state === 'leader';
    this.state = 'stopped';
    this.cancelTimer?.();
    await this.attempt?.catch(() => false);
    if (wasLeader) {
      if (this.o.releaseOnCancel) await this.release();
      this.o.onStoppedLeading();
    }
  }

  private schedule(ms: number, fn: () => void): void {
    this.cancelTimer?.();
    this.cancelTimer = this.clock.setTimer(ms, fn);
  }

  private async tryAcquire(): Promise<void> {
    if (this.state !== 'candidate') return;
    const ok = await this.run();
    if (this.state !== 'candidate') return;
    if (ok) {
      this.state = 'leader';
      this.log.info('became leader');
      this.o.onStartedLeading();
      this.schedule(this.o.retryPeriodMs, () => void this.renew());
      return;
    }
    this.schedule(this.o.retryPeriodMs * (1 + this.o.random() * this.o.jitterFactor), () => void this.tryAcquire());
  }

  private async renew(): Promise<void> {
    if (this.state !== 'leader') return;
    const now = this.clock.now().getTime();
    this.renewRoundStart ??= now;
    const deadline = this.renewRoundStart + this.o.renewDeadlineMs;
    if (now >= deadline) { this.loseLeadership(); return; }
    const ok = await this.run();
    if (this.state !== 'leader') return;
    if (ok) {
      this.renewRoundStart = undefined;
      this.schedule(this.o.retryPeriodMs, () => void this.renew());
      return;
    }
    const left = deadline - this.clock.now().getTime();
    if (left <= 0) { this.loseLeadership(); return; }
    this.schedule(Math.min(this.o.retryPeriodMs, left), () => void this.renew());
  }

  private loseLeadership(): void {
    this.log.warn('failed to renew the lease within the renew deadline, stepping down');
    this.state = 'stopped';
    this.cancelTimer?.();
    this.o.onStoppedLeading();
  }

  private run(): Promise<boolean> {
    const attempt = this.tryAcquireOrRenew().catch((err: Error) => {
      this.log.warn({ err: err.message }, 'error acquiring or renewing the lease');
      return false;
    });
    this.attempt = attempt;
    return attempt;
  }

  private observe(record: LeaseSpec, now: number): void {
    if (!sameRecord(record, this.observedRecord)) {
      this.observedRecord = record;
      this.observedTime = now;
    }
    const holder = record.holderIdentity ?? '';
    if (holder && holder !== this.observedLeader) {
      this.observedLeader = holder;
      this.o.onNewLeader?.(holder);
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const nowDate = this.clock.now();
    const now = nowDate.getTime();
    const mine: LeaseSpec = {
      holderIdentity: this.o.identity, leaseDurationSeconds: Math.round(this.o.leaseDurationMs / 1000),
      acquireTime: microTime(nowDate), renewTime: microTime(nowDate), leaseTransitions: 0,
    };
    const lease = await this.o.store.get<Lease>(LeaseType, this.o.namespace, this.o.name);
    if (!lease) {
      // Two candidates racing here both create; the store lets only one succeed.
      await this.o.store.create<Lease>(LeaseType, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace: this.o.namespace, name: this.o.name }, spec: mine });
      this.observe(mine, now);
      return true;
    }
    const record = lease.spec ?? {};
    this.observe(record, now);
    const holder = record.holderIdentity ?? '';
    const durationMs = (record.leaseDurationSeconds ?? this.o.leaseDurationMs / 1000) * 1000;
    if (holder && holder !== this.o.identity && !this.o.supersedes?.(holder) && this.observedTime + durationMs > now) return false;
    if (holder === this.o.identity) {
      mine.acquireTime = record.acquireTime ?? mine.acquireTime;
      mine.leaseTransitions = record.leaseTransitions ?? 0;
    } else {
      mine.leaseTransitions = (record.leaseTransitions ?? 0) + 1;
    }
    // resourceVersion makes this a compare-and-swap: a rival's write in between gives 409.
    await this.o.store.update<Lease>(LeaseType, { ...lease, spec: mine });
    this.observe(mine, now);
    return true;
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.o.store.get<Lease>(LeaseType, this.o.namespace, this.o.name);
      if (!lease || lease.spec?.holderIdentity !== this.o.identity) return;
      const now = microTime(this.clock.now());
      await this.o.store.update<Lease>(LeaseType, {
        ...lease, spec: { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: lease.spec.leaseTransitions ?? 0 },
      });
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not release the lease');
    }
  }
}
