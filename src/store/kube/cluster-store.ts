// The cluster backend: our Store over a Kubernetes API server, configured the way kubectl and
// client-go are (kubeconfig file, $KUBECONFIG, in-cluster service account), so every
// authentication a real cluster uses works: bearer tokens, token files, client certificates,
// exec plugins and auth providers. @kubernetes/client-node resolves the credentials; HttpStore
// carries the requests, with its QPS/burst limit and our StoreError mapping.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { HttpStore } from '../http/http-store.ts';

export interface ClusterStoreOptions {
  /**
   * a kubeconfig file; without it, the in-cluster service account. Which one is the caller's to
   * decide (composition/kubeconfig-source.ts, kubectl's order), so every command reaches the same cluster.
   */
  kubeconfig?: string;
  /** a context of the kubeconfig other than its current one */
  context?: string;
  /** client-side rate limit; 0 lifts it */
  qps: number;
  burst: number;
  userAgent?: string;
  /** how long credentials from plugins are reused before they are asked again */
  credentialRefreshMs?: number;
  /** prefix of /var/run/secrets/kubernetes.io/serviceaccount, for tests of the in-cluster path */
  serviceAccountRoot?: string;
}

export interface ClusterConnection {
  store: HttpStore;
  /** the API server's URL */
  server: string;
  /** the context's namespace (in-cluster: the pod's), if it names one */
  namespace?: string;
  /** where the configuration came from, for messages */
  source: string;
  /** PEM of the CA the configuration trusts for the API server (in-cluster: the service account's ca.crt) */
  caPem?: string;
}

export class ClusterConfigError extends Error {}

const serviceAccountTokenPath = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Loads the configuration in client-go's order, with the embedded server's kubeconfig as the last resort. */
export function loadKubeConfig(o: { kubeconfig?: string; context?: string; serviceAccountRoot?: string }): { kc: KubeConfig; source: string } {
  const kc = new KubeConfig();
  let source: string;
  const fromFile = (path: string) => {
    if (!existsSync(path)) throw new ClusterConfigError(`no kubeconfig at ${path}`);
    kc.loadFromFile(path);
    source = path;
  };
  try {
    if (o.kubeconfig) fromFile(resolve(o.kubeconfig));
    else if (existsSync(`${o.serviceAccountRoot ?? ''}${serviceAccountTokenPath}`)) {
      kc.loadFromCluster(o.serviceAccountRoot);
      source = 'in-cluster service account';
    } else throw new ClusterConfigError(`no kubeconfig given and no service account token at ${o.serviceAccountRoot ?? ''}${serviceAccountTokenPath}`);
  } catch (e) {
    if (e instanceof ClusterConfigError) throw e;
    throw new ClusterConfigError(`cannot load the cluster configuration: ${(e as Error).message.split('\n')[0]}`);
  }
  if (o.context) {
    if (!kc.getContextObject(o.context)) throw new ClusterConfigError(`${source!}: no context "${o.context}"`);
    kc.setCurrentContext(o.context);
  }
  if (!kc.getCurrentCluster()?.server) throw new ClusterConfigError(`${source!}: the current context names no cluster with a server`);
  return { kc, source: source! };
}

type RequestOptions = https.RequestOptions & { headers?: Record<string, string | string[] | number> };

const pem = (v: unknown): string | undefined =>
  v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'string' ? v : undefined;

/** What client-node would put on one request: TLS material, Authorization (tokens, exec, basic), impersonation. */
async function requestOptions(kc: KubeConfig): Promise<{ tls: RequestOptions; headers: Record<string, string> }> {
  const opts: RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  if (typeof opts.auth === 'string') headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return { tls: opts, headers };
}

export async function openClusterStore(o: ClusterStoreOptions): Promise<ClusterConnection> {
  const { kc, source } = loadKubeConfig(o);
  const cluster = kc.getCurrentCluster()!;
  let first: Awaited<ReturnType<typeof requestOptions>>;
  try {
    first = await requestOptions(kc);
  } catch (e) {
    throw new ClusterConfigError(`${source}: cannot obtain credentials: ${(e as Error).message.split('\n')[0]}`);
  }
  // Exec plugins and token files hand out credentials that expire; client-node caches them
  // until then, so asking it again now and then is cheap and picks up rotations.
  const refreshMs = o.credentialRefreshMs ?? 10_000;
  let cached = { headers: first.headers, at: Date.now() };
  let pending: Promise<Record<string, string>> | undefined;
  const authHeaders = async () => {
    if (Date.now() - cached.at < refreshMs) return cached.headers;
    pending ??= requestOptions(kc).then((r) => {
      cached = { headers: r.headers, at: Date.now() };
      return r.headers;
    }).finally(() => (pending = undefined));
    return pending;
  };
  const caPem = pem(first.tls.ca);
  const store = new HttpStore({
    server: cluster.server.replace(/\/+$/, ''),
    caPem,
    certPem: pem(first.tls.cert),
    keyPem: pem(first.tls.key),
    insecure: cluster.skipTLSVerify || undefined,
    tlsServerName: cluster.tlsServerName,
    qps: o.qps,
    burst: o.burst,
    userAgent: o.userAgent ?? 'certsmith-controller',
    fieldManager: 'certsmith',
    authHeaders,
  });
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace?.trim() || undefined;
  return { store, server: cluster.server, namespace, source, caPem };
}
