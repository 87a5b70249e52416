// certsmith's Prometheus metrics under cert-manager's names, so that dashboards and alerts
// written for cert-manager keep working. A registry of our own (not prom-client's global
// one) keeps several controller sets in one process, and tests, from mixing their series.
import type { Condition, KubeObject } from '../api/meta.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import { Counter, Gauge, Registry, Summary } from './prom-classes.ts';
import { registerProcessMetrics } from './process.ts';

/** Reasons the seed names; other values are allowed when a policy needs its own. */
export type RenewalDeferredReason = 'outside_window' | 'disabled' | 'invalid_config' | (string & {});
export type RenewalBypassedReason = 'expiry_imminent' | 'manual' | (string & {});

export interface AcmeRequestLabels {
  scheme: string;
  host: string;
  /** what the call does, e.g. "new-order", "finalize", "get-authorization" */
  action: string;
  method: string;
  /** HTTP status code, or 999 when no response arrived (cert-manager's convention) */
  status: number | string;
}

interface CertificateLike extends KubeObject {
  spec?: { issuerRef?: { name?: string; kind?: string; group?: string } };
  status?: { conditions?: Condition[]; notAfter?: string; notBefore?: string; renewalTime?: string };
}

const certificateLabels = ['name', 'namespace', 'issuer_name', 'issuer_kind', 'issuer_group'] as const;
const acmeLabels = ['scheme', 'host', 'action', 'method', 'status'] as const;

/** Whole seconds, as upstream's `float64(c.Now().Unix())`. */
const clockSeconds = (clock: Clock) => Math.floor(clock.now().getTime() / 1000);

function unixSeconds(t: string | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
}

function issuerLabels(c: CertificateLike) {
  const ref = c.spec?.issuerRef ?? {};
  return {
    name: c.metadata.name ?? '', namespace: c.metadata.namespace ?? '',
    issuer_name: ref.name ?? '', issuer_kind: ref.kind ?? '', issuer_group: ref.group ?? '',
  };
}

/** The objects the state gauges read at scrape time, like cert-manager's collectors over the informer caches. */
export interface MetricSources {
  certificates?: () => Iterable<KubeObject>;
  issuers?: () => Iterable<KubeObject>;
  clusterIssuers?: () => Iterable<KubeObject>;
  challenges?: () => Iterable<KubeObject>;
}

export interface MetricsOptions extends MetricSources {
  registry?: Registry;
  clock?: Clock;
}

interface IssuerLike extends KubeObject {
  status?: { conditions?: Condition[] };
}

interface ChallengeLike extends KubeObject {
  spec?: { dnsName?: string; type?: string };
  status?: { processing?: boolean; reason?: string; state?: string };
}

const readyConditions = ['True', 'False', 'Unknown'] as const;
/** Every state cert-manager's collector reports, "" (not yet set) included, so a series exists for each. */
const challengeStates = ['', 'errored', 'expired', 'invalid', 'pending', 'processing', 'ready', 'valid'] as const;
const readyOf = (o: IssuerLike | CertificateLike) => o.status?.conditions?.find((x) => x.type === 'Ready')?.status ?? 'Unknown';

export class CertsmithMetrics {
  readonly registry: Registry;
  private readonly sources: Required<MetricSources>;
  private readonly syncCalls: Counter<'controller'>;
  private readonly syncErrors: Counter<'controller'>;
  private readonly acmeRequests: Counter<(typeof acmeLabels)[number]>;
  private readonly acmeDuration: Summary<(typeof acmeLabels)[number]>;
  private readonly deferred: Counter<'reason'>;
  private readonly bypassed: Counter<'reason'>;

  constructor(opts: MetricsOptions = {}) {
    this.registry = opts.registry ?? new Registry();
    registerProcessMetrics(this.registry);
    const none = () => [];
    this.sources = {
      certificates: opts.certificates ?? none, issuers: opts.issuers ?? none,
      clusterIssuers: opts.clusterIssuers ?? none, challenges: opts.challenges ?? none,
    };
    const clock = opts.clock ?? realClock;
    const registers = [this.registry];
    const sources = this.sources;
    const certs = () => [...sources.certificates()] as CertificateLike[];

    const timestampGauge = (name: string, help: string, pick: (c: CertificateLike) => string | undefined) =>
      new Gauge({
        name, help, labelNames: certificateLabels, registers,
        collect() {
          this.reset();
          for (const c of certs()) this.set(issuerLabels(c), unixSeconds(pick(c)));
        },
      });
    timestampGauge('certmanager_certificate_expiration_timestamp_seconds', 'The date after which the certificate expires. Expressed as a Unix Epoch Time.', (c) => c.status?.notAfter);
    timestampGauge('certmanager_certificate_not_after_timestamp_seconds', 'The timestamp after which the certificate is invalid, expressed as a Unix Epoch Time.', (c) => c.status?.notAfter);
    timestampGauge('certmanager_certificate_not_before_timestamp_seconds', 'The timestamp before which the certificate is invalid, expressed as a Unix Epoch Time.', (c) => c.status?.notBefore);
    timestampGauge('certmanager_certificate_renewal_timestamp_seconds', 'The number of seconds before expiration time the certificate should renew.', (c) => c.status?.renewalTime);

    new Gauge({
      name: 'certmanager_certificate_ready_status', help: 'The ready status of the certificate.',
      labelNames: ['name', 'namespace', 'condition', 'issuer_name', 'issuer_kind', 'issuer_group'], registers,
      collect() {
        this.reset();
        for (const c of certs()) {
          const ready = readyOf(c);
          for (const condition of readyConditions) {
            const { name, namespace, ...issuer } = issuerLabels(c);
            this.set({ name, namespace, condition, ...issuer }, condition === ready ? 1 : 0);
          }
        }
      },
    });
    new Gauge({
      name: 'certmanager_issuer_ready_status', help: 'The ready status of the issuer.',
      labelNames: ['name', 'namespace', 'condition'], registers,
      collect() {
        this.reset();
        for (const i of sources.issuers() as Iterable<IssuerLike>) {
          const ready = readyOf(i);
          for (const condition of readyConditions) {
            this.set({ name: i.metadata.name ?? '', namespace: i.metadata.namespace ?? '', condition }, condition === ready ? 1 : 0);
          }
        }
      },
    });
    new Gauge({
      name: 'certmanager_clusterissuer_ready_status', help: 'The ready status of the clusterissuer.',
      labelNames: ['name', 'condition'], registers,
      collect() {
        this.reset();
        for (const i of sources.clusterIssuers() as Iterable<IssuerLike>) {
          const ready = readyOf(i);
          for (const condition of readyConditions) this.set({ name: i.metadata.name ?? '', condition }, condition === ready ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'certmanager_certificate_challenge_status', help: 'The status of certificate challenges.',
      labelNames: ['name', 'namespace', 'domain', 'type', 'processing', 'reason', 'status'], registers,
      collect() {
        this.reset();
        for (const ch of sources.challenges() as Iterable<ChallengeLike>) {
          const state = ch.status?.state ?? '';
          const labels = {
            name: ch.metadata.name ?? '', namespace: ch.metadata.namespace ?? '', domain: ch.spec?.dnsName ?? '',
            type: ch.spec?.type ?? '', processing: String(ch.status?.processing ?? false), reason: ch.status?.reason ?? '',
          };
          for (const status of challengeStates) this.set({ ...labels, status }, status === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'certmanager_clock_time_seconds_gauge', help: 'The clock time given in seconds (from 1970/01/01 UTC).', registers,
      collect() { this.set(clockSeconds(clock)); },
    });
    // upstream keeps serving the deprecated counter beside the gauge; dashboards and integrations read it
    new Counter({
      name: 'certmanager_clock_time_seconds', help: 'DEPRECATED: use clock_time_seconds_gauge instead. The clock time given in seconds (from 1970/01/01 UTC).', registers,
      collect() { this.reset(); this.inc(clockSeconds(clock)); },
    });

    this.syncCalls = new Counter({ name: 'certmanager_controller_sync_call_count', help: 'The number of sync() calls made by a controller.', labelNames: ['controller'], registers });
    this.syncErrors = new Counter({ name: 'certmanager_controller_sync_error_count', help: 'The number of errors encountered during controller sync().', labelNames: ['controller'], registers });
    this.acmeRequests = new Counter({ name: 'certmanager_http_acme_client_request_count', help: 'The number of requests made by the ACME client.', labelNames: acmeLabels, registers });
    this.acmeDuration = new Summary({
      name: 'certmanager_http_acme_client_request_duration_seconds', help: 'The HTTP request latencies in seconds for the ACME client.',
      // as client_golang's Summary upstream uses: quantiles over the last 10 minutes (5 buckets), so a
      // CA that was slow an hour ago does not hide that it is fast now, or the other way round
      labelNames: acmeLabels, percentiles: [0.5, 0.9, 0.99], maxAgeSeconds: 600, ageBuckets: 5, registers,
    });
    this.deferred = new Counter({ name: 'certmanager_certificate_renewal_deferred_total', help: 'Renewals that were due but deferred, by reason (e.g. outside_window).', labelNames: ['reason'], registers });
    this.bypassed = new Counter({ name: 'certmanager_certificate_renewal_bypassed_total', help: 'Renewals that went ahead despite the renewal policy, by reason (e.g. expiry_imminent).', labelNames: ['reason'], registers });
  }

  /** Where the state gauges read from at scrape time (normally the informers' lists). */
  setSources(sources: MetricSources): void {
    Object.assign(this.sources, Object.fromEntries(Object.entries(sources).filter(([, fn]) => fn !== undefined)));
  }

  controllerSync(controller: string): void {
    this.syncCalls.inc({ controller });
  }

  controllerSyncError(controller: string): void {
    this.syncErrors.inc({ controller });
  }

  acmeRequest(labels: AcmeRequestLabels, durationSeconds: number): void {
    const l = { ...labels, status: String(labels.status) };
    this.acmeRequests.inc(l);
    this.acmeDuration.observe(l, durationSeconds);
  }

  renewalDeferred(reason: RenewalDeferredReason): void {
    this.deferred.inc({ reason });
  }

  renewalBypassed(reason: RenewalBypassedReason): void {
    this.bypassed.inc({ reason });
  }

  /** The exposition text, as /metrics serves it. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

export function createMetrics(opts: MetricsOptions = {}): CertsmithMetrics {
  return new CertsmithMetrics(opts);
}
