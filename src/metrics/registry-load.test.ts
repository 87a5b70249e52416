// What the metrics registry costs a start: prom-client's four classes, not its index (push
// gateway, cluster aggregator, default metrics and @opentelemetry/api, about 90 files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

test('loading the metrics registry loads neither prom-client\'s index nor @opentelemetry/api', () => {
  const registry = join(import.meta.dirname, 'registry.ts');
  const script = `import { createRequire } from 'node:module';
const { CertsmithMetrics } = await import(${JSON.stringify(registry)});
const m = new CertsmithMetrics();
process.stdout.write(JSON.stringify({ text: await m.registry.metrics(), files: Object.keys(createRequire(import.meta.url).cache) }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '..', '..'), encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const { text, files } = JSON.parse(r.stdout) as { text: string; files: string[] };
  assert.match(text, /certmanager_controller_sync_call_count/);
  assert.ok(files.some((f) => f.includes('/prom-client/lib/counter.js')), files.join('\n'));
  const heavy = files.filter((f) => /@opentelemetry|\/prom-client\/index\.js|\/prom-client\/lib\/(pushgateway|cluster|defaultMetrics)\.js/.test(f));
  assert.deepEqual(heavy, []);
});
