// The product build (`npm run build`; `npm ci` runs it as `prepare`): bundles src/cli/main.ts
// and everything it imports into dist/, which bin/certsmith.mjs runs. Four esbuild builds:
// cli-shared.js (what every part must hold one copy of), main.js (the entry: the program and
// commander), the commands a person waits on as one file each (`standalone`), and the other
// commands with esbuild's code splitting, one file per lazily loaded part.
//
// Why a bundle and not tsc's file-per-module output: a command line is short-lived, and Node
// resolves, reads and links each ES module on its own; `certsmith status` loaded 44 of them,
// 26 only for itself, which cost it more than the work it does. A dynamic import() in the
// sources of a split command (the ACME client, the server) stays a chunk loaded when needed.
//
// Packages stay in node_modules (native addons, SDKs that find files beside themselves), except
// commander, which every command loads. Type checking is `npm run lint` (tsc --noEmit): esbuild
// only strips types, as tsx does for the tests.
import { build } from 'esbuild';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
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

/**
 * Node's built-in modules through process.getBuiltinModule(), not import: importing one as an
 * ES module makes Node build a facade that reads every export once, which runs lazy getters
 * require() leaves alone. node:http's load undici on Node 24 (about 80 ms for every command
 * that talks to a server, and for the server's start); node:fs's and node:util's cost a few ms
 * on every line.
 */
const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^[\w:/]+$/ }, (args) => (
      args.kind === 'import-statement' && isBuiltin(args.path) ? { path: args.path, namespace: 'builtin' } : undefined));
    // an ES module whose exports are each a pure call of their own: esbuild keeps those some
    // module imports and reads no other (as a CommonJS module, each importer would copy them
    // all, esbuild's __toESM); the names are those of the node that builds
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
      contents: [
        `const m = process.getBuiltinModule(${JSON.stringify(args.path)});`, 'export default m;',
        ...Object.keys(require(args.path)).filter((name) => /^[A-Za-z_$][\w$]*$/.test(name) && name !== 'default')
          .map((name) => `export const ${name} = /* @__PURE__ */ (() => m.${name})();`),
      ].join('\n'),
      loader: 'js',
    }));
  },
};

// `--outdir DIR`: the test command (scripts/test.mjs) builds the tree as it is into .test-dist/,
// which the tests' certsmith runs, leaving dist/ as npm ci or the user's last build made it
const outdirArg = process.argv.indexOf('--outdir');
const outdir = outdirArg > 0 ? resolve(process.argv[outdirArg + 1]) : join(root, 'dist');
const outPrefix = `${relative(root, outdir)}/`;
/**
 * Command modules built as one file each, everything they import inside it (esbuild without
 * splitting), for the commands a person types at a terminal and waits on. Split, a command
 * loads a chunk for every different set of commands its modules are shared with: `certsmith
 * status` loaded 28 files of dist/, each resolved, read, compiled and linked on its own, which
 * cost it more than its two round trips; now main.js, cli-shared.js and status.js. A module they load with import() is inlined
 * too (still run only when imported), so a command listed here must import no package, only
 * node: built-ins, or that package would load with every run of it: the build checks this.
 */
const standalone = ['get', 'status', 'delete', 'renew', 'approve'];
/**
 * What main.js and every command must share, not each hold a copy of: main.ts tells a CliError
 * or a StoreError a command throws by its class. One file built apart, which the other builds
 * import in place of these modules. It holds the modules those import too, so that no other
 * file has a second copy of one: a class of theirs is told by instanceof as well (a second
 * GoLiteral printed kube's `[]string{"v2"}` as "object" in the server's 422s). The build checks it.
 */
const shared = {
  name: 'cli-shared',
  modules: ['src/cli/cli-error.ts', 'src/store/store.ts', 'src/api/validation/field-errors.ts', 'src/api/duration.ts'],
};

const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // a bundled CommonJS package (commander) calls require(): ES modules have none of their own
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * The program table (program.ts) loads each command module with import(): in main.js that is an
 * import of the command's own file, `NAME.js`, which a later build makes. main.js is then one
 * file, and with cli-shared.js all that `certsmith --help` loads.
 */
const commandModules = new Set();
const commandsByImport = {
  name: 'commands-by-import',
  setup(b) {
    const program = join(root, 'src', 'cli', 'program.ts');
    b.onResolve({ filter: /^\.\/[\w-]+\.ts$/ }, (args) => {
      if (args.importer !== program || args.kind !== 'dynamic-import') return undefined;
      const name = args.path.slice(2, -3);
      commandModules.add(name);
      return { path: `./${name}.js`, external: true };
    });
  },
};

const sharedEntry = {
  name: 'shared-entry',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^${shared.name}$`) }, () => ({ path: shared.name, namespace: shared.name }));
    b.onLoad({ filter: /.*/, namespace: shared.name }, () => ({
      contents: shared.modules.map((m) => `export * from './${m}';`).join('\n'), resolveDir: root, loader: 'js',
    }));
  },
};

/** Everywhere else, the shared modules are that file (see `shared`). */
const sharedByImport = {
  name: 'shared-by-import',
  setup(b) {
    const modules = new Set(shared.modules.map((m) => join(root, m)));
    b.onResolve({ filter: /\.ts$/ }, (args) => (
      modules.has(join(args.resolveDir, args.path)) ? { path: `./${shared.name}.js`, external: true } : undefined));
  },
};

rmSync(outdir, { recursive: true, force: true });
const sharedBuild = await build({
  ...common,
  entryPoints: { [shared.name]: shared.name },
  plugins: [sharedEntry, builtinsByRequire],
});
const main = await build({
  ...common,
  entryPoints: { main: 'src/cli/main.ts' },
  plugins: [lazyChildProcessForCommander, commandsByImport, sharedByImport, builtinsByRequire],
});
// the other commands, split: what they share (the controllers, the server, the ACME client) is
// a chunk of its own, and what a command loads with import() is one too
const split = await build({
  ...common,
  entryPoints: Object.fromEntries([...commandModules].filter((name) => !standalone.includes(name)).map((name) => [name, `src/cli/${name}.ts`])),
  splitting: true,
  // chunks named after the module that starts them (`server-…`, `doctor-…`), in one folder
  chunkNames: '[name]-[hash]',
  plugins: [sharedByImport, builtinsByRequire],
});
const single = await build({
  ...common,
  entryPoints: Object.fromEntries(standalone.map((name) => [name, `src/cli/${name}.ts`])),
  splitting: false,
  plugins: [sharedByImport, builtinsByRequire],
});
const sharedSources = new Set(Object.values(sharedBuild.metafile.outputs).flatMap((out) => Object.keys(out.inputs)).filter((input) => input.startsWith('src/')));
for (const [file, out] of [main, split, single].flatMap((r) => Object.entries(r.metafile.outputs))) {
  const copies = Object.keys(out.inputs).filter((input) => sharedSources.has(input));
  if (copies.length) throw new Error(`${file} holds its own copy of ${copies.join(', ')}, which ${shared.name}.js holds: add it to shared.modules`);
}
for (const [file, out] of [...Object.entries(split.metafile.outputs), ...Object.entries(single.metafile.outputs)]) {
  // main.ts tells commander's errors by their class, as with `shared`
  if (Object.keys(out.inputs).some((input) => input.startsWith('node_modules/commander/'))) throw new Error(`${file} holds a copy of commander: a command imports its types only`);
  if (!single.metafile.outputs[file]) continue;
  const packages = out.imports.filter((i) => i.external && i.kind === 'import-statement' && !i.path.startsWith('node:') && i.path !== `./${shared.name}.js`);
  if (packages.length) throw new Error(`${file} would load ${packages.map((i) => i.path).join(', ')} with every run: import it where it is used, or leave the command out of \`standalone\``);
}
// which sources each file of dist/ holds: test/e2e/compiled.test.ts checks from it that a
// command loads only what it needs
const chunks = Object.fromEntries([sharedBuild, main, split, single].flatMap((r) => Object.entries(r.metafile.outputs)).map(([file, out]) => [
  file.startsWith(outPrefix) ? file.slice(outPrefix.length) : file, Object.keys(out.inputs).sort(),
]));
writeFileSync(join(outdir, 'chunks.json'), `${JSON.stringify(chunks, null, 1)}\n`);
