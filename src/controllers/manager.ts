// Starts every certsmith controller against one store. Filled in by the controllers work.
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';

export interface ControllerOptions {
  /** leave CertificateRequests for a person or another approver */
  noAutoApprove?: boolean;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** mirror issued Secrets to files */
  secretsDir?: string;
  keepFiles?: boolean;
  deployHook?: string;
  acmeHTTP01Listen?: string;
  acmeHTTP01SolverNameservers?: string[];
  dns01RecursiveNameservers?: string[];
  dns01RecursiveNameserversOnly?: boolean;
  /** where the Secrets of ClusterIssuers live (cert-manager's --cluster-resource-namespace) */
  clusterResourceNamespace?: string;
  /** ports of the operational servers; 0 picks a free port */
  metricsListen?: string;
  healthListen?: string;
}

export interface RunningControllers {
  stop(): Promise<void>;
}

export async function startControllers(_ctx: { store: Store; clock: Clock; options: ControllerOptions }): Promise<RunningControllers> {
  return { stop: async () => {} };
}
