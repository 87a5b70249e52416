// Bench: a year of renewals on one embedded store (issue 17). N 90-day ECDSA Certificates from a
// CA issuer on `certsmith server`'s stack (src/composition) over a state file, with a fake clock
// moved a day at a time: each renews every 60 days. Prints state.db after the first issuance and
// every 30 days (after compaction and a WAL checkpoint, as an idle server leaves it), the largest
// as a multiple of the first (goal ≤ 1.5×), and free pages.
// The store keeps its production settings (10,000 revisions of history, Events for 1 h) except
// that it compacts hourly rather than every minute, so a year of fake time does not fire half a
// million compaction timers.
// Run: npx tsx bench/store-growth.ts [count=10000] [--keep=revisions] [--days=365]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FakeClock } from '../src/runtime/clock.ts';
import { silentLogger } from '../src/runtime/logger.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { compose } from '../src/composition/index.ts';
import { Certificate, resourceTypeFor } from '../src/api/resources.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { Certificate as CertificateObj } from '../src/api/types.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const count = Number(args.find((a) => !a.startsWith('--')) ?? 10_000);
const keep = flag('keep') === undefined ? undefined : Number(flag('keep'));
const days = Number(flag('days') ?? 365);
if (!Number.isInteger(count) || count < 1) throw new Error(`count must be a positive integer, got ${count}`);
if (keep !== undefined && !(Number.isInteger(keep) && keep >= 0)) throw new Error(`--keep must be a whole number of revisions, got ${flag('keep')}`);
if (!(Number.isInteger(days) && days > 0)) throw new Error(`--days must be a positive whole number, got ${flag('days')}`);

const DAY = 86_400_000;
const KiB = 1024;
const start = Date.parse('2026-01-01T00:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-growth-'));
const path = join(dir, 'state.db');
const clock = new FakeClock(start);
const backend = openSqliteStore({ path, clock, compactKeep: keep, compactIntervalMs: 3_600_000 });
const stack = compose({ store: backend, clock, logger: silentLogger });
const running = await stack.startControllers({ options: { metricsListen: '', healthListen: '' } });
const settle = () => running.manager.whenIdle({ timeoutMs: 1_800_000 });
const apply = (o: KubeObject) => stack.store.create(resourceTypeFor(o.apiVersion, o.kind)!, o);
const t0 = performance.now();

await apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ca', namespace: 'bench' }, spec: { isCA: true, commonName: 'bench CA', secretName: 'ca', duration: '87600h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } } });
await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'bench' }, spec: { ca: { secretName: 'ca' } } });
await settle();
let next = 0;
await Promise.all(Array.from({ length: 64 }, async () => {
  while (next < count) {
    const i = next++;
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `c${i}`, namespace: 'bench' }, spec: { secretName: `c${i}-tls`, dnsNames: [`c${i}.bench.test`], duration: '2160h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'ca' } } });
  }
}));
await settle();

const certificates = () => running.context.informers.informerFor<CertificateObj>(Certificate).list('bench').filter((c) => c.metadata.name !== 'ca');
const ready = (c: CertificateObj) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
const measure = () => {
  backend.compact();
  backend.checkpoint();
  return { bytes: statSync(path).size, ...backend.pageStats() };
};
const first = measure();
console.log(`store-growth: ${count} Certificates Ready: ${certificates().filter(ready).length} after ${((performance.now() - t0) / 1000).toFixed(0)} s; state.db ${(first.bytes / KiB / KiB).toFixed(1)} MiB (${(first.bytes / count / KiB).toFixed(2)} KiB per Certificate)`);
let largest = first.bytes;
for (let day = 1; day <= days; day++) {
  clock.set(start + day * DAY);
  await settle();
  if (day % 30 === 0 || day === days) {
    const m = measure();
    largest = Math.max(largest, m.bytes);
    const revisions = certificates().map((c) => c.status?.revision ?? 0);
    console.log(`store-growth: day ${day}: state.db ${(m.bytes / KiB / KiB).toFixed(1)} MiB (${(m.bytes / first.bytes).toFixed(2)}×), ${m.freePages} of ${m.pages} pages free; revisions ${Math.min(...revisions)}–${Math.max(...revisions)}; ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
}
const ratio = largest / first.bytes;
console.log(`store-growth: largest state.db over ${days} days ${(ratio).toFixed(2)}× its size after the first issuance (goal ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'not met'}); Ready at the end ${certificates().filter(ready).length}/${count}`);
await stack.stop();
rmSync(dir, { recursive: true, force: true });
