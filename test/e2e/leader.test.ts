// Two `certsmith controller --leader-elect` replicas against one API server, as two pods of a
// Deployment: only the leader reconciles and writes; after the leader is SIGKILLed the other
// takes the Lease once it expires and carries on; no Certificate is issued twice for a revision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, waitFor, isReady } from './harness.ts';
import { startController, type RunningController } from './controller-harness.ts';
import { loadClientConfig } from '../../src/server/kubeconfig.ts';
import { HttpStore } from '../../src/store/http/http-store.ts';
import { Certificate, CertificateRequest, LeaseType } from '../../src/api/resources.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { Lease } from '../../src/runtime/leaderelection.ts';
import type { Watch } from '../../src/store/store.ts';

const leaseDurationMs = 4000;
const retryPeriodMs = 1000;
const electionArgs = [
  '--leader-elect', '--leader-election-namespace', 'kube-system',
  '--leader-election-lease-duration', '4s', '--leader-election-renew-deadline', '3s', '--leader-election-retry-period', '1s',
];
// client-go's acquire loop sleeps retryPeriod × (1 + random × 1.2); a follower sees the last
// renewal at most one such sleep late and notices the expiry at most one sleep late.
const takeoverBoundMs = leaseDurationMs + 2 * retryPeriodMs * 2.2;

interface Cert extends KubeObject { status?: { revision?: number; conditions?: Array<{ type: string; status: string }> } }

function certificates(names: string[]): string {
  return names.map((name) => `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ${name}, namespace: default }
spec:
  secretName: ${name}-tls
  dnsNames: [${name}.example.test]
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: selfsigned, kind: ClusterIssuer }
`).join('---\n');
}

async function syncCalls(c: RunningController): Promise<number> {
  const [, address] = await c.waitForOutput(/metrics on (http:\/\/\S+\/metrics)/);
  const text = await (await fetch(address)).text();
  return text.split('\n').filter((l) => l.startsWith('certmanager_controller_sync_call_count'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

test('leader election: only the leader writes, a SIGKILLed leader is replaced after the lease expires, no double issuance', async (t) => {
  const server = await startServer({ args: ['--no-controllers'] });
  const cfg = loadClientConfig({ kubeconfig: server.kubeconfig });
  const store = new HttpStore({ server: cfg.server, caPem: cfg.caPem, token: cfg.token, qps: 0 });
  const replicas: RunningController[] = [];
  // every CertificateRequest ever created, so that one made and deleted again still counts
  const requestsCreated: KubeObject[] = [];
  let watch: Watch | undefined;
  let lastRv: string | undefined;
  const watchRequests = () => {
    watch = store.watch(CertificateRequest, { namespace: 'default', resourceVersion: lastRv }, (e) => {
      lastRv = e.object.metadata.resourceVersion ?? lastRv;
      if (e.type === 'ADDED') requestsCreated.push(e.object);
    }, () => watchRequests());
  };
  try {
    lastRv = (await store.list(CertificateRequest, { namespace: 'default', limit: 1 })).resourceVersion;
    watchRequests();
    const apply = async (yaml: string) => {
      const r = await server.cli(['apply', '-f', '-'], { input: yaml });
      assert.equal(r.code, 0, r.stderr);
    };
    await apply('apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: selfsigned }\nspec: { selfSigned: {} }\n');
    const before = ['before-1', 'before-2', 'before-3'];
    await apply(certificates(before));

    const a = startController({ kubeconfig: server.kubeconfig, args: electionArgs });
    const b = startController({ kubeconfig: server.kubeconfig, args: electionArgs });
    replicas.push(a, b);
    const becameLeader = /became leader \(identity (\S+),/;
    const [leader, first] = await Promise.any([a, b].map(async (c) => [c, await c.waitForOutput(becameLeader)] as const));
    const follower = leader === a ? b : a;
    const leaderId = first[1];
    await follower.waitForOutput(new RegExp(`the leader is ${leaderId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

    const allReady = (names: string[]) => waitFor(`${names.join(', ')} Ready`, async () => {
      const certs = await Promise.all(names.map((n) => store.get<Cert>(Certificate, 'default', n)));
      return certs.every((c) => c && isReady(c)) ? certs as Cert[] : undefined;
    });
    await allReady(before);
    const lease = await store.get<Lease>(LeaseType, 'kube-system', 'cert-manager-controller');
    assert.equal(lease?.spec?.holderIdentity, leaderId, 'the Lease names the replica that says it leads');
    assert.ok(await syncCalls(leader) > 0, 'the leader reconciled');
    assert.equal(await syncCalls(follower), 0, 'the follower reconciled nothing');
    assert.doesNotMatch(follower.output(), /became leader/);

    // Applied just before the kill: the old leader may have begun these, the new one finishes them.
    const during = ['during-1', 'during-2'];
    await apply(certificates(during));
    await new Promise((r) => setTimeout(r, 150));
    const killedAt = Date.now();
    assert.equal(await leader.kill(), 'SIGKILL');
    const inFlight = new Set(requestsCreated.map((cr) => cr.metadata.ownerReferences?.[0]?.name).filter((n) => n && during.includes(n))).size;
    const [, newId] = await follower.waitForOutput(becameLeader, takeoverBoundMs + 5000);
    const takeoverMs = Date.now() - killedAt;
    assert.notEqual(newId, leaderId);
    // the old leader renewed at most one retry period before dying: nobody may take over before it expires
    assert.ok(takeoverMs >= leaseDurationMs - retryPeriodMs, `took over after ${takeoverMs} ms, before the lease expired`);
    assert.ok(takeoverMs <= takeoverBoundMs, `took over after ${takeoverMs} ms (lease duration ${leaseDurationMs} ms)`);
    t.diagnostic(`takeover after SIGKILL: ${takeoverMs} ms (lease duration ${leaseDurationMs} ms, retry period ${retryPeriodMs} ms); ${inFlight} of ${during.length} Certificates had a CertificateRequest when the leader died`);
    const after = await store.get<Lease>(LeaseType, 'kube-system', 'cert-manager-controller');
    assert.equal(after?.spec?.holderIdentity, newId);
    assert.equal(after?.spec?.leaseTransitions, (lease?.spec?.leaseTransitions ?? 0) + 1);

    const later = ['after-1', 'after-2'];
    await apply(certificates(later));
    const all = [...before, ...during, ...later];
    const certs = await allReady(all);
    for (const c of certs) assert.equal(c.status?.revision, 1, `${c.metadata.name} issued once: revision 1`);
    // let anything still in flight land before counting
    await new Promise((r) => setTimeout(r, 500));
    const byCertificate = new Map<string, string[]>();
    for (const cr of requestsCreated) {
      const owner = cr.metadata.ownerReferences?.find((o) => o.kind === 'Certificate')?.name ?? '?';
      byCertificate.set(owner, [...byCertificate.get(owner) ?? [], cr.metadata.annotations?.['cert-manager.io/certificate-revision'] ?? '?']);
    }
    for (const name of all) assert.deepEqual(byCertificate.get(name), ['1'], `${name}: exactly one CertificateRequest, for revision 1`);
    assert.deepEqual([...byCertificate.keys()].sort(), [...all].sort());

    // SIGTERM: the new leader stops its controllers, hands the Lease back and exits 0
    assert.equal(await follower.stop(), 0, follower.output());
    const released = await store.get<Lease>(LeaseType, 'kube-system', 'cert-manager-controller');
    assert.equal(released?.spec?.holderIdentity, '');
  } finally {
    watch?.stop();
    await Promise.all(replicas.map((c) => c.kill()));
    await store.close();
    await server.stop();
    server.cleanup();
  }
});

test('leader election: a leader that cannot renew its Lease exits non-zero within the renew deadline', async () => {
  const server = await startServer({ args: ['--no-controllers'] });
  const cfg = loadClientConfig({ kubeconfig: server.kubeconfig });
  const store = new HttpStore({ server: cfg.server, caPem: cfg.caPem, token: cfg.token, qps: 0 });
  const replica = startController({ kubeconfig: server.kubeconfig, args: electionArgs });
  try {
    await replica.waitForOutput(/became leader/);
    // another holder with a long lease, as after a partition during which someone else took over
    const lease = await store.get<Lease>(LeaseType, 'kube-system', 'cert-manager-controller');
    const now = new Date().toISOString();
    await store.update<Lease>(LeaseType, { ...lease!, spec: { ...lease!.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60, renewTime: now } });
    const takenAt = Date.now();
    const code = await replica.exited;
    const exitedAfterMs = Date.now() - takenAt;
    assert.equal(code, 1, replica.output());
    assert.match(replica.output(), /lost the leader election lease kube-system\/cert-manager-controller/);
    // renew deadline 3 s, checked every retry period 1 s
    assert.ok(exitedAfterMs <= 3000 + 2 * retryPeriodMs + 1500, `exited ${exitedAfterMs} ms after losing the Lease`);
  } finally {
    await replica.kill();
    await store.close();
    await server.stop();
    server.cleanup();
  }
});

test('a server running its own controllers holds the Lease: a controller with --leader-elect waits as a follower, one without is warned; a restarted server takes its Lease back at once', async () => {
  const server = await startServer();
  const replicas: RunningController[] = [];
  try {
    const follower = startController({ kubeconfig: server.kubeconfig, args: electionArgs });
    replicas.push(follower);
    await follower.waitForOutput(/the leader is certsmith-server_/);
    // longer than the follower's own lease duration and two of its retries: it did take the Lease at once before
    await new Promise((r) => setTimeout(r, leaseDurationMs + 2 * retryPeriodMs * 2.2));
    assert.doesNotMatch(follower.output(), /became leader/, follower.output());
    await follower.kill();

    const unelected = startController({ kubeconfig: server.kubeconfig });
    replicas.push(unelected);
    await unelected.waitForOutput(/warning: the controllers of certsmith-server_\S+ hold the Lease kube-system\/cert-manager-controller/);
    await unelected.kill();

    // SIGKILL leaves the Lease held by the dead server; the next run on the data dir takes it back without waiting it out
    const exited = new Promise((r) => server.process.once('exit', r));
    server.kill();
    await exited;
    const again = await startServer({ dataDir: server.dataDir });
    try {
      const cfg = loadClientConfig({ kubeconfig: again.kubeconfig });
      const store = new HttpStore({ server: cfg.server, caPem: cfg.caPem, token: cfg.token, qps: 0 });
      try {
        const holder = await waitFor('the restarted server to hold the Lease', async () => {
          const lease = await store.get<Lease>(LeaseType, 'kube-system', 'cert-manager-controller');
          const h = lease?.spec?.holderIdentity;
          return h?.startsWith('certsmith-server_') && h !== undefined ? h : undefined;
        }, 10_000);
        assert.ok(holder);
      } finally {
        await store.close();
      }
    } finally {
      await again.stop();
    }
  } finally {
    for (const r of replicas) await r.kill();
    await server.stop().catch(() => {});
    server.cleanup();
  }
});
