// ACME issuance benchmark on loopback: 20 single-name certificates from Pebble (PEBBLE_VA_NOSLEEP=1)
// with certsmith, certbot and lego in the same run, then 100 at once with certsmith; then DNS-01:
// certsmith and lego with the same lego-`exec` script writing the TXT record into the same
// pebble-challtestsrv (certsmith through --dns01-exec), one after another.
// Run: npx tsx bench/acme.ts [count]   (needs Debian's certbot and lego: apt-get install certbot lego)
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { realClock } from '../src/runtime/clock.ts';
import { ClusterIssuer } from '../src/api/resources.ts';
import { freePort, startChallTestSrv, startPebble } from '../test/rig/index.ts';
import { makeTempDir, removeTempDir } from '../test/rig/processes.ts';
import { startLifecycle } from '../test/lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitForReadyCertificate } from '../test/acme/acme-rig.ts';
import { spawn } from 'node:child_process';

const COUNT = Number(process.argv[2] ?? 20);
const CONCURRENT = 100;
const run = crypto.randomBytes(3).toString('hex');

interface Result { name: string; ms: number[]; requests: number[] }

function run_(program: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program} exited ${code}: ${err.slice(-800)}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (r: Result) => {
  const s = [...r.ms].sort((a, b) => a - b);
  return `${r.name.padEnd(10)} ms/cert min ${s[0].toFixed(0).padStart(5)}  median ${median(s).toFixed(0).padStart(5)}  max ${s.at(-1)!.toFixed(0).padStart(5)}   requests/cert median ${median(r.requests)} (min ${Math.min(...r.requests)}, max ${Math.max(...r.requests)})`;
};

async function main(): Promise<void> {
  const cts = await startChallTestSrv();
  const httpPort = await freePort();
  const pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort });
  const dir = await makeTempDir('bench-acme');
  const caFile = path.join(dir, 'ca.pem');
  await fsp.writeFile(caFile, pebble.caPem);
  const results: Result[] = [];
  const dnsResults: Result[] = [];
  try {
    // certsmith: one controller set, the account registered before timing starts.
    const lc = await startLifecycle({ clock: realClock, options: { acmeHTTP01Listen: `127.0.0.1:${httpPort}`, acmeHTTP01SelfCheckPort: httpPort, acmeHTTP01SolverNameservers: [cts.dnsServer] } });
    try {
      await lc.apply({
        apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
        spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'acct' }, solvers: [{ http01: { ingress: {} } }] } },
      });
      for (let i = 0; !ready((await lc.store.get(ClusterIssuer, undefined, 'pebble')) as never); i++) {
        if (i > 2000) throw new Error('issuer not Ready');
        await new Promise((r) => setTimeout(r, 5));
      }
      await lc.apply(acmeCertificate('warmup', [`warm-${run}.example.test`]));
      await waitForReadyCertificate(lc, 'warmup');
      const r: Result = { name: 'certsmith', ms: [], requests: [] };
      for (let i = 0; i < COUNT; i++) {
        const before = pebble.requestCount();
        const t0 = performance.now();
        await lc.apply(acmeCertificate(`seq-${i}`, [`cs-${run}-${i}.example.test`]));
        await waitForReadyCertificate(lc, `seq-${i}`);
        r.ms.push(performance.now() - t0);
        r.requests.push(pebble.requestCount() - before);
      }
      results.push(r);
      const before = pebble.requestCount();
      const t0 = performance.now();
      await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => lc.apply(acmeCertificate(`par-${i}`, [`par-${run}-${i}.example.test`]))));
      const done = await Promise.all(Array.from({ length: CONCURRENT }, async (_, i) => {
        await waitForReadyCertificate(lc, `par-${i}`, 300_000);
        return performance.now() - t0;
      }));
      const total = performance.now() - t0;
      console.log(`certsmith ${CONCURRENT} concurrent: all Ready after ${(total / 1000).toFixed(2)} s (${(CONCURRENT / (total / 1000)).toFixed(1)} certs/s), first ${done.sort((a, b) => a - b)[0].toFixed(0)} ms, median ${median(done).toFixed(0)} ms; ${((pebble.requestCount() - before) / CONCURRENT).toFixed(2)} requests/cert`);
    } finally {
      await lc.stop();
    }

    // certbot: standalone HTTP-01 on the port Pebble validates against; a new process per certificate.
    const cb = ['--server', pebble.directoryUrl, '--config-dir', path.join(dir, 'cb/config'), '--work-dir', path.join(dir, 'cb/work'), '--logs-dir', path.join(dir, 'cb/logs'), '--non-interactive'];
    const cbEnv = { REQUESTS_CA_BUNDLE: caFile };
    await run_('certbot', ['register', '--agree-tos', '--register-unsafely-without-email', ...cb], cbEnv);
    const cbr: Result = { name: 'certbot', ms: [], requests: [] };
    for (let i = 0; i < COUNT; i++) {
      const before = pebble.requestCount();
      const t0 = performance.now();
      await run_('certbot', ['certonly', '--standalone', '--http-01-port', String(httpPort), '--http-01-address', '127.0.0.1', '--agree-tos', '--register-unsafely-without-email', ...cb, '-d', `cb-${run}-${i}.example.test`], cbEnv);
      cbr.ms.push(performance.now() - t0);
      cbr.requests.push(pebble.requestCount() - before);
    }
    results.push(cbr);

    // lego: the first run registers the account (untimed), then a new process per certificate.
    const lg = (name: string) => ['--server', pebble.directoryUrl, '--accept-tos', '--email', 'ci@example.test', '--http', '--http.port', `127.0.0.1:${httpPort}`, '--path', path.join(dir, 'lego'), '-d', name, 'run'];
    const lgEnv = { LEGO_CA_CERTIFICATES: caFile };
    await run_('lego', lg(`lg-${run}-warm.example.test`), lgEnv);
    const lgr: Result = { name: 'lego', ms: [], requests: [] };
    for (let i = 0; i < COUNT; i++) {
      const before = pebble.requestCount();
      const t0 = performance.now();
      await run_('lego', lg(`lg-${run}-${i}.example.test`), lgEnv);
      lgr.ms.push(performance.now() - t0);
      lgr.requests.push(pebble.requestCount() - before);
    }
    results.push(lgr);

    // DNS-01: one lego-exec script ("SCRIPT present|cleanup FQDN VALUE") for both, writing into challtestsrv.
    // Both check the record at the recursive resolver only (certsmith: --dns01-recursive-nameservers-only;
    // lego: --dns.disable-cp), since challtestsrv answers no SOA or NS queries.
    const script = path.join(dir, 'challtestsrv-exec.sh');
    await fsp.writeFile(script, `#!/bin/sh
case "$1" in
  present) curl -sf -X POST -d "{\\"host\\":\\"$2\\",\\"value\\":\\"$3\\"}" ${cts.managementUrl}/set-txt ;;
  cleanup) curl -sf -X POST -d "{\\"host\\":\\"$2\\"}" ${cts.managementUrl}/clear-txt ;;
esac
`, { mode: 0o755 });
    const dns = await startLifecycle({ clock: realClock, options: { dns01Exec: script, dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true } });
    try {
      await dns.apply({
        apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
        spec: { acme: { server: pebble.directoryUrl, caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'acct-dns' }, solvers: [{ dns01: { webhook: { groupName: 'certsmith.io', solverName: 'exec' } } }] } },
      });
      await dns.apply(acmeCertificate('dns-warmup', [`dns-warm-${run}.example.test`]));
      await waitForReadyCertificate(dns, 'dns-warmup', 60_000);
      const r: Result = { name: 'certsmith', ms: [], requests: [] };
      for (let i = 0; i < COUNT; i++) {
        const before = pebble.requestCount();
        const t0 = performance.now();
        await dns.apply(acmeCertificate(`dns-${i}`, [`csd-${run}-${i}.example.test`]));
        await waitForReadyCertificate(dns, `dns-${i}`, 60_000);
        r.ms.push(performance.now() - t0);
        r.requests.push(pebble.requestCount() - before);
      }
      dnsResults.push(r);
    } finally {
      await dns.stop();
    }
    const lgd = (name: string) => ['--server', pebble.directoryUrl, '--accept-tos', '--email', 'ci@example.test', '--dns', 'exec', '--dns.resolvers', cts.dnsServer, '--dns.disable-cp', '--path', path.join(dir, 'lego-dns'), '-d', name, 'run'];
    const lgdEnv = { ...lgEnv, EXEC_PATH: script, EXEC_POLLING_INTERVAL: '1', EXEC_PROPAGATION_TIMEOUT: '60' };
    await run_('lego', lgd(`lgd-${run}-warm.example.test`), lgdEnv);
    const lgdr: Result = { name: 'lego', ms: [], requests: [] };
    for (let i = 0; i < COUNT; i++) {
      const before = pebble.requestCount();
      const t0 = performance.now();
      await run_('lego', lgd(`lgd-${run}-${i}.example.test`), lgdEnv);
      lgdr.ms.push(performance.now() - t0);
      lgdr.requests.push(pebble.requestCount() - before);
    }
    dnsResults.push(lgdr);
  } finally {
    await Promise.all([pebble.stop(), cts.stop()]);
    await removeTempDir(dir);
  }
  const report = (title: string, rs: Result[]) => {
    console.log(`\n${COUNT} single-name certificates one after another, ${title}, Pebble PEBBLE_VA_NOSLEEP=1 (account registered beforehand):`);
    for (const r of rs) console.log(fmt(r));
    const ours = rs[0];
    for (const peer of rs.slice(1)) {
      console.log(`certsmith/${peer.name}: median time ${(median(ours.ms) / median(peer.ms)).toFixed(3)}, requests ${(median(ours.requests) / median(peer.requests)).toFixed(2)}`);
    }
  };
  report('HTTP-01', results);
  report('DNS-01 (the same lego exec script for both)', dnsResults);
}

await main();
