// HTTP-01 through the gatewayHTTPRoute solver against a real Pebble. The test plays the cluster
// (kube-cluster-rig.ts) with a "gateway controller" instead of an ingress controller: it implements
// one Gateway (default/gw, listener "http") and routes a request only by HTTPRoutes attached to
// that listener (parentRefs), whose hostnames and exact path match, to the Service port of their
// backendRef. So Pebble's validation only succeeds when the HTTPRoute, Service and Pod the
// controllers wrote fit together and sit on the Gateway the issuer names.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Certificate as CertificateType, GatewayType, HTTPRouteType, IngressType, PodType, ServiceType, type ResourceType } from '../../src/api/resources.ts';
import { SOLVER_LABEL, challengePath, type HTTPRoute } from '../../src/controllers/acme/solvers/http01-kube/resources.ts';
import type { GatewayObj } from '../../src/controllers/certificate-shim/gateway.ts';
import { startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { makeTempDir, removeTempDir } from '../rig/processes.ts';
import { verifyChain } from '../rig/csr.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { b64, waitFor, waitForReadyCertificate } from './acme-rig.ts';
import { startKubelet, startRouter, type Kubelet, type RouteLookup, type Router } from './kube-cluster-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const GATEWAY = { namespace: 'default', name: 'gw', listener: 'http' };

/** The Gateway API's routing for our one Gateway's HTTP listener: attached routes only, Exact or PathPrefix paths. */
const gatewayLookup: RouteLookup = async (store, host, urlPath) => {
  if (!(await store.get(GatewayType, GATEWAY.namespace, GATEWAY.name))) return [];
  return (await store.list<HTTPRoute>(HTTPRouteType)).items.flatMap((route) => {
    const ns = route.metadata.namespace!;
    const attached = (route.spec.parentRefs ?? []).some((p) => (p.kind ?? 'Gateway') === 'Gateway' && (p.group ?? 'gateway.networking.k8s.io') === 'gateway.networking.k8s.io' &&
      p.name === GATEWAY.name && (p.namespace ?? ns) === GATEWAY.namespace && (p.sectionName ?? GATEWAY.listener) === GATEWAY.listener);
    if (!attached) return [];
    if (route.spec.hostnames?.length && !route.spec.hostnames.includes(host)) return [];
    return (route.spec.rules ?? []).filter((r) => (r.matches ?? [{ path: { type: 'PathPrefix', value: '/' } }]).some(({ path }) => {
      const type = path?.type ?? 'PathPrefix';
      const value = path?.value ?? '/';
      return type === 'Exact' ? urlPath === value : type === 'PathPrefix' && urlPath.startsWith(value);
    })).flatMap((r) => (r.backendRefs ?? []).filter((b) => (b.kind ?? 'Service') === 'Service' && !b.group && b.port !== undefined)
      .map((b) => ({ namespace: b.namespace ?? ns, name: b.name, port: b.port! })));
  });
};

describe('HTTP-01 through gatewayHTTPRoute: solver Pod, Service and HTTPRoute on a Gateway, validated by Pebble', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let lc: Lifecycle;
  let kubelet: Kubelet;
  let gateway: Router;
  let logDir: string;
  const solverObjects = async () => {
    const count = async (type: ResourceType) => (await lc.store.list(type, { labelSelector: `${SOLVER_LABEL}=true` })).items.length;
    return { pods: await count(PodType), services: await count(ServiceType), httpRoutes: await count(HTTPRouteType), ingresses: await count(IngressType) };
  };

  before(async () => {
    logDir = await makeTempDir('kubelet');
    cts = await startChallTestSrv();
    gateway = await startRouter(gatewayLookup, () => (lc && kubelet ? { store: lc.store, kubelet } : undefined));
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: gateway.port });
    lc = await startLifecycle({
      clock: realClock,
      options: {
        http01Mode: 'kubernetes', enableGatewayAPI: true, acmeHTTP01SolverNameservers: [cts.dnsServer],
        acmeHTTP01SelfCheckPort: gateway.port, acmeHTTP01SolverImage: 'certsmith:test',
      },
    });
    kubelet = startKubelet(lc.store, logDir);
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'gateway-http01' },
      spec: {
        acme: {
          server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'gateway-http01-account' },
          solvers: [{ http01: { gatewayHTTPRoute: { parentRefs: [{ name: GATEWAY.name, namespace: GATEWAY.namespace, sectionName: GATEWAY.listener }], labels: { team: 'edge' }, serviceType: 'ClusterIP' } } }],
        },
      },
    });
  });
  after(async () => {
    await lc?.stop();
    await kubelet?.stop();
    await gateway?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
    if (logDir) await removeTempDir(logDir);
  });

  test('an annotated Gateway\'s HTTPS listener gets a Certificate, issued through an HTTPRoute on the Gateway\'s HTTP listener', async () => {
    const domain = `g-${uniq()}.example.test`;
    const routesAdded: HTTPRoute[] = [];
    const watch = lc.store.watch<HTTPRoute>(HTTPRouteType, {}, (e) => { if (e.type === 'ADDED') routesAdded.push(e.object); }, () => {});
    try {
      // gateway-shim and the solver together, as a cert-manager user sets them up
      await lc.apply<GatewayObj>({
        apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway',
        metadata: { name: GATEWAY.name, namespace: GATEWAY.namespace, annotations: { 'cert-manager.io/cluster-issuer': 'gateway-http01', 'cert-manager.io/private-key-algorithm': 'ECDSA' } },
        spec: {
          gatewayClassName: 'test',
          listeners: [
            { name: GATEWAY.listener, port: 80, protocol: 'HTTP' },
            { name: 'https', hostname: domain, port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', group: '', name: 'gw-tls' }] } },
          ],
        },
      });
      await waitFor('gateway-shim\'s Certificate gw-tls', async () => (await lc.store.list(CertificateType, { namespace: 'default' })).items.some((c) => c.metadata.name === 'gw-tls'));
      const crt = await waitForReadyCertificate(lc, 'gw-tls', 60_000);
      assert.deepEqual(crt.spec.dnsNames, [domain]);
      assert.equal(crt.metadata.ownerReferences?.[0].kind, 'Gateway');
      const chain = Buffer.from((await lc.secret('gw-tls'))!.data!['tls.crt'], 'base64').toString();
      assert.match(await verifyChain(chain, await pebble.rootPem()), /OK/);
    } finally {
      watch.stop();
    }
    const route = routesAdded.find((r) => r.spec.hostnames?.includes(domain));
    assert.ok(route, 'an HTTPRoute for the domain was created');
    assert.equal(route.metadata.labels?.team, 'edge', 'the solver\'s labels');
    assert.equal(route.metadata.ownerReferences?.[0].kind, 'Challenge');
    // the Issuer's parentRefs as stored: with the CRD's defaults for group and kind, as kube-apiserver stores them
    assert.deepEqual(route.spec.parentRefs, [{ name: GATEWAY.name, namespace: GATEWAY.namespace, sectionName: GATEWAY.listener, group: 'gateway.networking.k8s.io', kind: 'Gateway' }]);
    assert.equal(route.spec.rules?.[0].matches?.[0].path?.value?.startsWith(challengePath('')), true);
    const pod = kubelet.started.find((p) => p.spec.containers[0].args.includes(`--domain=${domain}`));
    assert.ok(pod, 'the kubelet ran a solver Pod for the domain');
    // the self-check and Pebble's validation both went through the Gateway to the acmesolver
    assert.ok(gateway.routed.filter((r) => r.startsWith(`${domain} /.well-known/acme-challenge/`) && r.endsWith(' 200')).length >= 2, gateway.routed.join('\n'));
    const made = await solverObjects();
    assert.equal(made.ingresses, 0, 'no Ingress for a gatewayHTTPRoute solver');
    await waitFor('solver objects deleted', async () => {
      const o = await solverObjects();
      return o.pods + o.services + o.httpRoutes === 0;
    }, solverObjects);
    await waitFor('solver processes stopped', async () => kubelet.ports.size === 0);
  });
});
