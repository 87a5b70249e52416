// Bench: what one open dashboard page receives while N CA-issued ECDSA Certificates are applied
// and issued on the embedded stack (the server's composition and its dashboard listener). Prints
// the bytes and messages on the page's event stream, next to what whole lists at the same
// moments would have been (what the stream sent before change lists), and how long a page that
// opens once all are Ready waits for its first list.
// Run: npx tsx bench/dashboard.ts [count=1000]
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { realClock } from '../src/runtime/clock.ts';
import { silentLogger } from '../src/runtime/logger.ts';
import { compose } from '../src/composition/index.ts';
import { startDashboard } from '../src/dashboard/index.ts';
import { Certificate, resourceTypeFor } from '../src/api/resources.ts';
import type { KubeObject } from '../src/api/meta.ts';
import type { Certificate as CertificateObj } from '../src/api/types.ts';
import type { Changes, Snapshot } from '../src/dashboard/server/live-view.ts';

const count = Number(process.argv[2] ?? 1000);

interface Page { bytes: number; messages: number; wholeListBytes: number; firstListMs?: number; close(): void }

/** One page's event stream, read as the browser's EventSource would, keeping the list it holds. */
function openPage(port: number): Promise<Page> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let list: Snapshot | undefined;
    let buffered = '';
    const page: Page = { bytes: 0, messages: 0, wholeListBytes: 0, close: () => req.destroy() };
    const req = http.get({ host: '127.0.0.1', port, path: '/api/stream', agent: false }, (res) => {
      res.setEncoding('utf8');
      resolve(page);
      res.on('data', (d: string) => {
        page.bytes += Buffer.byteLength(d);
        buffered += d;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const type = /^event: (\S+)/m.exec(event)?.[1];
          const data = /^data: (.*)$/m.exec(event)?.[1];
          if (!type || !data) continue;
          page.messages++;
          if (type === 'snapshot') {
            list = JSON.parse(data) as Snapshot;
            page.firstListMs ??= performance.now() - t0;
          } else if (type === 'changes' && list) {
            const c = JSON.parse(data) as Changes;
            const key = (x: { namespace: string; name: string }) => `${x.namespace}/${x.name}`;
            const rows = new Map(list.certificates.map((x) => [key(x), x]));
            for (const r of c.removed) rows.delete(key(r));
            for (const x of c.upserted) rows.set(key(x), x);
            list = { version: c.version, generatedAt: c.generatedAt, upstream: c.upstream, certificates: [...rows.values()] };
          }
          // the message a whole-list stream sends for the same moment
          if (list) page.wholeListBytes += Buffer.byteLength(`event: snapshot\ndata: ${JSON.stringify(list)}\n\n`);
        }
      });
    });
    req.on('error', reject);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-dashboard-'));
const stack = compose({ store: openSqliteStore({ path: join(dir, 'state.db') }), clock: realClock, logger: silentLogger });
const running = await stack.startControllers({ view: () => stack.store, options: { metricsListen: '', healthListen: '' } });
const dashboard = await startDashboard({ store: stack.store, host: '127.0.0.1', port: 0, clock: realClock, logger: silentLogger });
const apply = (o: KubeObject) => stack.store.create(resourceTypeFor(o.apiVersion, o.kind)!, o);
await apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ca', namespace: 'bench' }, spec: { isCA: true, commonName: 'bench CA', secretName: 'ca', duration: '87600h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } } });
await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'bench' }, spec: { ca: { secretName: 'ca' } } });
await running.manager.whenIdle({ timeoutMs: 120_000 });

const watching = await openPage(dashboard.port);
const t0 = performance.now();
for (let i = 0; i < count; i++) {
  await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `c${i}`, namespace: 'bench' }, spec: { secretName: `c${i}-tls`, dnsNames: [`c${i}.bench.test`], privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'ca' } } });
}
const informer = running.context.informers.informerFor<CertificateObj>(Certificate);
while (informer.list('bench').filter((c) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).length < count + 1) {
  await new Promise((r) => setTimeout(r, 20));
}
const issuedMs = performance.now() - t0;
await running.manager.whenIdle({ timeoutMs: 120_000 });
// the last burst reaches the page
await new Promise((r) => setTimeout(r, 3000));
watching.close();
const late = await openPage(dashboard.port);
while (late.firstListMs === undefined) await new Promise((r) => setTimeout(r, 5));
late.close();

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
console.log(`${count} Certificates applied and Ready in ${(issuedMs / 1000).toFixed(2)} s with one dashboard page open`);
console.log(`the page received ${mb(watching.bytes)} in ${watching.messages} messages; whole lists at the same moments: ${mb(watching.wholeListBytes)} (${(watching.wholeListBytes / watching.bytes).toFixed(1)}× as much)`);
console.log(`a page opened with ${count + 1} Certificates Ready had its first list after ${late.firstListMs.toFixed(0)} ms (${mb(late.bytes)})`);
await dashboard.close();
await stack.stop();
rmSync(dir, { recursive: true, force: true });
