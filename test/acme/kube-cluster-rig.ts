// The cluster the Kubernetes-mode HTTP-01 tests play: a "kubelet" runs each solver Pod's container
// (the real `certsmith acmesolver` with the Pod's args) on its own loopback port, and a router on
// the port Pebble validates sends each request through the routing objects in the store (Ingress
// rules, or HTTPRoutes on a Gateway) → Service → Pod selected by the Service → the kubelet's
// process. So validation only succeeds when the objects the controllers wrote fit together.
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PodType, ServiceType } from '../../src/api/resources.ts';
import type { Store } from '../../src/store/store.ts';
import { SOLVER_LABEL, type Pod, type Service } from '../../src/controllers/acme/solvers/http01-kube/resources.ts';
import { hostWithoutPort } from '../../src/cli/acmesolver.ts';
import { startProcess, type RigProcess } from '../rig/processes.ts';
import { freePort } from '../rig/ports.ts';

// the sources, as every other test runs them (bin/certsmith.mjs runs dist/, which may be stale)
const certsmithBin = fileURLToPath(new URL('../rig/certsmith-source.mjs', import.meta.url));

export interface Kubelet {
  /** pod uid → loopback port of its acmesolver */
  ports: Map<string, number>;
  /** every solver Pod it was asked to run, as first seen */
  started: Pod[];
  stop(): Promise<void>;
}

/** Runs every solver Pod's container as a process, stops it when the Pod is deleted. */
export function startKubelet(store: Store, logDir: string): Kubelet {
  const procs = new Map<string, RigProcess>();
  const ports = new Map<string, number>();
  const started: Pod[] = [];
  const gone = new Set<string>();
  const starting = new Set<Promise<void>>();
  let stopped = false;
  const run = async (pod: Pod) => {
    const uid = pod.metadata.uid!;
    const port = await freePort();
    // deleted (or the test ended) while a port was found: start nothing that nobody would stop
    if (stopped || gone.has(uid)) return;
    const [container] = pod.spec.containers;
    // the node's network namespace is loopback here: the container's port becomes a free one
    const args = container.args.map((a) => (a.startsWith('--listen-port=') ? `--listen-port=${port}` : a));
    procs.set(uid, startProcess(process.execPath, [certsmithBin, ...args, '--listen-host=127.0.0.1'], { logPath: path.join(logDir, `${pod.metadata.name}.log`) }));
    ports.set(uid, port);
  };
  const watch = store.watch<Pod>(PodType, { resourceVersion: '0' }, (e) => {
    const pod = e.object;
    if (pod.metadata.labels?.[SOLVER_LABEL] !== 'true') return;
    const uid = pod.metadata.uid!;
    if (e.type === 'ADDED') {
      started.push(pod);
      const p = run(pod).finally(() => starting.delete(p));
      starting.add(p);
    } else if (e.type === 'DELETED') {
      gone.add(uid);
      ports.delete(uid);
      void procs.get(uid)?.stop();
      procs.delete(uid);
    }
  }, () => {});
  return {
    ports, started,
    async stop() {
      stopped = true;
      watch.stop();
      await Promise.all(starting);
      await Promise.all([...procs.values()].map((p) => p.stop()));
    },
  };
}

/** Where a routing object sends a request: a Service port in a namespace. */
export interface ServiceBackend { namespace: string; name: string; port: number }

/** One kind of routing object (Ingress, HTTPRoute): the backends it gives host + path, in order of preference. */
export type RouteLookup = (store: Store, host: string, urlPath: string) => Promise<ServiceBackend[]>;

export interface Router {
  port: number;
  /** "host path status" of every request it routed to a solver */
  routed: string[];
  stop(): Promise<void>;
}

const matches = (labels: Record<string, string> | undefined, selector: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The kubelet port of the Pod behind the Service port, as kube-proxy would pick it. */
async function endpoint(store: Store, kubelet: Kubelet, b: ServiceBackend): Promise<number | undefined> {
  const svc = (await store.list<Service>(ServiceType, { namespace: b.namespace })).items.find((s) => s.metadata.name === b.name);
  if (!svc?.spec.selector || svc.spec.ports[0].port !== b.port) return undefined;
  const pod = (await store.list<Pod>(PodType, { namespace: b.namespace })).items.find((x) => matches(x.metadata.labels, svc.spec.selector!));
  return pod && kubelet.ports.get(pod.metadata.uid!);
}

/**
 * Routes Host + path by lookup → Service → Pod → the kubelet's process. It listens before the
 * cluster exists (Pebble needs its port first), hence the getter.
 */
export async function startRouter(lookup: RouteLookup, cluster: () => { store: Store; kubelet: Kubelet } | undefined): Promise<Router> {
  const routed: string[] = [];
  async function route(store: Store, kubelet: Kubelet, host: string, urlPath: string): Promise<number | undefined> {
    for (const b of await lookup(store, host, urlPath)) {
      const target = await endpoint(store, kubelet, b);
      if (target) return target;
    }
    return undefined;
  }
  const server = http.createServer(async (req, res) => {
    const c = cluster();
    const host = hostWithoutPort(req.headers.host);
    const urlPath = (req.url ?? '/').split('?')[0];
    // a request racing the end of the test finds the store closed: no route, rather than a crashed runner
    const target = c && await route(c.store, c.kubelet, host, urlPath).catch(() => undefined);
    if (!target) {
      res.writeHead(404).end('no route\n');
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers, agent: false }, (up) => {
      routed.push(`${host} ${urlPath} ${up.statusCode}`);
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end('solver not listening yet\n'));
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    routed,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
