// How a CLI command reaches the API: the kubeconfig that `certsmith controller` would use too
// (composition/kubeconfig-source.ts: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster,
// ./.certsmith/kubeconfig) turned into an HttpStore.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ClientConfig } from '../server/kubeconfig.ts';
import { resolveKubeconfig, serviceAccountDir, type KubeconfigEnvironment } from '../composition/kubeconfig-source.ts';
import type { HttpStore } from '../store/http/http-store.ts';
import { resolveResourceName, type ResourceType } from '../api/resources.ts';
import { CliError } from './cli-error.ts';
import { durationFlag } from './duration-flag.ts';

export interface Connection {
  store: HttpStore;
  config: ClientConfig;
  /** the namespace commands use when -n is not given */
  namespace: string;
}

export async function connect(cmd: Command): Promise<Connection> {
  const { kubeconfig, requestTimeout } = cmd.optsWithGlobals() as { kubeconfig?: string; requestTimeout?: string };
  const timeoutMs = requestTimeoutFlag(requestTimeout);
  const config = await clientConfig({ flag: kubeconfig });
  // loaded when a command talks to the server, not when the program is built: `--help` and
  // commands that never connect do not pay for the HTTP client
  const { HttpStore } = await import('../store/http/http-store.ts');
  // a person at a terminal is not a controller: no client-side throttling
  // certsmith server's socket when its kubeconfig names one: no TLS set-up per command
  const store = new HttpStore({
    server: config.server, caPem: config.caPem, token: config.token, insecure: config.insecure, socketPath: config.socketPath,
    qps: 0, userAgent: 'certsmith-cli', fieldManager: 'certsmith', ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  return { store, config, namespace: config.namespace ?? 'default' };
}

/** --request-timeout as kubectl reads it: a duration ("0" waits forever), or a number of seconds. */
export function requestTimeoutFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? Number(value) * 1000 : durationFlag(value, '--request-timeout');
}

/** The API server, CA and credentials a CLI command uses, from the one kubeconfig resolution. */
export async function clientConfig(environment: KubeconfigEnvironment): Promise<ClientConfig> {
  const source = resolveKubeconfig(environment);
  if (source.kind === 'none') throw new CliError(source.message);
  if (source.kind === 'in-cluster') {
    const dir = `${source.serviceAccountRoot}${serviceAccountDir}`;
    const env = environment.env ?? process.env;
    const host = env.KUBERNETES_SERVICE_HOST!;
    const port = env.KUBERNETES_SERVICE_PORT ?? '443';
    const read = (name: string) => {
      try {
        return readFileSync(`${dir}/${name}`, 'utf8').trim() || undefined;
      } catch {
        return undefined;
      }
    };
    return {
      server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      caPem: read('ca.crt'), token: read('token'), namespace: read('namespace'), source: 'in-cluster service account',
    };
  }
  // loaded when a command talks to the server: `--help` does not pay for the kubeconfig parser
  const { loadClientConfig, KubeconfigError } = await import('../server/kubeconfig.ts');
  try {
    return loadClientConfig({ kubeconfig: source.path });
  } catch (e) {
    if (e instanceof KubeconfigError) throw new CliError(e.message);
    throw new CliError(`cannot read the kubeconfig ${source.path}: ${(e as Error).message}`);
  }
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
