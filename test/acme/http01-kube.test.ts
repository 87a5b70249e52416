// HTTP-01 in Kubernetes mode against a real Pebble. The test plays the cluster: a "kubelet" runs
// each solver Pod's container (the real `certsmith acmesolver` with the Pod's args) on its own
// loopback port, and an "ingress controller" on the port Pebble validates routes requests by the
// Ingress rules and Services in the store to those processes. So Pebble's validation only
// succeeds when the Pod, Service and Ingress the controllers wrote fit together.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realClock } from '../../src/runtime/clock.ts';
import { IngressType, PodType, ServiceType, type ResourceType } from '../../src/api/resources.ts';
import type { Store } from '../../src/store/store.ts';
import { SOLVER_LABEL, challengePath, type Ingress, type Pod, type Service } from '../../src/controllers/acme/solvers/http01-kube/resources.ts';
import { hostWithoutPort } from '../../src/cli/acmesolver.ts';
import { startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { makeTempDir, removeTempDir, startProcess, type RigProcess } from '../rig/processes.ts';
import { verifyChain } from '../rig/csr.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, waitFor, waitForReadyCertificate } from './acme-rig.ts';
import { freePort } from '../rig/ports.ts';

const certsmithBin = fileURLToPath(new URL('../../bin/certsmith.mjs', import.meta.url));
const uniq = () => crypto.randomBytes(3).toString('hex');

interface Kubelet {
  /** pod uid → loopback port of its acmesolver */
  ports: Map<string, number>;
  /** every solver Pod it was asked to run, as first seen */
  started: Pod[];
  stop(): Promise<void>;
}

/** Runs every solver Pod's container as a process, stops it when the Pod is deleted. */
function startKubelet(store: Store, logDir: string): Kubelet {
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

interface IngressController {
  port: number;
  /** "host path status" of every request it routed to a solver */
  routed: string[];
  stop(): Promise<void>;
}

const matches = (labels: Record<string, string> | undefined, selector: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/**
 * Routes Host + path through Ingress rules → Service → Pod selected by the Service → the kubelet's process.
 * It listens before the cluster exists (Pebble needs its port first), hence the getter.
 */
async function startIngressController(cluster: () => { store: Store; kubelet: Kubelet } | undefined): Promise<IngressController> {
  const routed: string[] = [];
  async function route(store: Store, kubelet: Kubelet, host: string, urlPath: string): Promise<number | undefined> {
    const list = async <T extends Ingress | Service | Pod>(type: ResourceType, namespace?: string) => (await store.list<T>(type, { namespace })).items;
    for (const ing of await list<Ingress>(IngressType)) {
      const p = ing.spec.rules?.find((r) => r.host === host)?.http?.paths.find((x) => x.path === urlPath || (x.pathType === 'Prefix' && urlPath.startsWith(x.path ?? '/')));
      const backend = p?.backend.service;
      if (!backend) continue;
      const svc = (await list<Service>(ServiceType, ing.metadata.namespace)).find((s) => s.metadata.name === backend.name);
      if (!svc?.spec.selector || svc.spec.ports[0].port !== backend.port.number) continue;
      const pod = (await list<Pod>(PodType, ing.metadata.namespace)).find((x) => matches(x.metadata.labels, svc.spec.selector!));
      const target = pod && kubelet.ports.get(pod.metadata.uid!);
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

describe('HTTP-01 in Kubernetes mode: solver Pod, Service and Ingress, validated by Pebble', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let lc: Lifecycle;
  let kubelet: Kubelet;
  let ingress: IngressController;
  let logDir: string;
  const solverObjects = async () => {
    const count = async (type: ResourceType) => (await lc.store.list(type, { labelSelector: `${SOLVER_LABEL}=true` })).items.length;
    return { pods: await count(PodType), services: await count(ServiceType), ingresses: await count(IngressType) };
  };
  const web: Ingress = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'default' },
    spec: { ingressClassName: 'nginx', rules: [{ host: 'site.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'site', port: { number: 80 } } } }] } }] },
  };

  before(async () => {
    logDir = await makeTempDir('kubelet');
    cts = await startChallTestSrv();
    ingress = await startIngressController(() => (lc && kubelet ? { store: lc.store, kubelet } : undefined));
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: ingress.port });
    lc = await startLifecycle({
      clock: realClock,
      options: { http01Mode: 'kubernetes', acmeHTTP01SolverNameservers: [cts.dnsServer], acmeHTTP01SelfCheckPort: ingress.port, acmeHTTP01SolverImage: 'certsmith:test' },
    });
    kubelet = startKubelet(lc.store, logDir);
    await lc.store.create(IngressType, structuredClone(web));
    const issuer = (name: string, ingressSolver: Record<string, unknown>) => ({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name },
      spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: `${name}-account` }, solvers: [{ http01: { ingress: ingressSolver } }] } },
    });
    await lc.apply(issuer('kube-class', { ingressClassName: 'nginx', podTemplate: { metadata: { labels: { team: 'web' } } } }));
    await lc.apply(issuer('kube-named', { name: 'web' }));
  });
  after(async () => {
    await lc?.stop();
    await kubelet?.stop();
    await ingress?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
    if (logDir) await removeTempDir(logDir);
  });

  async function issued(name: string): Promise<void> {
    const crt = await waitForReadyCertificate(lc, name, 60_000);
    const chain = Buffer.from((await lc.secret(crt.spec.secretName))!.data!['tls.crt'], 'base64').toString();
    assert.match(await verifyChain(chain, await pebble.rootPem()), /OK/);
  }

  test('a solver Pod, Service and Ingress of the class answer Pebble, then are deleted', async () => {
    const domain = `k-${uniq()}.example.test`;
    const ingressesAdded: Ingress[] = [];
    const watch = lc.store.watch<Ingress>(IngressType, {}, (e) => { if (e.type === 'ADDED') ingressesAdded.push(e.object); }, () => {});
    try {
      await lc.apply(acmeCertificate('kube-one', [domain], 'kube-class'));
      await issued('kube-one');
    } finally {
      watch.stop();
    }
    const pod = kubelet.started.find((p) => p.spec.containers[0].args.includes(`--domain=${domain}`));
    assert.ok(pod, 'the kubelet ran a solver Pod for the domain');
    assert.equal(pod.spec.containers[0].image, 'certsmith:test');
    assert.equal(pod.spec.containers[0].args[0], 'acmesolver');
    assert.equal(pod.metadata.labels?.team, 'web', 'podTemplate labels');
    assert.equal(pod.metadata.ownerReferences?.[0].kind, 'Challenge');
    const ing = ingressesAdded.find((i) => i.spec.rules?.[0].host === domain);
    assert.ok(ing, 'an Ingress for the domain was created');
    assert.equal(ing.spec.ingressClassName, 'nginx');
    // the self-check and Pebble's validation both went through the Ingress to the acmesolver
    assert.ok(ingress.routed.filter((r) => r.startsWith(`${domain} /.well-known/acme-challenge/`) && r.endsWith(' 200')).length >= 2, ingress.routed.join('\n'));
    await waitFor('solver objects deleted', async () => {
      const o = await solverObjects();
      return o.pods + o.services + o.ingresses === 0;
    }, solverObjects);
    await waitFor('solver processes stopped', async () => kubelet.ports.size === 0);
  });

  test('ingress.name: the existing Ingress gets the challenge path, then loses it', async () => {
    const domain = `n-${uniq()}.example.test`;
    const seenPaths: string[] = [];
    const watch = lc.store.watch<Ingress>(IngressType, {}, (e) => {
      if (e.object.metadata.name !== 'web') return;
      for (const r of e.object.spec.rules ?? []) for (const p of r.http?.paths ?? []) seenPaths.push(`${r.host}${p.path}`);
    }, () => {});
    const solverIngressesBefore = (await solverObjects()).ingresses;
    try {
      await lc.apply(acmeCertificate('kube-named', [domain], 'kube-named'));
      await issued('kube-named');
    } finally {
      watch.stop();
    }
    assert.ok(seenPaths.some((p) => p.startsWith(`${domain}${challengePath('')}`)), `the web Ingress routed the challenge: ${seenPaths.join(', ')}`);
    assert.equal(solverIngressesBefore, 0);
    assert.ok(ingress.routed.some((r) => r.startsWith(`${domain} `) && r.endsWith(' 200')), ingress.routed.join('\n'));
    await waitFor('the web Ingress back to its own rules', async () => {
      const cur = await lc.store.get<Ingress>(IngressType, 'default', 'web');
      return JSON.stringify(cur?.spec) === JSON.stringify(web.spec);
    }, async () => (await lc.store.get<Ingress>(IngressType, 'default', 'web'))?.spec);
    await waitFor('solver objects deleted', async () => {
      const o = await solverObjects();
      return o.pods + o.services + o.ingresses === 0;
    }, solverObjects);
    assert.ok(await lc.store.get(IngressType, 'default', 'web'), 'the user\'s Ingress is kept');
  });
});
