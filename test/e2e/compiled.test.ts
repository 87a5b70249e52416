// The command users run, bin/certsmith.mjs, runs the bundled build in dist/ (every other test
// runs the sources through tsx): the build compiles, its server issues and serves, its CLI
// talks to it, and `--help` loads none of the heavy modules the commands load on demand.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { compiledBin, isReady, repoRoot, run, startServer, waitFor, type RunningServer } from './harness.ts';

let server: RunningServer | undefined;

before(async () => {
  // a second or so: a run after an edit tests the edit, not an older build
  const build = await run(process.execPath, [join(repoRoot, 'scripts', 'build.mjs')], { timeoutMs: 240_000 });
  assert.equal(build.code, 0, `npm run build:\n${build.stdout}${build.stderr}`);
});

after(async () => {
  if (!server) return;
  const code = await server.stop();
  server.cleanup();
  assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
});

test('bin/certsmith.mjs runs dist/, never tsx', () => {
  const bin = readFileSync(compiledBin, 'utf8');
  assert.match(bin, /\.\.\/dist\/main\.js/);
  assert.doesNotMatch(bin, /^\s*import\b.*['"]tsx/m);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(pkg.bin.certsmith, 'bin/certsmith.mjs');
  assert.ok(!pkg.dependencies.tsx, 'tsx is a development dependency');
  assert.ok(pkg.files.includes('dist/'), 'the package carries the build');
});

// Reports every module file a process loads: ES modules through a resolve hook, CommonJS ones through NODE_DEBUG.
// Node 22.15+/24 run register()'s hooks on a thread of their own whose writes can be lost when a
// short command exits; registerHooks() runs them in the main thread, so use it where it exists.
const traceHook = 'export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.startsWith("file:")) process.stderr.write("ESM " + r.url + "\\n"); return r; }';
const traceInThread = "m.registerHooks({ resolve(s, c, next) { const r = next(s, c); if (r.url.startsWith('file:')) process.stderr.write('ESM ' + r.url + '\\n'); return r; } })";
const traceImport = 'data:text/javascript,' + encodeURIComponent(`import m from 'node:module'; if (m.registerHooks) ${traceInThread}; else m.register(${JSON.stringify('data:text/javascript,' + encodeURIComponent(traceHook))});`);

/** Every module file in a trace, as loaded: a file of dist/ is one file, whatever it holds. */
function filesIn(stderr: string): string[] {
  const files = new Set<string>();
  for (const line of stderr.split('\n')) {
    const esm = /^ESM (file:\S+)/.exec(line);
    if (esm) files.add(new URL(esm[1]).pathname);
    // MODULE 123: load "/work/…/node_modules/yaml/dist/index.js" for module "…"
    const cjs = /^MODULE \d+: load "([^"]+)"/.exec(line);
    if (cjs) files.add(cjs[1]);
  }
  return [...files];
}

const dist = join(repoRoot, 'dist') + sep;

function modulesIn(stderr: string): string[] {
  // a file of the bundle stands for the sources it holds (dist/chunks.json, written by the build)
  const chunks = JSON.parse(readFileSync(join(repoRoot, 'dist', 'chunks.json'), 'utf8')) as Record<string, string[]>;
  return filesIn(stderr).flatMap((m) => {
    const sources = m.startsWith(dist) ? chunks[m.slice(dist.length)] : undefined;
    return sources ? sources.map((source) => join(repoRoot, source)) : [m];
  });
}

/** Every module file a run of the compiled CLI loads: as sources (`modules`), and the files of dist/ (`distFiles`). */
async function modulesLoadedBy(args: string[]): Promise<{ code: number; stdout: string; modules: string[]; distFiles: string[] }> {
  const r = await run(process.execPath, ['--import', traceImport, compiledBin, ...args], { env: { NODE_DEBUG: 'module' } });
  const distFiles = filesIn(r.stderr).filter((f) => f.startsWith(dist)).map((f) => f.slice(dist.length)).sort();
  return { code: r.code, stdout: r.stdout, modules: modulesIn(r.stderr), distFiles };
}

// Loaded by the commands that need them, never at start: each costs tens of milliseconds or more.
const heavy = [
  /node_modules\/@peculiar\//, /node_modules\/reflect-metadata\//, /node_modules\/pino\//, /node_modules\/better-sqlite3\//,
  /node_modules\/@kubernetes\/client-node\//, /node_modules\/pkijs\//, /node_modules\/prom-client\//, /node_modules\/dns-packet\//,
  /node_modules\/yaml\//, /node_modules\/cron-parser\//, /node_modules\/tsx\//,
  /\/src\/acme\//, /\/src\/controllers\/acme\//, /\/src\/controllers\/manager\.ts$/, /\/src\/server\/api-server\.ts$/, /\/src\/store\/sqlite\//,
  ...lazyInServer(),
];

// Loaded by the server only on the request or challenge that needs them, never at its start:
// the AWS SDK (a Route 53 challenge), protobufjs (kubectl's protobuf bodies, /openapi/v2 in
// protobuf), dns-packet (an RFC 2136 challenge).
function lazyInServer(): RegExp[] {
  return [/node_modules\/@aws-sdk\//, /node_modules\/@smithy\//, /node_modules\/protobufjs\//, /node_modules\/dns-packet\//];
}

test('certsmith --help lists every command and loads neither the heavy modules nor the command modules', async () => {
  const r = await modulesLoadedBy(['--help']);
  assert.equal(r.code, 0);
  for (const cmd of ['server', 'controller', 'apply', 'get', 'delete', 'renew', 'approve', 'deny', 'status', 'acmesolver']) {
    assert.match(r.stdout, new RegExp(`^\\s+${cmd}\\b`, 'm'), `${cmd} in the help`);
  }
  assert.ok(r.modules.some((m) => m.endsWith('/src/cli/main.ts')), `the compiled CLI ran: ${r.modules.join(' ')}`);
  assert.ok(!r.modules.some((m) => m.includes('/node_modules/tsx/')), 'no tsx');
  const loaded = r.modules.filter((m) => heavy.some((h) => h.test(m)));
  assert.deepEqual(loaded, [], 'heavy modules loaded by --help');
  // main.js and what it shares with the commands, two files of dist/ (scripts/build.mjs)
  assert.deepEqual(r.distFiles, ['cli-shared.js', 'main.js']);
  // the help comes from the program's table of summaries: no command module is loaded for it
  // (version.ts reads package.json for --version, which the help lists)
  const cli = r.modules.filter((m) => m.includes('/src/cli/')).map((m) => m.replace(/.*\/src\/cli\//, '')).sort();
  assert.deepEqual(cli, ['cli-error.ts', 'main.ts', 'program.ts', 'version.ts']);
});

test('the compiled server issues the examples; the compiled CLI lists, shows and applies', async () => {
  server = await startServer({ bin: compiledBin, args: ['--apply', join(repoRoot, 'examples')] });
  const s = server;
  await waitFor('every example Certificate Ready', async () => {
    const r = await s.cli(['get', 'certificates', '-A', '-o', 'json']);
    if (r.code !== 0) return false;
    const items = JSON.parse(r.stdout).items as Parameters<typeof isReady>[0][];
    return items.length >= 5 && items.every(isReady);
  }, 60_000);

  const table = await s.cli(['get', 'certificates', '-A']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^NAMESPACE\s+NAME\s+READY\s+SECRET\s+AGE$/m);
  assert.match(table.stdout, /^default\s+web-rsa\s+True\s+web-rsa-tls\s+/m);

  const yaml = await s.cli(['get', 'certificate', 'web-rsa', '-o', 'yaml']);
  assert.equal(yaml.code, 0, yaml.stderr);
  assert.match(yaml.stdout, /^kind: Certificate$/m);

  const status = await s.cli(['status', 'certificate', 'web-rsa']);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /Ready: True/);
  assert.match(status.stdout, /Subject: CN=www\.example\.test/);
  assert.match(status.stdout, /Renewal Time: \S+ \(RenewBefore/);

  // Each file of dist/ costs a resolve, read, compile and link: the commands a person waits on
  // are one file each, beside what every command line loads (scripts/build.mjs, `standalone`).
  const everyCommand = (await modulesLoadedBy(['--help'])).distFiles;
  for (const [command, args] of [['status', ['status', 'certificate', 'web-rsa']], ['get', ['get', 'certificates', '-A']]] as const) {
    const traced = await modulesLoadedBy(['--kubeconfig', s.kubeconfig, ...args]);
    assert.equal(traced.code, 0, `certsmith ${args.join(' ')}`);
    assert.deepEqual(traced.distFiles.filter((f) => !everyCommand.includes(f)), [`${command}.js`], `certsmith ${args.join(' ')}`);
  }

  const applied = await s.cli(['apply', '-f', '-'], {
    input: 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: compiled, namespace: default}\nspec: {secretName: compiled-tls, dnsNames: [compiled.example.test], issuerRef: {name: example-ca}}\n',
  });
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /certificate\.cert-manager\.io\/compiled created/);
  await waitFor('the applied Certificate Ready', async () => {
    const r = await s.cli(['get', 'certificate', 'compiled', '-o', 'json']);
    return r.code === 0 && isReady(JSON.parse(r.stdout));
  }, 60_000);
});

test('certsmith server starts and answers without loading what only some requests and challenges need', async () => {
  const traced = await startServer({ bin: compiledBin, env: { NODE_OPTIONS: `--import ${traceImport}`, NODE_DEBUG: 'module' } });
  try {
    const listed = await traced.cli(['get', 'certificates', '-A', '-o', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    const modules = modulesIn(traced.output());
    assert.ok(modules.some((m) => m.endsWith('/src/server/api-server.ts')), 'the trace saw the server load');
    const loaded = modules.filter((m) => lazyInServer().some((h) => h.test(m)));
    assert.deepEqual(loaded, [], 'modules the server loaded at start');
  } finally {
    assert.equal(await traced.stop(), 0, traced.output().slice(-2000));
    traced.cleanup();
  }
});

test('the compiled CLI keeps its compile cache in ~/.cache/certsmith, never in the shared temp folder Node defaults to', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'certsmith-cc-tmp-'));
  const home = mkdtempSync(join(tmpdir(), 'certsmith-cc-home-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, HOME: home };
    delete env.NODE_COMPILE_CACHE;
    delete env.XDG_CACHE_HOME;
    const r = spawnSync(process.execPath, [compiledBin, '--version'], { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    // a cache another account can write lets it run code as whoever starts certsmith next (root)
    assert.equal(existsSync(join(tmp, 'node-compile-cache')), false, 'nothing in the temp folder');
    const ours = join(home, '.cache', 'certsmith');
    if ((process.getBuiltinModule('node:module') as { enableCompileCache?: unknown }).enableCompileCache) {
      assert.equal(statSync(ours).mode & 0o777, 0o700);
      assert.ok(readdirSync(ours).length > 0, 'Node keeps its cache there');
    } else {
      assert.equal(existsSync(ours), false, `Node ${process.version} has no compile cache`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
});
