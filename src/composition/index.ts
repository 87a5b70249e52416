// The one place where certsmith's parts are put together: a backend Store, admission in front of
// it (defaulting and validation of certsmith's kinds), optionally the Kubernetes API served over
// HTTPS, and the controller manager. `certsmith server`, `certsmith controller`, the lifecycle
// test harness and the benches all build their stack here, so what a test or a bench measures
// is what a user runs. The CLI reaches the controllers only through this folder.
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import type { CertsmithMetrics } from '../metrics/registry.ts';
import { withAdmission } from '../server/admission.ts';
import { startWebhookDispatcher } from '../server/admission-webhooks/dispatcher.ts';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../server/api-server.ts';
import { startControllers, type RunningControllers } from '../controllers/manager.ts';
import { type AggregatedAPICall, type ControllerOptions } from '../shared/controller-options.ts';
import { aggregatedAPICaller } from '../server/aggregation.ts';
import { HttpStore } from '../store/http/http-store.ts';
import { serviceAccountTokenRequester } from '../store/kube/token-request.ts';
import { StoreError } from '../store/store.ts';
import { resolveBackoffConfig } from './backoff.ts';

export type { ControllerOptions, RunningControllers, RunningApiServer };

export interface CompositionOptions {
  /** the backend: the embedded SQLite store, or a cluster's (store/kube) */
  store: Store;
  clock: Clock;
  logger?: Logger;
  /**
   * admission (src/server/admission.ts) in front of the backend: on unless the backend's own API
   * server admits every write (a Kubernetes cluster, or the embedded server over HTTPS). Off, the
   * stack stores what the schema refuses: only tests that stand for a cluster without a webhook do so.
   */
  admission?: boolean;
  /**
   * certsmith's own defaulting and validation of cert-manager's kinds (default on). Off
   * (`certsmith server --no-builtin-admission`), cert-manager's webhook registered through a
   * webhook configuration does it; the structural checks every kind gets stay on.
   */
  builtinAdmission?: boolean;
  /**
   * call the Validating/MutatingWebhookConfigurations stored in the backend on every write,
   * the in-process controllers' included, as kube-apiserver does (default: with admission)
   */
  admissionWebhooks?: boolean;
}

export interface ControllerStart {
  options: ControllerOptions;
  /** watch one namespace only (cert-manager's --namespace); omit for all */
  namespace?: string;
  /** a metrics registry already being served (a leader-election follower that starts later) */
  metrics?: CertsmithMetrics;
  logger?: Logger;
  /**
   * what the controllers see of the admitted store: a bench's write counter or a test's backend
   * double. Writes through the view still go through admission.
   */
  view?: (store: Store) => Store;
}

export interface Composition {
  /** the backend, without admission: for checks that must see exactly what is stored */
  readonly backend: Store;
  /** the store every writer uses (the API server, the controllers, --apply) */
  readonly store: Store;
  /** serves the Kubernetes API on `store` (or a view of it, e.g. a bench's write counter); stopped by stop() */
  serveApi(o: Omit<ApiServerOptions, 'store'> & { view?: (store: Store) => Store }): Promise<RunningApiServer>;
  /** starts every controller on `store`; stopped by stop() */
  startControllers(o: ControllerStart): Promise<RunningControllers>;
  /** stops what was started, newest first (controllers before the API server), then closes the store */
  stop(): Promise<void>;
}

/**
 * The backoff the trigger uses, by cert-manager's flag rules: 0 or absent takes the default; a
 * negative value or max < initial is refused here, so no caller (flag, test, bench) can start
 * controllers that retry failed issuances without waiting.
 */
export function normalizeControllerOptions(options: ControllerOptions): ControllerOptions {
  const backoff = resolveBackoffConfig({ initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs });
  return { ...options, backoffInitialMs: backoff.initialMs, backoffMaxMs: backoff.maxMs };
}

/**
 * How webhook DNS-01 solvers are reached: through the cluster's API server when the store is one
 * (its aggregation layer proxies to the solver's APIService), else through the embedded server's
 * own aggregation over the store's APIService and Service objects.
 */
function aggregatedAPIFor(store: Store): AggregatedAPICall {
  if (store instanceof HttpStore) {
    return async (method, path, body) => {
      try {
        return await store.request(method, path, { body });
      } catch (e) {
        if (e instanceof StoreError) return { status: e.code, body: { message: e.message } };
        throw e;
      }
    };
  }
  return aggregatedAPICaller(store);
}

/** Starts the controllers on a store as given (no admission added): `certsmith controller` against a cluster. */
export function startControllerManager(o: ControllerStart & { store: Store; clock: Clock }): Promise<RunningControllers> {
  return startControllers({
    store: o.view ? o.view(o.store) : o.store, clock: o.clock, logger: o.logger, namespace: o.namespace, metrics: o.metrics,
    options: normalizeControllerOptions({
      ...o.options,
      aggregatedAPI: o.options.aggregatedAPI ?? aggregatedAPIFor(o.store),
      // route53.auth.kubernetes: ServiceAccount tokens from the cluster's TokenRequest API
      serviceAccountToken: o.options.serviceAccountToken ?? (o.store instanceof HttpStore ? serviceAccountTokenRequester(o.store) : undefined),
    }),
  });
}

export function compose(o: CompositionOptions): Composition {
  const webhooks = o.admission !== false && o.admissionWebhooks !== false
    ? startWebhookDispatcher({ store: o.store, logger: o.logger?.child({ component: 'admission-webhooks' }) })
    : undefined;
  const store = o.admission === false ? o.store : withAdmission(o.store, { builtin: o.builtinAdmission, webhooks });
  const stops: Array<() => Promise<void>> = [];
  let stopped = false;
  return {
    backend: o.store,
    store,
    async serveApi({ view, ...api }) {
      const running = await startApiServer({ logger: o.logger?.child({ component: 'apiserver' }), ...api, store: view ? view(store) : store });
      stops.push(() => running.close());
      return running;
    },
    async startControllers(c) {
      const running = await startControllerManager({ ...c, store, clock: o.clock, logger: c.logger ?? o.logger });
      stops.push(() => running.stop());
      return running;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const stop of stops.reverse()) await stop().catch(() => {});
      webhooks?.stop();
      await store.close();
    },
  };
}
