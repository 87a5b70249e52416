// Bench: how quickly the compiled certsmith answers a person at a terminal, against kubectl on
// the same server in the same run, and how soon `certsmith server` answers /readyz after start.
// Goals (issue 17): each certsmith command's median ≤ 1.5× `kubectl get certificates -A`'s;
// server start to answering ≤ 1.5 s.
// Run: npx tsx bench/cli.ts [runs per command, default 10] [--cli-node=PATH]
// It builds dist/ first (a second) and runs bin/certsmith.mjs, the command users run, with the
// node that runs this script, or with --cli-node's (another supported line, e.g. Node 24 from
// `npm install node@24`; the server stays on this one, whose native addon it was built for). It
// prints node's own floor (`node -e 0`) beside them, and, when NODE_EXTRA_CA_CERTS is set, a
// second set of figures without it (the first set is the verdict).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bin, buildDist, node, repo, startCompiledServer, timed } from './compiled-server.ts';

const args = process.argv.slice(2);
const runs = Number(args.find((a) => !a.startsWith('--')) ?? 10);
const cliNode = args.find((a) => a.startsWith('--cli-node='))?.slice('--cli-node='.length) ?? node;
/**
 * CPU time (user + system) of one run of a command, from bash's `times` (Node reports no
 * children's rusage): unlike wall time it hardly moves with the other load on the machine.
 */
function cpuMs(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): number {
  const r = spawnSync('bash', ['-c', '"$@" >/dev/null 2>&1 || exit 1; times', 'bash', cmd, ...args], { cwd: repo, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed`);
  const children = r.stdout.trim().split('\n')[1] ?? '';
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return (secs[0] + secs[1]) * 1000;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

buildDist();

const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-bench-cli-'));
const kubeconfig = join(dataDir, 'kubeconfig');
try {
  // first start: creates the serving CA, its key and the token
  let server = await startCompiledServer(dataDir);
  const firstMs = server.readyMs;
  console.log(`first start (new data dir): /readyz after ${server.readyMs.toFixed(0)} ms (listening line after ${server.listeningMs.toFixed(0)} ms)`);

  const cs = (...args: string[]) => timed(node, [bin, '--kubeconfig', kubeconfig, ...args]);
  cs('apply', '-f', join(repo, 'examples'));
  const until = performance.now() + 60_000;
  for (;;) {
    const items = JSON.parse(cs('get', 'certificates', '-A', '-o', 'json').stdout).items as { status?: { conditions?: { type: string; status: string }[] } }[];
    if (items.length && items.every((c) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))) {
      console.log(`${items.length} example Certificates Ready`);
      break;
    }
    if (performance.now() > until) throw new Error('the example Certificates did not become Ready in 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }

  // a restart with state stored: what a host reboot or `systemctl restart` sees
  await server.stop();
  server = await startCompiledServer(dataDir);
  console.log(`restart (stored state): /readyz after ${server.readyMs.toFixed(0)} ms (listening line after ${server.listeningMs.toFixed(0)} ms)`);

  const commands: Array<{ label: string; cmd: string; args: string[]; env?: NodeJS.ProcessEnv }> = [
    { label: 'kubectl get certificates -A', cmd: 'kubectl', args: ['get', 'certificates', '-A'], env: { KUBECONFIG: kubeconfig } },
    { label: 'certsmith get certificates -A', cmd: cliNode, args: [bin, '--kubeconfig', kubeconfig, 'get', 'certificates', '-A'] },
    { label: 'certsmith status certificate web-rsa', cmd: cliNode, args: [bin, '--kubeconfig', kubeconfig, 'status', 'certificate', 'web-rsa'] },
    { label: 'certsmith --help', cmd: cliNode, args: [bin, '--help'] },
    // what no Node program can go below on this machine: start-up and exit of an empty one
    { label: "node's floor: node -e 0", cmd: cliNode, args: ['-e', '0'] },
  ];
  if (cliNode !== node) console.log(`the CLI runs on ${timed(cliNode, ['--version']).stdout.trim()} (${cliNode}); the server on ${process.version}`);
  /** Times every command, `runs` times each, with `env` added to all of them; prints the medians against kubectl's. */
  const measure = (env: NodeJS.ProcessEnv) => {
    const withEnv = (c: (typeof commands)[number]) => ({ ...c.env, ...env });
    // one unmeasured run each (kubectl's discovery cache, Node's compile cache on 22.1+), then
    // the commands in turn, so that a busy moment on the machine falls on all of them alike
    for (const c of commands) timed(c.cmd, c.args, withEnv(c));
    const times = commands.map(() => [] as number[]);
    for (let i = 0; i < runs; i++) commands.forEach((c, j) => times[j].push(timed(c.cmd, c.args, withEnv(c)).ms));
    const cpu = commands.map(() => [] as number[]);
    for (let i = 0; i < runs; i++) commands.forEach((c, j) => cpu[j].push(cpuMs(c.cmd, c.args, withEnv(c))));
    const medians = times.map(median);
    const cpuMedians = cpu.map(median);
    const kubectl = medians[0];
    console.log(`  medians of ${runs} runs (load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs):    wall        CPU (user+sys)`);
    commands.forEach((c, j) => {
      const goal = c.cmd === cliNode && c.args[0] === bin;
      const ratio = j === 0 ? '' : `  ${(medians[j] / kubectl).toFixed(2)}× kubectl${goal ? ` (goal ≤ 1.5×: ${medians[j] <= 1.5 * kubectl ? 'met' : 'not met'})` : ''}`;
      const cpuRatio = j === 0 ? '' : ` ${(cpuMedians[j] / cpuMedians[0]).toFixed(2)}×`;
      console.log(`  ${c.label.padEnd(38)} ${medians[j].toFixed(0).padStart(5)} ms ${cpuMedians[j].toFixed(0).padStart(5)} ms${cpuRatio.padEnd(7)}${ratio}`);
    });
  };
  // Node 20 parses the NODE_EXTRA_CA_CERTS bundle, and its own bundled roots, at every start
  // (about 80 ms here); Node 24 only when a TLS connection first needs them; kubectl does not.
  // The verdict is what this machine's users see, with it.
  const extraCAs = process.env.NODE_EXTRA_CA_CERTS;
  console.log(extraCAs ? `with NODE_EXTRA_CA_CERTS=${extraCAs} (this machine's environment; the verdict):` : 'NODE_EXTRA_CA_CERTS unset:');
  measure({});
  if (extraCAs) {
    console.log('without NODE_EXTRA_CA_CERTS (what a machine without it sees; for comparison only):');
    measure({ NODE_EXTRA_CA_CERTS: undefined });
  }
  const met = (ms: number) => (ms <= 1500 ? 'met' : 'not met');
  console.log(`server start to answering /readyz (goal ≤ 1.5 s): first start ${firstMs.toFixed(0)} ms (${met(firstMs)}), restart ${server.readyMs.toFixed(0)} ms (${met(server.readyMs)})`);
  await server.stop();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
