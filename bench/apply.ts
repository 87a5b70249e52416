// Bench: `certsmith apply -f` of one manifest file of many objects against `kubectl apply -f` of
// the same file on the same compiled server in the same run (issue 17). Goals: certsmith applies
// at least 1,000 objects/s and is never slower than kubectl.
// The file: a CA Issuer and COUNT ECDSA Certificates from it, no namespace in the documents; each
// tool applies it with -n into a Namespace of its own (created first), so both do the same work.
// kubectl goes first. Each apply starts on a server with nothing left to do (every Certificate
// of the run before it Ready) and shares it with the issuance of its own Certificates: the server
// runs its controllers, as users run it, and gives a busy client most of its time (the
// controllers' share shrinks while requests keep coming), so a backlog of kubectl's issuances
// would have slowed only the certsmith run.
// Run: npx tsx bench/apply.ts [count=10000]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { bin, buildDist, node, startCompiledServer, timed } from './compiled-server.ts';

const count = Number(process.argv[2] ?? 10_000);
if (!Number.isInteger(count) || count < 1) throw new Error(`count: "${process.argv[2]}" is not a whole number of 1 or more`);
function manifest(n: number): string {
  const docs = [
    'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSigned: {}\n',
    'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: bench-ca\nspec:\n  isCA: true\n  commonName: bench CA\n  secretName: bench-ca\n'
      + '  privateKey:\n    algorithm: ECDSA\n    size: 256\n  issuerRef:\n    name: selfsigned\n    kind: Issuer\n',
    'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: bench-ca\nspec:\n  ca:\n    secretName: bench-ca\n',
  ];
  for (let i = 0; i < n; i++) {
    docs.push(`apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: c${i}\n  labels:\n    bench: apply\nspec:\n  secretName: c${i}-tls\n`
      + `  dnsNames:\n  - c${i}.bench.example.test\n  privateKey:\n    algorithm: ECDSA\n    size: 256\n  issuerRef:\n    name: bench-ca\n    kind: Issuer\n`);
  }
  return docs.join('---\n');
}

const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-bench-apply-'));
const kubeconfig = join(dataDir, 'kubeconfig');
const file = join(dataDir, 'objects.yaml');
const objects = count + 3;
writeFileSync(file, manifest(count));

buildDist();
const server = await startCompiledServer(dataDir, 20).catch((e) => {
  rmSync(dataDir, { recursive: true, force: true });
  throw e;
});
/** Waits until every Certificate in the namespace is Ready (the server has nothing left to do for it); prints how long that took. */
async function allReady(namespace: string): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const table = timed(node, [bin, '--kubeconfig', kubeconfig, 'get', 'certificates', '-n', namespace]).stdout;
    const ready = table.split('\n').filter((l) => /^\S+\s+True\s/.test(l)).length;
    if (ready >= count + 1) break;
    if (performance.now() - t0 > 600_000) throw new Error(`${namespace}: ${ready} of ${count + 1} Certificates Ready after 10 minutes`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  console.log(`  (${namespace}: all ${count + 1} Certificates Ready ${((performance.now() - t0) / 1000).toFixed(1)} s after its apply ended)`);
}

try {
  for (const ns of ['apply-kubectl', 'apply-certsmith']) {
    timed('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', ns]);
  }
  const kubectl = timed('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-n', 'apply-kubectl', '-f', file]);
  const kubectlApplied = kubectl.stdout.split('\n').filter((l) => / created$/.test(l)).length;
  await allReady('apply-kubectl');
  const certsmith = timed(node, [bin, '--kubeconfig', kubeconfig, 'apply', '-n', 'apply-certsmith', '-f', file]);
  const certsmithApplied = certsmith.stdout.split('\n').filter((l) => / created$/.test(l)).length;
  if (kubectlApplied !== objects || certsmithApplied !== objects) throw new Error(`created: kubectl ${kubectlApplied}, certsmith ${certsmithApplied}, of ${objects}`);

  const rate = (ms: number) => objects / (ms / 1000);
  console.log(`apply -f of ${objects} objects (${count} ECDSA Certificates, a CA and two Issuers), load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} CPUs:`);
  console.log(`  kubectl apply    ${(kubectl.ms / 1000).toFixed(1).padStart(6)} s  ${rate(kubectl.ms).toFixed(0).padStart(6)} objects/s`);
  console.log(`  certsmith apply  ${(certsmith.ms / 1000).toFixed(1).padStart(6)} s  ${rate(certsmith.ms).toFixed(0).padStart(6)} objects/s`
    + `  (goal ≥ 1,000 objects/s: ${rate(certsmith.ms) >= 1000 ? 'met' : 'not met'}; not slower than kubectl: ${certsmith.ms <= kubectl.ms ? 'met' : 'not met'}, ${(kubectl.ms / certsmith.ms).toFixed(2)}× its speed)`);
  // a second apply of the same file changes nothing: every object is compared and left alone
  await allReady('apply-certsmith');
  const again = timed(node, [bin, '--kubeconfig', kubeconfig, 'apply', '-n', 'apply-certsmith', '-f', file]);
  const unchanged = again.stdout.split('\n').filter((l) => / unchanged$/.test(l)).length;
  console.log(`  certsmith apply again (all unchanged: ${unchanged}/${objects}) ${(again.ms / 1000).toFixed(1)} s, ${rate(again.ms).toFixed(0)} objects/s`);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
