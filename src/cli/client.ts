// How a CLI command reaches the API: the kubeconfig (--kubeconfig, $KUBECONFIG,
// ./.certsmith/kubeconfig) turned into an HttpStore.
import type { Command } from 'commander';
import type { ClientConfig } from '../server/kubeconfig.ts';
import type { HttpStore } from '../store/http/http-store.ts';
import { resolveResourceName, type ResourceType } from '../api/resources.ts';
import { CliError } from './cli-error.ts';

export interface Connection {
  store: HttpStore;
  config: ClientConfig;
  /** the namespace commands use when -n is not given */
  namespace: string;
}

export async function connect(cmd: Command): Promise<Connection> {
  const { kubeconfig } = cmd.optsWithGlobals() as { kubeconfig?: string };
  // loaded when a command talks to the server, not when the program is built: `--help` and
  // commands that never connect do not pay for the kubeconfig parser and the HTTP client
  const [{ loadClientConfig, KubeconfigError }, { HttpStore }] = await Promise.all([
    import('../server/kubeconfig.ts'), import('../store/http/http-store.ts'),
  ]);
  let config: ClientConfig;
  try {
    config = loadClientConfig({ kubeconfig });
  } catch (e) {
    if (e instanceof KubeconfigError) throw new CliError(e.message);
    throw new CliError(`cannot read the kubeconfig: ${(e as Error).message}`);
  }
  // a person at a terminal is not a controller: no client-side throttling
  const store = new HttpStore({ server: config.server, caPem: config.caPem, token: config.token, insecure: config.insecure, qps: 0, userAgent: 'certsmith-cli', fieldManager: 'certsmith' });
  return { store, config, namespace: config.namespace ?? 'default' };
}

export function resourceTypeNamed(name: string): ResourceType {
  const t = resolveResourceName(name);
  if (!t) throw new CliError(`the server doesn't have a resource type "${name}"`);
  return t;
}

/** kubectl's way of naming an object in messages: certificate.cert-manager.io/foo */
export function qualifiedKind(t: ResourceType): string {
  return t.group ? `${t.singular}.${t.group}` : t.singular;
}
