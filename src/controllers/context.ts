// What every controller shell is handed: the store to write to, shared caches to read from,
// the clock, the event recorder, logs and the server's options.
import type { KubeObject } from '../api/meta.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import type { InformerFactory } from '../runtime/informer.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ControllerOptions } from '../shared/controller-options.ts';
import type { EventSpec } from './decision.ts';
import type { CertsmithMetrics } from '../metrics/registry.ts';

export interface Recorder {
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface ControllerContext {
  store: Store;
  informers: InformerFactory;
  clock: Clock;
  /** records as the controller this context was made for (forController) */
  recorder: Recorder;
  /** a recorder whose Events come from "cert-manager-<controller>", the source each cert-manager controller records with */
  recorderFor(controller: string): Recorder;
  logger: Logger;
  options: ControllerOptions;
  metrics: CertsmithMetrics;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** A controller as the manager runs it: which changes wake it, and what it does per key. */
export interface ControllerSpec {
  name: string;
  workers?: number;
  retry?: { baseDelayMs: number; maxDelayMs: number };
  /** registers informer handlers that call enqueue with "namespace/name" keys */
  watch(enqueue: (key: string) => void): void;
  reconcile(key: string): Promise<ReconcileResult | void>;
  /** releases what the controller holds beyond its queue (listeners, connections), after the workers stopped */
  stop?(): Promise<void>;
  /**
   * Called when stopping begins, before the manager waits for reconciles in flight: ends work
   * that would otherwise hold the stop up for minutes (running deploy hooks).
   */
  interrupt?(): void;
}

/**
 * cert-manager's name for a controller, "cert-manager-<controller>" (the prefix of its user agent,
 * util.PrefixFromUserAgent): the field manager it writes as and the source its Events carry, so
 * managedFields, server-side apply conflicts, `kubectl describe`'s From column and filters keyed
 * on them read as cert-manager's.
 */
export function componentNameOf(controller: string): string {
  return controller.startsWith('cert-manager-') ? controller : `cert-manager-${controller}`;
}

/**
 * The context a controller works with: the shared one, with Events recorded as that controller.
 * `kubectl describe` shows the source in its From column and `--field-selector source=` filters on it.
 */
export function forController(ctx: ControllerContext, controller: string): ControllerContext {
  return { ...ctx, recorder: ctx.recorderFor(controller) };
}

export function record(ctx: ControllerContext, obj: KubeObject, events: EventSpec[]): void {
  for (const e of events) (e.controller ? ctx.recorderFor(e.controller) : ctx.recorder).event(obj, e.type, e.reason, e.message);
}
