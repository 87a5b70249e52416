// What `certsmith server` loads before it can answer: the /openapi/v2 document (and its protobuf
// form) loads on the first request for it and the YAML parser/printer (~70 files) only where YAML
// is read or written, and the CEL library (admission webhooks' matchConditions) on the first
// configuration that has them, so none is in the server command's module graph (issue 17). src/api/openapi.ts
// still loads: unknown-field pruning reads its schemas synchronously on every write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

test('the server command\'s module graph loads neither /openapi/v2, yaml nor CEL', () => {
  // the server command and the modules its action imports before it serves (src/cli/server.ts)
  const src = join(import.meta.dirname, '..');
  const modules = ['cli/server.ts', 'runtime/clock.ts', 'runtime/logger.ts', 'composition/index.ts', 'store/sqlite/index.ts', 'server/tls.ts', 'server/kubeconfig.ts'].map((m) => join(src, m));
  // a load hook reports every module URL back over a port; a last marker module tells when all arrived
  const hooks = `let port; export function initialize(d) { port = d.port; }
export async function load(url, ctx, next) { port.postMessage(url); return next(url, ctx); }`;
  const marker = 'data:text/javascript,export default "start-load-marker"';
  const script = `import { register, createRequire } from 'node:module';
const { port1, port2 } = new MessageChannel();
const urls = [];
const done = new Promise((resolve) => port1.on('message', (u) => { urls.push(u); if (u === ${JSON.stringify(marker)}) resolve(); }));
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { port: port2 }, transferList: [port2] });
for (const m of ${JSON.stringify(modules)}) await import(m);
await import(${JSON.stringify(marker)});
await done;
port1.close();
process.stdout.write(JSON.stringify({ urls, cjs: Object.keys(createRequire(import.meta.url).cache) }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '..', '..'), encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const { urls, cjs } = JSON.parse(r.stdout) as { urls: string[]; cjs: string[] };
  const files = [...urls, ...cjs];
  // the hook saw the server command and what it composes, so an empty result below means something
  assert.ok(files.some((f) => f.endsWith('/src/cli/server.ts')), files.join('\n'));
  assert.ok(files.some((f) => f.endsWith('/src/server/api/router.ts')), files.join('\n'));
  const heavy = files.filter((f) => /\/src\/server\/openapi\/|\/node_modules\/yaml\/|\/node_modules\/@marcbachmann\/cel-js\//.test(f));
  assert.deepEqual(heavy, []);
});
