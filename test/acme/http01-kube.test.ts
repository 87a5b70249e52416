// HTTP-01 in Kubernetes mode against a real Pebble. The test plays the cluster (kube-cluster-rig.ts):
// a "kubelet" runs each solver Pod as the real `certsmith acmesolver`, and an "ingress controller"
// on the port Pebble validates routes requests by the Ingress rules and Services in the store to
// those processes. So Pebble's validation only succeeds when the Pod, Service and Ingress the
// controllers wrote fit together.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { IngressType, PodType, ServiceType, type ResourceType } from '../../src/api/resources.ts';
import { SOLVER_LABEL, challengePath, type Ingress } from '../../src/controllers/acme/solvers/http01-kube/resources.ts';
import { startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { makeTempDir, removeTempDir } from '../rig/processes.ts';
import { verifyChain } from '../rig/csr.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, waitFor, waitForReadyCertificate } from './acme-rig.ts';
import { startKubelet, startRouter, type Kubelet, type RouteLookup, type Router } from './kube-cluster-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

/** An ingress controller: the first Ingress rule for the host whose path matches (exactly, or as a Prefix). */
const ingressLookup: RouteLookup = async (store, host, urlPath) =>
  (await store.list<Ingress>(IngressType)).items.flatMap((ing) => {
    const p = ing.spec.rules?.find((r) => r.host === host)?.http?.paths.find((x) => x.path === urlPath || (x.pathType === 'Prefix' && urlPath.startsWith(x.path ?? '/')));
    const backend = p?.backend.service;
    return backend?.port.number !== undefined ? [{ namespace: ing.metadata.namespace!, name: backend.name, port: backend.port.number }] : [];
  });

describe('HTTP-01 in Kubernetes mode: solver Pod, Service and Ingress, validated by Pebble', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let lc: Lifecycle;
  let kubelet: Kubelet;
  let ingress: Router;
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
    ingress = await startRouter(ingressLookup, () => (lc && kubelet ? { store: lc.store, kubelet } : undefined));
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
