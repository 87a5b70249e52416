// How the commands that run against a cluster (controller, webhook) reach it: through the CLI's
// kubeconfig resolution (composition/kubeconfig-source.ts), so every command reaches the same
// cluster, with a kubeconfig that cannot be used reported as a one-line CLI error.
import { CliError } from './cli-error.ts';
import { resolveKubeconfig } from '../composition/kubeconfig-source.ts';
import type { ClusterConnection, ClusterStoreOptions } from '../store/kube/cluster-store.ts';

export async function connectToCluster(kubeconfigFlag: string | undefined,
  o: Omit<ClusterStoreOptions, 'kubeconfig' | 'serviceAccountRoot'>): Promise<ClusterConnection> {
  // loaded here, not at import: the client library is heavy and only these commands need it
  const { openClusterStore, ClusterConfigError } = await import('../store/kube/cluster-store.ts');
  const source = resolveKubeconfig({ flag: kubeconfigFlag });
  if (source.kind === 'none') throw new CliError(source.message);
  try {
    return await openClusterStore({
      ...o,
      kubeconfig: source.kind === 'file' ? source.path : undefined,
      serviceAccountRoot: source.kind === 'in-cluster' ? source.serviceAccountRoot : undefined,
    });
  } catch (e) {
    if (e instanceof ClusterConfigError) throw new CliError(e.message);
    throw e;
  }
}
