// DNS-01 through cert-manager's webhook solver contract (issue 14): a solver of our own
// (test/rig/webhook-solver.ts) registered with an APIService and a Service, reached through the
// embedded server's API aggregation, publishes the TXT record into bind9 with nsupdate; Pebble
// validates through bind9 for real (bind9 rather than challtestsrv: upstream's payload carries
// the zone, found by SOA lookups, which challtestsrv does not answer).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { Certificate, Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Certificate as CertificateObj, Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { freePort, startNamed, startPebble, type Named, type Pebble } from '../rig/index.ts';
import { runCommand } from '../rig/processes.ts';
import { startWebhookSolver, type TXTPublisher, type WebhookSolver } from '../rig/webhook-solver.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { run, startServer, type RunningServer } from '../e2e/harness.ts';
import { kubectlBin } from '../e2e/kubectl-session.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const GROUP = 'acme.solver.example.test';
const SOLVER = 'challtestsrv';

/** RFC 2136 updates with bind9's own nsupdate, signed with the zone's TSIG key. */
function nsupdate(named: Named): TXTPublisher {
  const update = (line: string) => runCommand('nsupdate', ['-y', `hmac-sha256:solver-key:${named.tsigSecret}`], {
    input: `server 127.0.0.1 ${named.port}\nzone example.test\n${line}\nsend\n`,
  }).then(() => undefined);
  return {
    setTXT: (fqdn, value) => update(`update add ${fqdn} 60 TXT "${value}"`),
    clearTXT: (fqdn, value) => update(`update delete ${fqdn} TXT "${value}"`),
  };
}

describe('DNS-01 through a webhook solver behind an APIService', () => {
  let named: Named;
  let pebble: Pebble;
  let solver: WebhookSolver;
  let lc: Lifecycle;

  before(async () => {
    named = await startNamed({ zone: 'example.test', tsig: { name: 'solver-key', algorithm: 'hmac-sha256' } });
    pebble = await startPebble({ dnsServer: named.server, httpPort: await freePort() });
    solver = await startWebhookSolver({ dns: nsupdate(named), group: GROUP, solverName: SOLVER, serviceName: 'solver', namespace: 'cert-manager' });
    lc = await startLifecycle({ clock: realClock, options: { dns01RecursiveNameservers: [named.server], dns01RecursiveNameserversOnly: true } });
    await lc.apply({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'solver', namespace: 'cert-manager' },
      spec: { clusterIP: '127.0.0.1', ports: [{ name: 'https', port: 443, targetPort: solver.port }] },
    });
    await lc.apply({
      apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: `v1alpha1.${GROUP}` },
      spec: { group: GROUP, version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'cert-manager', name: 'solver', port: 443 }, caBundle: b64(solver.caPem) },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'pebble-account' },
          solvers: [{ dns01: { webhook: { groupName: GROUP, solverName: SOLVER, config: { zone: 'example.test', ttl: 60 } } } }],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), solver?.stop(), named?.stop()]);
  });

  test('a certificate is issued; the solver gets Present then CleanUp with the payload cert-manager sends', async () => {
    const name = `wh-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('webhook', [name]));
    await waitFor('Certificate webhook Ready', async () => ready(await lc.store.get<CertificateObj>(Certificate, 'default', 'webhook')),
      async () => ({ challenges: (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.filter((c) => c.spec.dnsName === name).map((c) => c.status), calls: solver.calls }), 60_000);
    await waitFor('CleanUp', async () => solver.calls.some((c) => c.action === 'CleanUp'), async () => solver.calls);
    const mine = solver.calls.filter((c) => c.request.dnsName === name);
    assert.deepEqual(mine.map((c) => c.action), ['Present', 'CleanUp']);
    const present = mine[0].request;
    assert.equal(present.type, 'dns-01');
    assert.equal(present.resolvedFQDN, `_acme-challenge.${name}.`);
    assert.match(String(present.resolvedZone), /\.$/, 'the zone, with its trailing dot');
    assert.equal(present.resourceNamespace, 'cert-manager', "a ClusterIssuer's Secrets live in the cluster resource namespace");
    assert.equal(present.allowAmbientCredentials, true, 'ClusterIssuers may use ambient credentials, as upstream');
    assert.deepEqual(present.config, { zone: 'example.test', ttl: 60 }, 'only the solver config, not groupName/solverName');
    assert.match(String(present.uid), /^[0-9a-f-]{36}$/);
    assert.equal(typeof present.key, 'string');
    // the controllers call as the service account they run as on a cluster, as kube-apiserver's
    // front proxy sends it (X-Remote-User, one X-Remote-Group per group)
    assert.equal(mine[0].remoteUser, 'system:serviceaccount:certsmith:certsmith');
    assert.deepEqual(mine[0].remoteGroups, ['system:serviceaccounts', 'system:serviceaccounts:certsmith', 'system:authenticated']);
  });

  test("a solver's failure is the Challenge's reason, and the next attempt succeeds", async () => {
    const name = `wh-fail-${uniq()}.example.test`;
    solver.failNextPresent('zone example.test is locked by the DNS provider');
    await lc.apply(acmeCertificate('webhook-fail', [name]));
    await waitFor('the solver message on the Challenge', async () => {
      const ch = (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);
      return ch?.status?.reason?.includes('zone example.test is locked by the DNS provider');
    });
    await waitForReadyCertificate(lc, 'webhook-fail', 90_000);
  });

  test('an APIService whose Service does not exist: the Challenge says the service is unavailable', async () => {
    await lc.apply({
      apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1alpha1.gone.example.test' },
      spec: { group: 'gone.example.test', version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'cert-manager', name: 'gone', port: 443 } },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'gone' },
      spec: {
        acme: {
          server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'gone-account' },
          solvers: [{ dns01: { webhook: { groupName: 'gone.example.test', solverName: 'x' } } }],
        },
      },
    });
    const name = `wh-gone-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('webhook-gone', [name], 'gone'));
    await waitFor('ServiceUnavailable on the Challenge', async () => {
      const ch = (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.find((c) => c.spec.dnsName === name);
      return ch?.status?.reason?.match(/service "cert-manager\/gone" not found/);
    });
  });
});

describe('the embedded server proxies an APIService group, as kube-aggregator does', () => {
  let named: Named;
  let solver: WebhookSolver;
  let server: RunningServer;
  const work = mkdtempSync(join(tmpdir(), 'certsmith-aggregation-'));

  before(async () => {
    named = await startNamed({ zone: 'example.test', tsig: { name: 'solver-key', algorithm: 'hmac-sha256' } });
    solver = await startWebhookSolver({ dns: nsupdate(named), group: GROUP, solverName: SOLVER, serviceName: 'solver', namespace: 'cert-manager' });
    server = await startServer();
    const applied = await server.cli(['apply', '-f', '-'], {
      input: [
        `apiVersion: v1\nkind: Service\nmetadata: { name: solver, namespace: cert-manager }\nspec: { clusterIP: 127.0.0.1, ports: [ { port: 443, targetPort: ${solver.port} } ] }`,
        `apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: { name: v1alpha1.${GROUP} }\nspec: { group: ${GROUP}, version: v1alpha1, groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: cert-manager, name: solver, port: 443 }, caBundle: ${b64(solver.caPem)} }`,
        `apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: { name: v1alpha1.gone.example.test }\nspec: { group: gone.example.test, version: v1alpha1, groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: cert-manager, name: gone, port: 443 } }`,
      ].join('\n---\n'),
    });
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(async () => {
    await server?.stop();
    server?.cleanup();
    await Promise.all([solver?.stop(), named?.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  const kubectl = (args: string[]) => run(kubectlBin, ['--kubeconfig', server.kubeconfig, ...args]);

  test('kubectl get --raw and create --raw reach the solver through the server; a missing backend is 503', async () => {
    const discovery = await kubectl(['get', '--raw', `/apis/${GROUP}/v1alpha1`]);
    assert.equal(discovery.code, 0, discovery.stderr);
    assert.deepEqual((JSON.parse(discovery.stdout) as { resources: { name: string }[] }).resources.map((r) => r.name), [SOLVER]);

    const payload = join(work, 'payload.json');
    const fqdn = `_acme-challenge.raw-${uniq()}.example.test.`;
    writeFileSync(payload, JSON.stringify({
      apiVersion: 'webhook.acme.cert-manager.io/v1alpha1', kind: 'ChallengePayload',
      request: { uid: crypto.randomUUID(), action: 'Present', type: 'dns-01', dnsName: fqdn.slice(16, -1), key: 'raw-value', resourceNamespace: 'default', resolvedFQDN: fqdn, resolvedZone: 'example.test.', allowAmbientCredentials: false },
    }));
    const created = await kubectl(['create', '--raw', `/apis/${GROUP}/v1alpha1/${SOLVER}`, '-f', payload]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal((JSON.parse(created.stdout) as { response: { success: boolean } }).response.success, true);
    const dig = await run('dig', ['@127.0.0.1', '-p', String(named.port), '+short', 'TXT', fqdn]);
    assert.equal(dig.stdout.trim(), '"raw-value"', 'the solver wrote the record the proxied request asked for');
    assert.equal(solver.calls.at(-1)?.remoteUser, 'admin', 'X-Remote-User names the authenticated user');
    assert.deepEqual(solver.calls.at(-1)?.remoteGroups, ['system:masters', 'system:authenticated']);

    const gone = await kubectl(['get', '--raw', '/apis/gone.example.test/v1alpha1']);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /ServiceUnavailable|service "cert-manager\/gone" not found/);
    const unregistered = await kubectl(['get', '--raw', '/apis/nobody.example.test/v1alpha1']);
    assert.match(unregistered.stderr, /NotFound|could not find the requested resource/);
  });

  test('the APIService groups are in /apis discovery: kubectl api-versions lists them, /apis/<group> is their APIGroup', async () => {
    // /apis lists every APIService group, a backend that is down too (as kube-aggregator does)
    const apis = await kubectl(['get', '--raw', '/apis']);
    assert.equal(apis.code, 0, apis.stderr);
    const groups = (JSON.parse(apis.stdout) as { groups: { name: string; preferredVersion: { groupVersion: string } }[] }).groups;
    assert.equal(groups.find((g) => g.name === GROUP)?.preferredVersion.groupVersion, `${GROUP}/v1alpha1`);
    assert.ok(groups.some((g) => g.name === 'gone.example.test'));
    assert.ok(groups.some((g) => g.name === 'cert-manager.io'));
    // kubectl, as against kube-apiserver, fails on a group whose backend is down: remove it first
    const removed = await kubectl(['delete', 'apiservice', 'v1alpha1.gone.example.test']);
    assert.equal(removed.code, 0, removed.stderr);
    const versions = await kubectl(['api-versions']);
    assert.equal(versions.code, 0, versions.stderr);
    const listed = versions.stdout.trim().split('\n');
    assert.ok(listed.includes(`${GROUP}/v1alpha1`), versions.stdout);
    assert.ok(!listed.includes('gone.example.test/v1alpha1'), versions.stdout);
    assert.ok(listed.includes('cert-manager.io/v1') && listed.includes('v1'), versions.stdout);
    const group = await kubectl(['get', '--raw', `/apis/${GROUP}`]);
    assert.equal(group.code, 0, group.stderr);
    assert.deepEqual(JSON.parse(group.stdout), {
      kind: 'APIGroup', apiVersion: 'v1', name: GROUP,
      versions: [{ groupVersion: `${GROUP}/v1alpha1`, version: 'v1alpha1' }], preferredVersion: { groupVersion: `${GROUP}/v1alpha1`, version: 'v1alpha1' },
    });
    // the group's resources, as kubectl api-resources reads them: the backend's own list, proxied
    const resources = await kubectl(['api-resources', `--api-group=${GROUP}`, '-o', 'name']);
    assert.equal(resources.code, 0, resources.stderr);
    assert.match(resources.stdout, new RegExp(`^${SOLVER}\\.${GROUP.replace(/\./g, '\\.')}$`, 'm'), resources.stdout + resources.stderr);
  });
});
