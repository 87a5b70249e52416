// The product build (`npm run build`; `npm ci` runs it as `prepare`): bundles src/cli/main.ts
// and everything it imports into dist/, one file per lazily loaded part (esbuild's code
// splitting), which bin/certsmith.mjs runs.
//
// Why a bundle and not tsc's file-per-module output: a command line is short-lived, and Node
// resolves, reads and links each ES module on its own; `certsmith status` loaded 44 of them,
// 26 only for itself, which cost it more than the work it does. A dynamic import() in the
// sources (a command, the ACME client, the server) stays a chunk loaded when it is needed.
//
// Packages stay in node_modules (native addons, SDKs that find files beside themselves), except
// commander, which every command loads. Type checking is `npm run lint` (tsc --noEmit): esbuild
// only strips types, as tsx does for the tests.
import { build } from 'esbuild';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const bundled = new Set(['commander']);
const external = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })
  .filter((name) => !bundled.has(name))
  .flatMap((name) => [name, `${name}/*`]);

/**
 * commander requires node:child_process at load, for executable subcommands certsmith has none
 * of; loading it (with its dgram and pipe bindings) cost every command line several ms. It is
 * given a stand-in that loads the real module on first use.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) => (
      args.importer.includes(join('node_modules', 'commander')) ? { path: 'child_process', namespace: 'lazy' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, name) => require('node:child_process')[name] });",
      loader: 'js',
    }));
  },
};

const outdir = join(root, 'dist');
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // chunks named after the module that starts them (`server-…`, `status-…`), in one folder
  chunkNames: '[name]-[hash]',
  // a bundled CommonJS package (commander) calls require(): ES modules have none of their own
  banner: { js: "import { createRequire as __certsmithRequire } from 'node:module'; const require = __certsmithRequire(import.meta.url);" },
  plugins: [lazyChildProcessForCommander],
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});
// which sources each file of dist/ holds: test/e2e/compiled.test.ts checks from it that a
// command loads only what it needs
const chunks = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, out]) => [
  file.replace(/^dist\//, ''), Object.keys(out.inputs).sort(),
]));
writeFileSync(join(outdir, 'chunks.json'), `${JSON.stringify(chunks, null, 1)}\n`);
