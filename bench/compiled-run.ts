// Benchmarks that hold the server in their own process (to count issuances, read its caches,
// force collections) run its code as the product does: bundled by esbuild, as dist/ is, and
// run by node with the flags bin/certsmith.mjs runs it with. Under tsx the same process also holds tsx's loader thread and its caches
// of transpiled sources and source maps (about 40 MB of RSS before any Certificate exists) and
// transpiles each module a controller first imports in the middle of a measurement.
// A benchmark calls runCompiled(import.meta.url) first: run through tsx, it bundles itself into
// bench/.compiled/, runs that with the same arguments and exits with its status; run compiled,
// it returns and the benchmark goes on.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const COMPILED = 'CERTSMITH_BENCH_COMPILED';

/** node's flags in bin/certsmith.mjs's exec line: the product runs with them, so the benchmarks do */
function productNodeFlags(): string[] {
  const text = readFileSync(fileURLToPath(new URL('../bin/certsmith.mjs', import.meta.url)), 'utf8');
  return (/^":" \/\/; exec node (.*) "\$0" "\$@"$/m.exec(text)?.[1] ?? '').split(' ').filter(Boolean);
}

/** node's own flags (--cpu-prof, --heapsnapshot-signal ...) pass on; tsx's loader flags do not */
function withoutTsx(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (/tsx/.test(args[i])) continue;
    if (['--import', '--require', '-r', '--loader'].includes(args[i]) && /tsx/.test(args[i + 1] ?? '')) {
      i++;
      continue;
    }
    out.push(args[i]);
  }
  return out;
}

export async function runCompiled(entryUrl: string): Promise<void> {
  if (process.env[COMPILED]) return;
  const entry = fileURLToPath(entryUrl);
  const outdir = join(dirname(entry), '.compiled');
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, basename(entry).replace(/\.ts$/, '.mjs'));
  const { build } = await import('esbuild');
  // packages stay in node_modules (better-sqlite3 is a native addon), as in dist/
  await build({
    entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
    sourcemap: 'linked', logLevel: 'warning',
    // bundled CommonJS (none of certsmith's own code) may still call require
    banner: { js: "import { createRequire as __certsmithRequire } from 'node:module'; const require = __certsmithRequire(import.meta.url);" },
  });
  const r = spawnSync(process.execPath, [...productNodeFlags(), ...withoutTsx(process.execArgv), outfile, ...process.argv.slice(2)], {
    stdio: 'inherit', env: { ...process.env, [COMPILED]: '1' },
  });
  process.exit(r.status ?? 1);
}
