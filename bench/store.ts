// Embedded store throughput and watch latency, on a temp file with the production pragmas.
// Then a restart's list: the store reopened on the same file, every Certificate in one list and in
// pages of 500, as informers fill their caches (issue 17: half of a restart's time at 100,000).
// Run: npx tsx bench/store.ts [count]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../src/api/meta.ts';
import { Certificate } from '../src/api/resources.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';

const count = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-'));
let store = openSqliteStore({ path: join(dir, 'bench.db') });

function certificate(i: number): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
    metadata: { name: `cert-${i}`, namespace: `ns-${i % 10}`, labels: { app: `app-${i % 50}` } },
    spec: { secretName: `cert-${i}-tls`, issuerRef: { name: 'ca', kind: 'ClusterIssuer' }, dnsNames: [`host-${i}.example.com`], duration: '2160h', renewBefore: '360h' },
  };
}

function pct(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

try {
  // the watcher records when each event reaches it; latency = delivery - acknowledged write
  const sentAt = new Map<string, bigint>();
  const latencies: number[] = [];
  let delivered = 0;
  store.watch(Certificate, {}, (e) => {
    delivered++;
    const t0 = sentAt.get(e.object.metadata.resourceVersion!);
    if (t0 !== undefined) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }, (err) => { throw err; });

  let t = performance.now();
  const created: KubeObject[] = [];
  for (let i = 0; i < count; i++) created.push(await store.create(Certificate, certificate(i)));
  let s = (performance.now() - t) / 1000;
  console.log(`store.create: ${Math.round(count / s)} writes/s (${count} in ${s.toFixed(2)}s, watcher attached)`);

  t = performance.now();
  for (let i = 0; i < created.length; i++) {
    const c = created[i];
    created[i] = await store.update(Certificate, { ...c, spec: { ...(c.spec as object), dnsNames: ['changed.example.com'] } });
  }
  s = (performance.now() - t) / 1000;
  console.log(`store.update: ${Math.round(count / s)} writes/s`);

  t = performance.now();
  for (const c of created) await store.updateStatus(Certificate, { ...c, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  s = (performance.now() - t) / 1000;
  console.log(`store.updateStatus: ${Math.round(count / s)} writes/s`);

  t = performance.now();
  let listed = 0;
  let cont: string | undefined;
  do {
    const page = await store.list(Certificate, { limit: 500, continue: cont });
    listed += page.items.length;
    cont = page.continue;
  } while (cont);
  s = (performance.now() - t) / 1000;
  console.log(`store.list: ${Math.round(listed / s)} objects/s (${listed} in pages of 500)`);

  // latency is measured on spaced writes, so it is the delivery path and not a backlog
  await new Promise((r) => setImmediate(r));
  latencies.length = 0;
  for (let i = 0; i < 2000; i++) {
    const c = created[i % created.length];
    const cur = (await store.get(Certificate, c.metadata.namespace, c.metadata.name!))!;
    const t0 = process.hrtime.bigint();
    const u = await store.update(Certificate, { ...cur, metadata: { ...cur.metadata, annotations: { n: String(i) } } });
    sentAt.set(u.metadata.resourceVersion!, t0);
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 50));
  latencies.sort((a, b) => a - b);
  console.log(`store.watch.latency: p50 ${pct(latencies, 0.5).toFixed(3)} ms, p99 ${pct(latencies, 0.99).toFixed(3)} ms (${latencies.length} events, ${delivered} delivered in total)`);

  // the controller workload the lead sized: ~8 writes per certificate for 1,000 certificates
  t = performance.now();
  for (let i = 0; i < 1000; i++) {
    let c = await store.create(Certificate, certificate(count + i));
    for (let w = 0; w < 7; w++) c = await store.updateStatus(Certificate, { ...c, status: { revision: w } });
  }
  s = (performance.now() - t) / 1000;
  console.log(`store.workload: 8000 writes for 1000 certificates in ${s.toFixed(2)} s`);
  const r = store.compact();
  console.log(`store.compact: at revision ${r.compactedRevision} of ${store.currentRevision()}, removed ${r.removedRows} rows`);

  await store.close();
  store = openSqliteStore({ path: join(dir, 'bench.db') });
  for (const [label, limit] of [['one list', 0], ['pages of 500', 500]] as const) {
    const cpu0 = process.cpuUsage();
    t = performance.now();
    let items = 0;
    let next: string | undefined;
    do {
      const page = await store.list(Certificate, { limit, continue: next });
      items += page.items.length;
      next = page.continue;
    } while (next);
    const cpu = process.cpuUsage(cpu0);
    console.log(`store.list after reopening, ${label}: ${items} objects in ${(performance.now() - t).toFixed(0)} ms, CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (${((cpu.user + cpu.system) / items).toFixed(1)} µs per object)`);
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
