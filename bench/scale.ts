// Bench: one embedded server holding N CA-issued ECDSA Certificates (issue 17). The stack is
// `certsmith server`'s (src/composition: admission in front of SQLite, the API served, every
// controller). Prints time until all are Ready, peak RSS and heap bytes per Certificate, CPU
// while idle, state.db (+WAL) bytes per Certificate, and, after a restart on the same file in a
// new process, the time until the caches are synced and /readyz answers, how many Certificates
// were re-issued, and the restart's own peak RSS.
// Targets at 100,000: peak RSS ≤ 1 GiB; idle CPU ≤ 1 % of one core; restart ≤ 15 s; none re-issued.
// It runs itself bundled as dist/ is (bench/compiled-run.ts), not through tsx.
// Run: npx tsx bench/scale.ts [count=100000] [--idle-seconds=60] [--keep-dir]
//   the restart alone, on a directory an earlier run kept: npx tsx bench/scale.ts COUNT --restart-from=DIR
//   (a heap snapshot: node --import tsx --heapsnapshot-signal=SIGUSR2 bench/scale.ts 5000, then kill -USR2)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { realClock } from '../src/runtime/clock.ts';
import { silentLogger } from '../src/runtime/logger.ts';
import { compose, type Composition, type RunningControllers } from '../src/composition/index.ts';
import { Certificate, CertificateRequest, resourceTypeFor } from '../src/api/resources.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { Store } from '../src/store/store.ts';
import type { Certificate as CertificateObj } from '../src/api/types.ts';
import { runCompiled } from './compiled-run.ts';

// the server's code as the product runs it (bundled, plain node), not through tsx
await runCompiled(import.meta.url);

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const count = Number(args.find((a) => !a.startsWith('--')) ?? 100_000);
const idleSeconds = Number(flag('idle-seconds') ?? 60);
const keepDir = args.includes('--keep-dir');
// a kept directory's state.db is restarted on as it is (the first run skipped): for working on the restart alone
const restartFrom = flag('restart-from');
// --breakdown: what each informer holds (objects and JSON bytes), and a heap snapshot's path with --heap-snapshot=FILE
const breakdown = args.includes('--breakdown');
const heapSnapshot = flag('heap-snapshot');
if (!Number.isInteger(count) || count < 1) throw new Error(`count must be a positive integer, got ${count}`);
if (!(idleSeconds > 0)) throw new Error(`--idle-seconds must be a positive number, got ${flag('idle-seconds')}`);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const namespace = 'bench';
const MiB = 1024 * 1024;

let peakRss = 0;
/** process.memoryUsage() when RSS peaked: tells a heap that outgrew its live objects from memory outside the heap */
let atPeak: NodeJS.MemoryUsage | undefined;
// rss() alone every 50 ms (it reads one /proc file); the whole breakdown only at a new peak, so the
// sampler itself does not show up in the idle CPU figure
const sampleRss = () => {
  if (process.memoryUsage.rss() <= peakRss) return;
  atPeak = process.memoryUsage();
  peakRss = atPeak.rss;
};
const describe = (m: NodeJS.MemoryUsage) => `V8 heap ${(m.heapTotal / MiB).toFixed(0)} MiB (${(m.heapUsed / MiB).toFixed(0)} MiB used), external ${(m.external / MiB).toFixed(0)} MiB, the rest (code, SQLite, OpenSSL, malloc) ${((m.rss - m.heapTotal - m.external) / MiB).toFixed(0)} MiB`;
let rssTimer = setInterval(sampleRss, 50);

/**
 * CPU ms of each kind of thread of this process (Linux: /proc/self/task/TID/comm and stat), by
 * thread name: the main thread ("node" on the lowest id), V8's helpers ("V8 DefaultWorke"), the
 * libuv pool ("libuv-worker"), worker threads; where idle CPU goes when the main thread is quiet.
 */
function cpuByThread(): Map<string, number> {
  const out = new Map<string, number>();
  const ticksPerMs = 100 / 1000; // USER_HZ
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const name = String(tid) === String(process.pid) ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / ticksPerMs);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** the JS heap and the Buffers' memory outside it, after a full collection */
function heapAfterGc(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** CertificateRequests created through the view: each is an issuance. */
function countingRequests(store: Store) {
  let created = 0;
  const wrapped: Store = {
    ...store,
    get: (t, ns, n) => store.get(t, ns, n),
    list: (t, o) => store.list(t, o),
    watch: (t, o, e, err) => store.watch(t, o, e, err),
    create: (t, o, w) => store.create(t, o, w).then((v) => { if (t.kind === CertificateRequest.kind && !w?.dryRun) created++; return v; }),
    update: (t, o, w) => store.update(t, o, w),
    updateStatus: (t, o, w) => store.updateStatus(t, o, w),
    patch: (t, ns, n, pt, p, o) => store.patch(t, ns, n, pt, p, o),
    delete: (t, ns, n, o) => store.delete(t, ns, n, o),
    close: () => store.close(),
  };
  return { wrapped, created: () => created };
}

interface Running { stack: Composition; controllers: RunningControllers; apiUrl: string; requests: () => number }

async function start(dbPath: string): Promise<Running> {
  const stack = compose({ store: openSqliteStore({ path: dbPath }), clock: realClock, logger: silentLogger });
  const counter = countingRequests(stack.store);
  const api = await stack.serveApi({ host: '127.0.0.1', port: 0 });
  const controllers = await stack.startControllers({ view: () => counter.wrapped, options: { metricsListen: '', healthListen: '' } });
  return { stack, controllers, apiUrl: api.url, requests: counter.created };
}

async function until(what: string, fn: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 200) {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const isReady = (c: CertificateObj) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
const readyCount = (r: Running) => r.controllers.context.informers.informerFor<CertificateObj>(Certificate).list(namespace)
  .reduce((n, c) => n + (c.metadata.name !== 'ca' && isReady(c) ? 1 : 0), 0);
/** each Certificate's issued revision: a re-issuance raises it */
const revisions = (r: Running) => new Map(r.controllers.context.informers.informerFor<CertificateObj>(Certificate).list(namespace)
  .map((c) => [c.metadata.name!, c.status?.revision ?? 0]));

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

const dir = restartFrom ?? mkdtempSync(join(tmpdir(), 'certsmith-bench-scale-'));
const dbPath = join(dir, 'state.db');
const apply = (store: Store, o: KubeObject) => store.create(resourceTypeFor(o.apiVersion, o.kind)!, o);

/**
 * The first server: applies count Certificates, measures until all are Ready and while idle,
 * stops. Its state goes out of scope with it, as a restarted process starts without it.
 */
async function issueAll(): Promise<Map<string, number>> {
  const running = await start(dbPath);
  await apply(running.stack.store, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
  await apply(running.stack.store, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ca', namespace }, spec: { isCA: true, commonName: 'bench CA', secretName: 'ca', duration: '87600h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } } });
  await apply(running.stack.store, { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace }, spec: { ca: { secretName: 'ca' } } });
  await running.controllers.manager.whenIdle({ timeoutMs: 120_000 });
  const heapBefore = heapAfterGc();
  const rssBefore = process.memoryUsage().rss;

  // applied as a client would, a bounded number in flight
  const t0 = performance.now();
  const inFlight = 64;
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < count) {
      const i = next++;
      await apply(running.stack.store, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `c${i}`, namespace }, spec: { secretName: `c${i}-tls`, dnsNames: [`c${i}.bench.test`], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'ca' } } });
    }
  }));
  const appliedMs = performance.now() - t0;
  let lastReport = Date.now();
  await until(`${count} Certificates Ready`, () => {
    const n = readyCount(running);
    if (Date.now() - lastReport > 30_000) {
      lastReport = Date.now();
      console.error(`  ... ${n} Ready after ${((performance.now() - t0) / 1000).toFixed(0)} s, RSS ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
    }
    return n >= count;
  }, Math.max(3_600_000, count * 200), 500);
  const readyMs = performance.now() - t0;
  await running.controllers.manager.whenIdle({ timeoutMs: 600_000 });
  const heapReady = heapAfterGc();
  sampleRss();
  console.log(`scale: ${count} ECDSA Certificates from one CA issuer: applied in ${(appliedMs / 1000).toFixed(1)} s, all Ready in ${(readyMs / 1000).toFixed(1)} s (${(count / (readyMs / 1000)).toFixed(0)}/s)`);
  console.log(`scale: peak RSS ${(peakRss / MiB).toFixed(0)} MiB (goal ≤ 1024 MiB; ${(peakRss / MiB) <= 1024 ? 'met' : 'not met'}), ${((peakRss - rssBefore) / count / 1024).toFixed(1)} KiB RSS per Certificate over the start; heap used (with Buffers) ${(heapReady / MiB).toFixed(0)} MiB after GC, ${((heapReady - heapBefore) / count).toFixed(0)} heap bytes per Certificate`);
  console.log(`scale: at the RSS peak: ${describe(atPeak!)}; now, after GC: RSS ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB, ${describe(process.memoryUsage())}`);
  if (breakdown) {
    for (const i of running.controllers.context.informers.all()) {
      const items = i.list();
      if (items.length) console.log(`  informer ${i.type.plural}: ${items.length} objects, ${(items.reduce((n, o) => n + JSON.stringify(o).length, 0) / items.length).toFixed(0)} JSON bytes each`);
    }
  }
  if (heapSnapshot) console.log(`scale: heap snapshot written to ${writeHeapSnapshot(heapSnapshot)}`);

  // idle: nothing left to do; what the process burns is timers, resyncs and housekeeping
  // where it goes: the main thread's own work (event-loop utilisation) and garbage collection
  // (V8's memory reducer collects a large heap again after a burst of allocation ends)
  // the 50 ms RSS sampler alone costs about 0.45 % of a core: paused while idle (nothing grows then)
  // Two windows one after the other: the first holds what a burst leaves to do once (the store's
  // first compaction and WAL checkpoint after the writes stop, the memory reducer's collections),
  // the second what an idle server costs from then on.
  clearInterval(rssTimer);
  sampleRss();
  for (const window of ['the first', 'the next']) {
    const gcs: PerformanceEntry[] = [];
    const idleT0 = performance.now();
    // only collections inside the window: an entry is made a moment after its collection, so with
    // any other gc observer in the process running, the forced ones above and the breakdown's
    // would reach this observer too
    const gcObserver = new PerformanceObserver((list) => { gcs.push(...list.getEntries().filter((e) => e.startTime >= idleT0)); });
    gcObserver.observe({ entryTypes: ['gc'] });
    const idleCpu0 = process.cpuUsage();
    const idleElu0 = performance.eventLoopUtilization();
    const threads0 = cpuByThread();
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const idleCpu = process.cpuUsage(idleCpu0);
    const threads = [...cpuByThread()].map(([name, ms]) => [name, ms - (threads0.get(name) ?? 0)] as const).filter(([, ms]) => ms > 0);
    const idleElu = performance.eventLoopUtilization(idleElu0);
    gcObserver.disconnect();
    const idlePct = ((idleCpu.user + idleCpu.system) / 1000) / (performance.now() - idleT0) * 100;
    const gcMs = gcs.reduce((n, e) => n + e.duration, 0);
    console.log(`scale: CPU while idle, ${window} ${idleSeconds} s after all were Ready: ${idlePct.toFixed(2)} % of one core (goal ≤ 1 %; ${idlePct <= 1 ? 'met' : 'not met'}); main thread busy ${(idleElu.utilization * 100).toFixed(2)} %, ${gcs.length} garbage collections pausing it ${gcMs.toFixed(0)} ms; by thread: ${threads.map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`).join(', ') || 'none measurable'}`);
  }
  sampleRss();
  rssTimer = setInterval(sampleRss, 50);

  const before = revisions(running);
  const requestsBefore = running.requests();
  await running.stack.stop();
  const db = fileBytes(dbPath);
  const wal = fileBytes(`${dbPath}-wal`);
  console.log(`scale: state.db ${(db / MiB).toFixed(1)} MiB + WAL ${(wal / MiB).toFixed(1)} MiB: ${(db / count / 1024).toFixed(2)} KiB per Certificate (${((db + wal) / count / 1024).toFixed(2)} KiB with the WAL); ${requestsBefore} CertificateRequests created`);
  return before;
}

if (!restartFrom) {
  const issued = await issueAll();
  writeFileSync(join(dir, 'revisions.json'), JSON.stringify([...issued]));
  // the restart in a process of its own, as after a reboot or an upgrade: none of the first
  // server's heap, compiled code or caches carries over (in this process it was warmer)
  const restart = spawnSync(process.execPath, [...process.execArgv, process.argv[1], String(count), `--restart-from=${dir}`], { stdio: 'inherit' });
  if (keepDir) console.log(`scale: data kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  process.exit(restart.status ?? 1);
}
// each Certificate's revision when the first server stopped, when that run wrote them
const revisionsFile = join(dir, 'revisions.json');
const before = existsSync(revisionsFile) ? new Map<string, number>(JSON.parse(readFileSync(revisionsFile, 'utf8'))) : undefined;

// restart on the same file, as `certsmith server` would after a reboot
const restartT0 = performance.now();
const running = await start(dbPath);
const syncedMs = performance.now() - restartT0;
await until('/readyz', async () => (await fetch(`${running.apiUrl}/readyz`).catch(() => undefined))?.status === 200, 120_000, 20);
const readyzMs = performance.now() - restartT0;
await running.controllers.manager.whenIdle({ timeoutMs: 600_000 });
await new Promise((r) => setTimeout(r, 2000));
await running.controllers.manager.whenIdle({ timeoutMs: 600_000 });
const after = revisions(running);
let reissued = 0;
// without the first run's revisions, what the restart re-issued is what it requested
if (before) {
  for (const [name, rev] of after) if (rev !== before.get(name)) reissued++;
} else {
  reissued = running.requests();
}
const stillReady = readyCount(running);
sampleRss();
console.log(`scale: restart with ${count} stored: caches synced in ${(syncedMs / 1000).toFixed(2)} s, /readyz answering in ${(readyzMs / 1000).toFixed(2)} s (goal ≤ 15 s; ${readyzMs <= 15_000 ? 'met' : 'not met'}); re-issued: ${reissued} (CertificateRequests created ${running.requests()}); Ready ${stillReady}/${count}`);
await running.stack.stop();
clearInterval(rssTimer);
console.log(`scale: peak RSS of the restart ${(peakRss / MiB).toFixed(0)} MiB (${describe(atPeak!)})`);
