// Starts every certsmith controller against one store: the same set on the embedded SQLite
// server and on a Kubernetes cluster.
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import { InformerFactory } from '../runtime/informer.ts';
import { Controller, ControllerManager } from '../runtime/controller.ts';
import { EventRecorder } from '../runtime/events.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { createMetrics, type CertsmithMetrics } from '../metrics/registry.ts';
import { startOperationalServers, type OperationalServers } from '../metrics/http.ts';
import { Certificate, Challenge, ClusterIssuer, Issuer } from '../api/resources.ts';
import { componentNameOf, type ControllerContext, type ControllerSpec, type Recorder } from './context.ts';
import type { ControllerOptions } from '../shared/controller-options.ts';

export type { ControllerOptions };
import { triggerController } from './certificates/trigger/controller.ts';
import { keyManagerController } from './certificates/keymanager/controller.ts';
import { requestManagerController } from './certificates/requestmanager/controller.ts';
import { issuingController } from './certificates/issuing/controller.ts';
import { readinessController } from './certificates/readiness/controller.ts';
import { revisionManagerController } from './certificates/revisionmanager/controller.ts';
import { requestController } from './requests/controller.ts';
import { issuerController } from './issuers/controller.ts';
import { filesControllers } from './files/controller.ts';
import { acmeControllers } from './acme/controllers.ts';
import { gatewayShimController, ingressShimController } from './certificate-shim/controller.ts';
import { caInjectorControllers } from './cainjector/controller.ts';
import { notificationsController } from './notifications/controller.ts';

export interface RunningControllers {
  manager: ControllerManager;
  metrics: CertsmithMetrics;
  servers?: OperationalServers;
  context: ControllerContext;
  stop(): Promise<void>;
}

export async function startControllers(o: {
  store: Store; clock: Clock; options: ControllerOptions; logger?: Logger;
  /** watch one namespace only (cert-manager's --namespace); omit for all */
  namespace?: string;
  /** a registry already being served, e.g. by a leader-election follower that starts controllers later */
  metrics?: CertsmithMetrics;
}): Promise<RunningControllers> {
  const logger = o.logger ?? createLogger({ name: 'certsmith' });
  const informers = new InformerFactory(o.store, { clock: o.clock, logger, namespace: o.namespace });
  const metrics = o.metrics ?? createMetrics({ clock: o.clock });
  const events = new EventRecorder({ store: o.store, clock: o.clock, component: 'cert-manager', logger });
  const recorders = new Map<string, Recorder>();
  const recorderFor = (controller: string) => {
    let r = recorders.get(controller);
    if (!r) recorders.set(controller, r = events.forComponent(componentNameOf(controller)));
    return r;
  };
  const ctx: ControllerContext = {
    store: informers.observing(o.store), informers, clock: o.clock, logger, options: o.options, metrics, recorder: events, recorderFor,
  };
  metrics.setSources({
    certificates: () => informers.informerFor(Certificate).list(), issuers: () => informers.informerFor(Issuer).list(),
    clusterIssuers: () => informers.informerFor(ClusterIssuer).list(), challenges: () => informers.informerFor(Challenge).list(),
  });

  const specs: ControllerSpec[] = [
    triggerController(ctx), keyManagerController(ctx), requestManagerController(ctx), issuingController(ctx),
    readinessController(ctx), revisionManagerController(ctx), requestController(ctx),
    issuerController(ctx, false), issuerController(ctx, true), ...acmeControllers(ctx),
    ...(o.options.secretsDir ? filesControllers(ctx) : []),
    ...(o.options.ingressShim !== false ? [ingressShimController(ctx)] : []),
    ...(o.options.enableGatewayAPI ? [gatewayShimController(ctx)] : []),
    ...(o.options.caInjector !== false ? caInjectorControllers(ctx) : []),
    ...(o.options.notifications?.webhookUrl || o.options.notifications?.exec ? [notificationsController(ctx, o.options.notifications)] : []),
  ];
  const manager = new ControllerManager({ informers, logger });
  for (const spec of specs) manager.add(toController(ctx, spec));
  await manager.start();

  let servers: OperationalServers | undefined;
  if (o.options.metricsListen !== '' || o.options.healthListen !== '') {
    servers = await startOperationalServers({
      metricsAddress: o.options.metricsListen ?? '127.0.0.1:9402',
      healthAddress: o.options.healthListen ?? '127.0.0.1:9403',
      registry: metrics.registry,
      // a full disk fails every write: not ready, as the API server's own /readyz says too
      ready: () => manager.isReady() && !o.store.storageProblem?.(),
    });
  }
  // stopped by whoever started them and by the composition they run in: once
  let stopping: Promise<void> | undefined;
  return {
    manager, metrics, servers, context: ctx,
    stop() {
      stopping ??= (async () => {
        await servers?.close();
        for (const s of specs) s.interrupt?.();
        await manager.stop();
        await Promise.all(specs.map((s) => s.stop?.()));
      })();
      return stopping;
    },
  };
}

function toController(ctx: ControllerContext, spec: ControllerSpec): Controller {
  const controller = new Controller({
    name: spec.name,
    workers: spec.workers,
    clock: ctx.clock,
    logger: ctx.logger,
    metrics: ctx.metrics,
    backoff: spec.retry,
    reconcile: async (key) => {
      const r = await spec.reconcile(key);
      return r?.requeueAfterMs !== undefined ? { requeueAfter: r.requeueAfterMs } : undefined;
    },
  });
  spec.watch((key) => controller.enqueue(key));
  return controller;
}
