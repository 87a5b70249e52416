// The read-only dashboard: a LiveView over any Store (the server's own, or the API of a cluster
// or a certsmith server reached through the kubeconfig) served on a loopback listener.
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import { defaultBackoff, type BackoffConfig } from '../shared/backoff.ts';
import { LiveView } from './server/live-view.ts';
import { serveDashboard, type DashboardServer } from './server/http-server.ts';

export { checkLoopback, DashboardAddressError } from './server/http-server.ts';

export interface DashboardOptions {
  store: Store;
  host: string;
  port: number;
  clock: Clock;
  logger: Logger;
  /** the controllers' --backoff-initial/--backoff-max, so the next attempt shown is theirs */
  backoff?: BackoffConfig;
}

export async function startDashboard(o: DashboardOptions): Promise<DashboardServer> {
  const view = new LiveView({ store: o.store, clock: o.clock, logger: o.logger, backoff: o.backoff ?? defaultBackoff });
  // listen first: a server still listing its objects answers with an empty list, then streams
  let server: DashboardServer;
  try {
    server = await serveDashboard(view, { host: o.host, port: o.port, logger: o.logger });
  } catch (e) {
    view.stop();
    throw e;
  }
  view.start().catch((e: Error) => o.logger.warn({ err: e.message }, 'dashboard: informers stopped before they synced'));
  return {
    ...server,
    async close() {
      view.stop();
      await server.close();
    },
  };
}
