// RFC 2136 and the webhook solver with the controllers out of the server (issue 14: every provider
// works in both modes): `certsmith server --no-controllers` as the API server and `certsmith
// controller` as its own process. Both publish into bind9, through which Pebble validates for real
// and which the controller's self-check asks (--dns01-recursive-nameservers): challtestsrv takes
// no RFC 2136 updates and answers SOA queries NOTIMP, so these cannot share the challtestsrv of
// controller-dns01.test.ts.
//   - rfc2136: the controller sends the TSIG-signed update itself, with the key read through the
//     API from its --cluster-resource-namespace.
//   - webhook: a solver of our own (test/rig/webhook-solver.ts) registered on the server with an
//     APIService; the controller reaches it only through the server's aggregation, as on a cluster.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { loadClientConfig } from '../../src/server/kubeconfig.ts';
import { HttpStore } from '../../src/store/http/http-store.ts';
import { freePort, startNamed, startPebble, type Named, type Pebble } from '../rig/index.ts';
import { runCommand } from '../rig/processes.ts';
import { startWebhookSolver, type TXTPublisher, type WebhookSolver } from '../rig/webhook-solver.ts';
import { acmeCertificate, b64 } from '../acme/acme-rig.ts';
import { startServer, waitFor, type RunningServer } from './harness.ts';
import { startController, waitIssuedBy, type RunningController } from './controller-harness.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const ZONE = 'example.test';
/** not cert-manager's default: proves the controller reads ClusterIssuer Secrets where its flag says */
const CLUSTER_RESOURCE_NS = 'dns-credentials';
/** the controller's key, read from a Secret; the webhook solver has its own */
const RFC2136_KEY = 'certsmith-update';
const SOLVER_KEY = 'solver-key';
const GROUP = 'acme.solver.example.test';
const SOLVER = 'bind9';

/** The webhook solver's DNS: bind9's own nsupdate, signed with the solver's TSIG key. */
function nsupdate(named: Named): TXTPublisher {
  const update = (line: string) => runCommand('nsupdate', ['-y', `hmac-sha256:${SOLVER_KEY}:${named.tsigSecrets[SOLVER_KEY]}`], {
    input: `server 127.0.0.1 ${named.port}\nzone ${ZONE}\n${line}\nsend\n`,
  }).then(() => undefined);
  return {
    setTXT: (fqdn, value) => update(`update add ${fqdn} 60 TXT "${value}"`),
    clearTXT: (fqdn, value) => update(`update delete ${fqdn} TXT "${value}"`),
  };
}

const yaml = (docs: unknown[]) => docs.map((d) => JSON.stringify(d)).join('\n---\n');

describe('RFC 2136 and the webhook solver in certsmith controller mode (bind9; Secrets and solvers through the API)', () => {
  let named: Named;
  let pebble: Pebble;
  let solver: WebhookSolver;
  let server: RunningServer | undefined;
  let controller: RunningController | undefined;
  let store: HttpStore;
  let dns: Resolver;

  const names = { rfc2136: `r-${uniq()}.${ZONE}`, webhook: `w-${uniq()}.${ZONE}` };
  type Solver = keyof typeof names;
  const certName = (s: Solver) => `dns01-${s}`;

  before(async () => {
    named = await startNamed({ zone: ZONE, tsig: { name: RFC2136_KEY, algorithm: 'hmac-sha256' }, extraTsig: [{ name: SOLVER_KEY, algorithm: 'hmac-sha256' }] });
    dns = new Resolver({ timeout: 1000, tries: 2 });
    dns.setServers([named.server]);
    // each handle is kept as soon as it exists, so that `after` stops it even when another one failed to start
    const started = await Promise.allSettled([
      (async () => (pebble = await startPebble({ dnsServer: named.server, httpPort: await freePort() })))(),
      startWebhookSolver({ dns: nsupdate(named), group: GROUP, solverName: SOLVER, serviceName: 'solver', namespace: 'cert-manager' }).then((v) => (solver = v)),
      startServer({ args: ['--no-controllers'] }).then((v) => (server = v)),
    ]);
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    const cfg = loadClientConfig({ kubeconfig: server!.kubeconfig });
    store = new HttpStore({ server: cfg.server, caPem: cfg.caPem, token: cfg.token, qps: 0 });

    const acme = (issuer: string, dns01: Record<string, unknown>) => ({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: issuer },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: `${issuer}-account` }, solvers: [{ dns01 }],
        },
      },
    });
    const applied = await server!.cli(['apply', '-f', '-'], {
      input: yaml([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CLUSTER_RESOURCE_NS } },
        {
          apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tsig', namespace: CLUSTER_RESOURCE_NS }, type: 'Opaque',
          data: { secret: b64(named.tsigSecrets[RFC2136_KEY]) },
        },
        // the solver's Service and APIService, as its Helm chart installs them
        {
          apiVersion: 'v1', kind: 'Service', metadata: { name: 'solver', namespace: 'cert-manager' },
          spec: { clusterIP: '127.0.0.1', ports: [{ name: 'https', port: 443, targetPort: solver.port }] },
        },
        {
          apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: `v1alpha1.${GROUP}` },
          spec: { group: GROUP, version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'cert-manager', name: 'solver', port: 443 }, caBundle: b64(solver.caPem) },
        },
        acme(certName('rfc2136'), {
          rfc2136: { nameserver: named.server, tsigKeyName: RFC2136_KEY, tsigAlgorithm: 'HMACSHA256', tsigSecretSecretRef: { name: 'tsig', key: 'secret' } },
        }),
        acme(certName('webhook'), { webhook: { groupName: GROUP, solverName: SOLVER, config: { zone: ZONE, ttl: 60 } } }),
        ...(Object.keys(names) as Solver[]).map((s) => acmeCertificate(certName(s), [names[s]], certName(s))),
      ]),
    });
    assert.equal(applied.code, 0, applied.stderr);

    controller = startController({
      kubeconfig: server!.kubeconfig,
      args: ['--cluster-resource-namespace', CLUSTER_RESOURCE_NS, '--dns01-recursive-nameservers', named.server, '--dns01-recursive-nameservers-only'],
    });
    await controller.waitForOutput(/certsmith controller running against https:\/\/127\.0\.0\.1:\d+/, 60_000);
  });

  after(async () => {
    const code = await controller?.stop();
    await server?.stop();
    server?.cleanup();
    await store?.close();
    await Promise.all([pebble?.stop(), solver?.stop()]);
    await named?.stop();
    if (code !== undefined && code !== 0) assert.fail(`certsmith controller exited with ${code} on SIGTERM:\n${controller!.output()}`);
  });

  /** Waits for the Certificate to be Ready and checks its TLS Secret covers the name; what the controller printed is in the failure. */
  async function issued(s: Solver) {
    const name = certName(s);
    await waitIssuedBy(controller!, store, {
      name, dnsName: names[s], issuer: () => store.get<ClusterIssuerObj>(ClusterIssuer, undefined, name), more: () => `solver calls: ${JSON.stringify(solver.calls)}`,
    });
  }

  /** bind9 has no TXT record left at _acme-challenge.NAME (Pebble's validation through it proved the record was there). */
  async function removedFromBind(s: Solver) {
    const fqdn = `_acme-challenge.${names[s]}`;
    await waitFor(`TXT at ${fqdn} removed from bind9`, async () => (await dns.resolveTxt(fqdn).catch(() => [])).length === 0, 15_000);
  }

  test('rfc2136: the TSIG key from a Secret in the cluster resource namespace; the record is removed from bind9 afterwards', async () => {
    await issued('rfc2136');
    await removedFromBind('rfc2136');
    assert.ok(!solver.calls.some((c) => c.request.dnsName === names.rfc2136), 'the controller updated bind9 itself, not through the webhook solver');
    assert.ok(!controller!.output().includes(named.tsigSecrets[RFC2136_KEY]), 'the TSIG secret is not printed');
  });

  test('webhook: the controller reaches the solver through the server\'s aggregation; Present, then CleanUp removes the record', async () => {
    await issued('webhook');
    await waitFor('CleanUp', () => solver.calls.some((c) => c.action === 'CleanUp' && c.request.dnsName === names.webhook), 15_000);
    await removedFromBind('webhook');
    const mine = solver.calls.filter((c) => c.request.dnsName === names.webhook);
    assert.deepEqual(mine.map((c) => c.action), ['Present', 'CleanUp']);
    const present = mine[0].request;
    assert.equal(present.resolvedFQDN, `_acme-challenge.${names.webhook}.`);
    assert.equal(present.resolvedZone, `${ZONE}.`, 'the zone found by asking bind9 for the SOA');
    assert.equal(present.resourceNamespace, CLUSTER_RESOURCE_NS, "a ClusterIssuer's Secrets live in the controller's cluster resource namespace");
    assert.deepEqual(present.config, { zone: ZONE, ttl: 60 });
    assert.ok(mine.every((c) => c.remoteUser), 'X-Remote-User on every call: it came through the server\'s aggregation');
  });
});
