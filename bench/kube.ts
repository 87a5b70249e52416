// Bench: the cluster backend. The controllers run on HttpStore (the client `certsmith controller`
// uses) against an embedded API server started here on SQLite over HTTPS, as against a cluster.
// Prints API writes per issuance and 409 conflicts (counted at the server), time until every
// Certificate is Ready with the client-side limit at QPS 20 / burst 50 (the defaults), QPS 50 /
// burst 100, and unthrottled; and the controllers' RSS with 20,000 unrelated 10 KB Secrets present
// (measured in a child process that runs only the controllers, so the server is not counted).
// The unthrottled run's Certificates are created through the HTTP API (admission included); the
// same count on the embedded stack, in the same run, is printed next to it.
// Run: npx tsx bench/kube.ts [count=1000] [throttledCount=100] [unrelatedSecrets=20000]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { RunningApiServer } from '../src/server/api-server.ts';
import { ensureServingCertificate } from '../src/server/tls.ts';
import { HttpStore } from '../src/store/http/http-store.ts';
import { realClock } from '../src/runtime/clock.ts';
import { silentLogger } from '../src/runtime/logger.ts';
import { compose, startControllerManager } from '../src/composition/index.ts';
import { Certificate, EventType, SecretType, resourceTypeFor, type ResourceType } from '../src/api/resources.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { Store } from '../src/store/store.ts';
import type { Certificate as CertificateObj } from '../src/api/types.ts';

const namespace = 'bench';

/** What the server's store is asked to do, by method and kind: every API request but discovery. */
function countingAtServer(store: Store) {
  const calls = new Map<string, number>();
  const conflictsBy = new Map<string, number>();
  const bump = <T>(method: string, t: ResourceType, p: Promise<T>): Promise<T> => p.then((v) => {
    const key = `${method} ${t.kind}`;
    calls.set(key, (calls.get(key) ?? 0) + 1);
    return v;
  }, (e) => {
    if (e?.reason === 'Conflict') conflictsBy.set(`${method} ${t.kind}`, (conflictsBy.get(`${method} ${t.kind}`) ?? 0) + 1);
    throw e;
  });
  const wrapped: Store = {
    get: (t, ns, n) => bump('get', t, store.get(t, ns, n)),
    list: (t, o) => bump('list', t, store.list(t, o)),
    watch: (t, o, e, err) => {
      calls.set(`watch ${t.kind}`, (calls.get(`watch ${t.kind}`) ?? 0) + 1);
      return store.watch(t, o, e, err);
    },
    create: (t, o, w) => bump('create', t, store.create(t, o, w)),
    update: (t, o, w) => bump('update', t, store.update(t, o, w)),
    updateStatus: (t, o, w) => bump('updateStatus', t, store.updateStatus(t, o, w)),
    patch: (t, ns, n, pt, p, o) => bump('patch', t, store.patch(t, ns, n, pt, p, o)),
    delete: (t, ns, n, o) => bump('delete', t, store.delete(t, ns, n, o)),
    close: () => store.close(),
  };
  const sum = (pred: (method: string, kind: string) => boolean) =>
    [...calls].filter(([k]) => pred(...(k.split(' ') as [string, string]))).reduce((n, [, v]) => n + v, 0);
  return {
    store: wrapped,
    reset() { calls.clear(); conflictsBy.clear(); },
    conflicts: () => [...conflictsBy.values()].reduce((a, b) => a + b, 0),
    conflictBreakdown: () => [...conflictsBy].sort().map(([k, v]) => `${k} ${v}`).join(', ') || 'none',
    writes: (pred: (kind: string) => boolean = () => true) => sum((m, k) => !['get', 'list', 'watch'].includes(m) && pred(k)),
    reads: () => sum((m) => ['get', 'list', 'watch'].includes(m)),
    breakdown: () => [...calls].filter(([k]) => !/^(get|list|watch) /.test(k)).sort().map(([k, v]) => `${k} ${v}`).join(', '),
  };
}

interface Bench {
  dir: string;
  server: RunningApiServer;
  raw: Store;
  counter: ReturnType<typeof countingAtServer>;
  caPem: string;
  token: string;
  close(): Promise<void>;
}

async function startBenchServer(): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-kube-'));
  // certsmith server's stack (src/composition): admission in front of SQLite, the API over HTTPS
  const stack = compose({ store: openSqliteStore({ path: join(dir, 'state.db') }), clock: realClock, logger: silentLogger });
  const raw = stack.store;
  const counter = countingAtServer(raw);
  const tls = await ensureServingCertificate(dir);
  const token = randomBytes(24).toString('base64url');
  const server = await stack.serveApi({ view: () => counter.store, tls: { certPem: tls.certPem, keyPem: tls.keyPem }, token });
  const caPem = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
  return {
    dir, server, raw, counter, caPem, token,
    async close() {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const apply = (store: Store, o: KubeObject) => store.create(resourceTypeFor(o.apiVersion, o.kind)!, o);

async function createCAIssuer(store: Store) {
  await apply(store, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await apply(store, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
  await apply(store, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ca', namespace }, spec: { isCA: true, commonName: 'bench CA', secretName: 'ca', duration: '87600h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } } });
  await apply(store, { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace }, spec: { ca: { secretName: 'ca' } } });
}

const isReady = (c: CertificateObj) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');

async function readyCount(store: Store, prefix: string) {
  return (await store.list<CertificateObj>(Certificate, { namespace })).items.filter((c) => c.metadata.name!.startsWith(prefix) && isReady(c)).length;
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs: number, everyMs = 250) {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the server has seen no write for `quietMs`, so that trailing writes are counted. */
async function settle(counter: Bench['counter'], quietMs = 1500) {
  let last = -1;
  for (;;) {
    const n = counter.writes();
    if (n === last) return;
    last = n;
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

async function issuanceRun(label: string, count: number, qps: number, burst: number) {
  const b = await startBenchServer();
  const client = new HttpStore({ server: b.server.url, caPem: b.caPem, token: b.token, qps, burst });
  try {
    await createCAIssuer(b.raw);
    const running = await startControllerManager({ store: client, clock: realClock, logger: silentLogger, options: { metricsListen: '', healthListen: '' } });
    await until('the CA Ready', async () => (await readyCount(b.raw, 'ca')) === 1, 60_000);
    await settle(b.counter);
    b.counter.reset();

    // the Certificates arrive as a user's apply would: through the HTTP API and its admission
    // (validation, defaulting), on a client of their own that is not throttled
    const applier = new HttpStore({ server: b.server.url, caPem: b.caPem, token: b.token, qps: 0, burst: 0 });
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      await apply(applier, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `leaf-${i}`, namespace }, spec: { secretName: `leaf-${i}-tls`, dnsNames: [`leaf-${i}.bench.test`], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'ca' } } });
    }
    await applier.close();
    await until(`${count} Certificates Ready`, async () => (await readyCount(b.raw, 'leaf-')) === count, 30 * 60_000);
    const seconds = (performance.now() - t0) / 1000;
    await settle(b.counter);
    await running.stop();

    const objectWrites = b.counter.writes((k) => k !== EventType.kind) - count;
    const eventWrites = b.counter.writes((k) => k === EventType.kind);
    console.log(`${label}: ${count} Certificates Ready in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)}/s)`);
    console.log(`${label}: API writes per issuance: ${(objectWrites / count).toFixed(2)} objects + ${(eventWrites / count).toFixed(2)} Events; ` +
      `reads ${(b.counter.reads() / count).toFixed(2)}; 409 conflicts: ${b.counter.conflicts()}`);
    console.log(`${label}: by method (the ${count} applies included): ${b.counter.breakdown()}`);
    console.log(`${label}: 409s by method: ${b.counter.conflictBreakdown()}`);
    return { seconds, objectWrites, eventWrites, conflicts: b.counter.conflicts(), ready: await readyCount(b.raw, 'leaf-') };
  } finally {
    await client.close();
    await b.close();
  }
}

/**
 * The same Certificates on the embedded stack (certsmith server's controllers on the store in
 * process, as bench/issue-ca.ts runs them), for the figure printed next to the HTTP one.
 */
async function embeddedRun(count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-kube-embedded-'));
  const stack = compose({ store: openSqliteStore({ path: join(dir, 'state.db') }), clock: realClock, logger: silentLogger });
  try {
    const running = await stack.startControllers({ view: () => stack.store, options: { metricsListen: '', healthListen: '' } });
    await createCAIssuer(stack.store);
    await until('the CA Ready', async () => (await readyCount(stack.store, 'ca')) === 1, 60_000, 50);
    await running.manager.whenIdle({ timeoutMs: 120_000 });
    const informer = running.context.informers.informerFor<CertificateObj>(Certificate);
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      await apply(stack.store, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `leaf-${i}`, namespace }, spec: { secretName: `leaf-${i}-tls`, dnsNames: [`leaf-${i}.bench.test`], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'ca' } } });
    }
    await until(`${count} Certificates Ready (embedded)`, async () => informer.list(namespace).filter((c) => c.metadata.name!.startsWith('leaf-') && isReady(c)).length === count, 30 * 60_000, 20);
    const seconds = (performance.now() - t0) / 1000;
    const ready = await readyCount(stack.store, 'leaf-');
    console.log(`embedded: ${count} Certificates Ready in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)}/s); ${ready} Ready in the store`);
    return { seconds, ready };
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ChildReport { syncedMs: number; rssMiB: number; peakRssMiB: number; heapUsedMiB: number; cachedSecrets: number; metadataOnly: number }

/** The controllers alone in a child process (the server stays here), reporting their memory once caches synced. */
function controllersInChild(b: Bench): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = fork(import.meta.filename, ['--controllers-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let report: ChildReport | undefined;
    child.once('message', (m) => {
      report = m as ChildReport;
      child.kill('SIGTERM');
    });
    child.once('error', reject);
    // resolved on exit, so that the next phase never overlaps with this child
    child.once('exit', (code) => (report ? resolve(report) : reject(new Error(`controller child exited with ${code}`))));
    child.send({ url: b.server.url, caPem: b.caPem, token: b.token });
  });
}

async function runControllersChild() {
  const { url, caPem, token } = await new Promise<{ url: string; caPem: string; token: string }>((r) => process.once('message', (m) => r(m as never)));
  let peak = 0;
  // rss() alone: memoryUsage() also gathers heap statistics, a cost the measured run would carry
  const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, 10);
  const t0 = performance.now();
  // the cluster defaults: QPS 20, burst 50
  const client = new HttpStore({ server: url, caPem, token });
  const running = await startControllerManager({ store: client, clock: realClock, logger: silentLogger, options: { metricsListen: '', healthListen: '' } });
  const syncedMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 2000));
  // a collection first, so that RSS is what the caches hold rather than garbage from the initial lists
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  await new Promise((r) => setTimeout(r, 500));
  clearInterval(sample);
  const secrets = running.context.informers.informerFor(SecretType).list();
  const mem = process.memoryUsage();
  const report: ChildReport = {
    syncedMs, rssMiB: mem.rss / 2 ** 20, peakRssMiB: Math.max(peak, mem.rss) / 2 ** 20, heapUsedMiB: mem.heapUsed / 2 ** 20,
    cachedSecrets: secrets.length, metadataOnly: secrets.filter((s) => !('data' in s)).length,
  };
  process.once('SIGTERM', () => {
    setTimeout(() => process.exit(0), 3000).unref();
    void running.stop().then(() => client.close()).finally(() => process.exit(0));
  });
  process.send!(report);
}

async function memoryRun(unrelated: number) {
  const b = await startBenchServer();
  try {
    await createCAIssuer(b.raw);
    const baseline = await controllersInChild(b);
    // 10 KB of data each, in namespaces of their own: nothing certsmith manages
    const t0 = performance.now();
    for (let i = 0; i < unrelated; i++) {
      if (i % 1000 === 0) await apply(b.raw, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `app-${i / 1000}` } });
      await b.raw.create(SecretType, {
        apiVersion: 'v1', kind: 'Secret', metadata: { name: `unrelated-${i}`, namespace: `app-${Math.floor(i / 1000)}`, labels: { app: 'other' } },
        type: 'Opaque', data: { payload: randomBytes(7680).toString('base64') },
      } as KubeObject);
    }
    console.log(`memory: created ${unrelated} unrelated 10 KB Secrets in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const loaded = await controllersInChild(b);
    const fmt = (r: ChildReport) => `RSS ${r.rssMiB.toFixed(0)} MiB (peak ${r.peakRssMiB.toFixed(0)} MiB while syncing), heap ${r.heapUsedMiB.toFixed(0)} MiB, ` +
      `caches synced in ${(r.syncedMs / 1000).toFixed(1)} s, ${r.cachedSecrets} Secrets cached (${r.metadataOnly} metadata only)`;
    console.log(`memory: controllers with no unrelated Secrets: ${fmt(baseline)}`);
    console.log(`memory: controllers with ${unrelated} unrelated Secrets: ${fmt(loaded)}`);
    console.log(`memory: ${unrelated} × 10 KB = ${(unrelated * 10 / 1024).toFixed(0)} MiB of Secret data; the controllers hold ${(loaded.rssMiB - baseline.rssMiB).toFixed(0)} MiB more RSS for it ` +
      `(cert-manager's issue: > 8 GB with 30k Secrets)`);
  } finally {
    await b.close();
  }
}

if (process.argv.includes('--controllers-child')) {
  await runControllersChild();
} else {
  const count = Number(process.argv[2] ?? 1000);
  const throttledCount = Number(process.argv[3] ?? Math.min(count, 100));
  const unrelated = Number(process.argv[4] ?? 20_000);
  console.log(`counts: unthrottled ${count} Certificates; throttled runs ${throttledCount} (at QPS 20, ~18 API requests per issuance, Events included, would take many minutes at ${count}); ${unrelated} unrelated Secrets`);
  const embedded = await embeddedRun(count);
  const free = await issuanceRun(`unthrottled (qps 0), ${count}`, count, 0, 0);
  console.log(`HTTP API with admission: ${free.ready}/${count} Ready in ${free.seconds.toFixed(1)} s; embedded: ${embedded.ready}/${count} Ready in ${embedded.seconds.toFixed(1)} s ` +
    `(HTTP / embedded: ${(free.seconds / embedded.seconds).toFixed(2)})`);
  const q50 = await issuanceRun(`qps 50 burst 100, ${throttledCount}`, throttledCount, 50, 100);
  const q20 = await issuanceRun(`qps 20 burst 50, ${throttledCount}`, throttledCount, 20, 50);
  console.log(`summary: writes per issuance ${(free.objectWrites / count).toFixed(2)} (+${(free.eventWrites / count).toFixed(2)} Events); ` +
    `409s ${free.conflicts}/${q50.conflicts}/${q20.conflicts}; Ready in ${free.seconds.toFixed(1)} s unthrottled (${count}), ` +
    `${q50.seconds.toFixed(1)} s at qps 50 and ${q20.seconds.toFixed(1)} s at qps 20 (${throttledCount}); cert-manager's report: 500 in 417 s behind throttling`);
  await memoryRun(unrelated);
}
