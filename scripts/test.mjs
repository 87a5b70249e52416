// The test command (`npm test` runs it after test/provision.sh): every *.test.ts under the
// paths given (default: src and test) through Node's test runner, two files at a time.
// `node scripts/test.mjs src/server test/e2e/cli.test.ts` runs those only.
//
// Why the tests are bundled first: run through tsx, each test file's process resolves and
// compiles its whole import graph through loader hooks that Node 20 runs on a separate thread,
// which cost more CPU than most unit tests themselves (the files controller's test: 7.2
// CPU-seconds through tsx, 4.7 bundled; the composition's: 3.6 and 1.2) and made the suite
// CPU-bound on CI's two cores. esbuild bundles each test file with what it imports (packages
// stay in node_modules) into .test-build/, a folder the tests read nothing from: `import.meta.url`,
// `dirname` and `filename` are replaced in every source file by the values of that file in
// the tree, so fixtures, the dashboard's assets and the scripts tests spawn (still through
// tsx) are found where they are. Source maps bring failures back to the .ts lines.
//
// The certsmith the tests spawn is the tree built as the product is (scripts/build.mjs into
// .test-dist/; see test/rig/certsmith-source.mjs), not the sources through tsx.
import { build } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import console from 'node:console';
import process from 'node:process';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.test-build');
const productOut = join(root, '.test-dist');

/** the *.test.ts files under a directory, or the file itself */
function testFiles(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((e) => {
    const p = join(path, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** import.meta's path properties as the values they have for the file in the tree */
const importMetaOfSource = {
  name: 'import-meta-of-source',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta')) return undefined;
      return {
        contents: source
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
          .replaceAll('import.meta.filename', JSON.stringify(args.path)),
        loader: args.path.endsWith('ts') ? 'ts' : 'js',
      };
    });
  },
};

const args = process.argv.slice(2);
// paths as given, from where the command runs; none: the whole suite
const files = (args.length ? args.map((p) => resolve(p)) : [join(root, 'src'), join(root, 'test')]).flatMap(testFiles).sort();
if (files.length === 0) {
  console.error(`no *.test.ts files under ${args.join(' ')}`);
  process.exit(1);
}
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: files,
  outdir: out,
  outbase: root,
  bundle: true,
  // one copy of what several test files import, each process loading only the chunks it needs
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [importMetaOfSource],
});

// the certsmith the tests spawn (test/rig/certsmith-source.mjs): the tree built as the product is
const product = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--outdir', productOut], { cwd: root, stdio: 'inherit' });
if (product.status !== 0) process.exit(product.status ?? 1);

const bundles = files.map((f) => join(out, relative(root, f)).replace(/\.ts$/, '.js'));
const child = spawn(process.execPath, [
  '--enable-source-maps', '--test', '--test-concurrency=2', '--test-timeout=300000', ...bundles,
], { cwd: root, stdio: 'inherit', env: { ...process.env, CERTSMITH_TEST_BUILD: join(productOut, 'main.js') } });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
