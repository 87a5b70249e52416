// deploy/monitoring/ (issue 18): the alerting rules pass `promtool check rules`, the
// PrometheusRule carries the same groups, every Grafana panel query parses, and each alert
// fires from a real server's /metrics output through `promtool test rules`.
//
// The real output is one scrape of a `certsmith server` holding the examples plus objects made
// to fail: an ACME certificate whose HTTP-01 challenge Pebble cannot validate, an ACME
// ClusterIssuer whose server is down, a CA Issuer without its Secret, and a 1-hour certificate.
// promtool's clock starts at 0, so the scrape is moved onto it: timestamps become relative to
// the server's clock (certmanager_clock_time_seconds_gauge) at the scrape, gauges stay as they
// were (nothing renews inside promtool, which is what the expiry alerts are about), and
// counters keep growing at the average rate they grew at in the real run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { repoRoot, startServer, waitFor, type RunningServer } from './harness.ts';

const run = promisify(execFile);
const monitoring = join(repoRoot, 'deploy', 'monitoring');
const rulesFile = join(monitoring, 'alerts.rules.yaml');
const work = mkdtempSync(join(tmpdir(), 'certsmith-monitoring-'));

interface RuleGroup { name: string; rules: { alert?: string; record?: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string> }[] }

async function promtool(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run('promtool', args, { cwd: work });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

test('promtool check rules passes on the alerting rules', async () => {
  const r = await promtool(['check', 'rules', rulesFile]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /SUCCESS: \d+ rules found/);
});

test('the PrometheusRule carries exactly the groups of alerts.rules.yaml', () => {
  const plain = YAML.parse(readFileSync(rulesFile, 'utf8')) as { groups: RuleGroup[] };
  const operator = YAML.parse(readFileSync(join(monitoring, 'prometheusrule.yaml'), 'utf8'));
  assert.equal(operator.kind, 'PrometheusRule');
  assert.deepEqual(operator.spec.groups, plain.groups);
});

test('every Grafana panel query parses as PromQL and names only metrics certsmith serves', async () => {
  const dashboard = JSON.parse(readFileSync(join(monitoring, 'grafana-dashboard.json'), 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));
  assert.ok(exprs.length >= 10, `only ${exprs.length} queries`);
  // Grafana's variables, given values, so that promtool parses each query as a recording rule.
  const rules = exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr: expr.replaceAll('$namespace', '.*').replaceAll('$__rate_interval', '5m') }));
  const file = join(work, 'dashboard-queries.yaml');
  writeFileSync(file, YAML.stringify({ groups: [{ name: 'dashboard', rules }] }));
  const r = await promtool(['check', 'rules', file]);
  assert.equal(r.code, 0, r.out);
  const served = new Set(['up', ...metricNamesServedByCertsmith()]);
  for (const expr of exprs) {
    for (const name of expr.match(/\bcertmanager_[a-z_]+/g) ?? []) assert.ok(served.has(name.replace(/_(sum|count)$/, '')) || served.has(name), `${name} in "${expr}"`);
  }
});

function metricNamesServedByCertsmith(): string[] {
  const src = readFileSync(join(repoRoot, 'src', 'metrics', 'registry.ts'), 'utf8');
  return [...src.matchAll(/name: '(certmanager_[a-z_]+)'/g), ...src.matchAll(/timestampGauge\('(certmanager_[a-z_]+)'/g)].map((m) => m[1]);
}

// ---- alerts fired from a real scrape ----

let cts: ChallTestSrv;
let pebble: Pebble;
let server: RunningServer;
let scrape = '';
let uptimeSeconds = 0;
let offlineHost = '';
const unvalidatedName = `unvalidated-${process.pid}.example.test`;

const b64 = (s: string) => Buffer.from(s).toString('base64');

before(async () => {
  cts = await startChallTestSrv();
  // Pebble validates HTTP-01 on a port nobody serves: the challenge fails at the CA after
  // certsmith's own self-check passed (pointed at its responder's own port).
  pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
  const responderPort = await freePort();
  const metricsPort = await freePort();
  offlineHost = `127.0.0.1:${await freePort()}`;
  const started = Date.now();
  server = await startServer({
    args: [
      '--apply', join(repoRoot, 'examples'), '--metrics-listen', `127.0.0.1:${metricsPort}`,
      '--acme-http01-listen', `127.0.0.1:${responderPort}`, '--acme-http01-self-check-port', String(responderPort),
      '--acme-http01-solver-nameservers', cts.dnsServer,
    ],
  });
  const manifests = [
    `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: pebble }\nspec:\n  acme:\n    server: ${pebble.directoryUrl}\n    caBundle: ${b64(pebble.caPem)}\n    privateKeySecretRef: { name: pebble-account }\n    solvers: [ { http01: { ingress: {} } } ]`,
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: unvalidated, namespace: default }\nspec: { secretName: unvalidated-tls, dnsNames: [${unvalidatedName}], issuerRef: { name: pebble, kind: ClusterIssuer } }`,
    `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: offline }\nspec:\n  acme:\n    server: https://${offlineHost}/dir\n    privateKeySecretRef: { name: offline-account }\n    solvers: [ { http01: { ingress: {} } } ]`,
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: stranded, namespace: default }\nspec: { secretName: stranded-tls, dnsNames: [stranded.example.test], issuerRef: { name: offline, kind: ClusterIssuer } }`,
    `apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: { name: broken-ca, namespace: default }\nspec: { ca: { secretName: no-such-secret } }`,
    `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: short, namespace: default }\nspec: { secretName: short-tls, duration: 1h, dnsNames: [short.example.test], issuerRef: { name: example-ca, kind: Issuer } }`,
  ];
  const applied = await server.cli(['apply', '-f', '-'], { input: manifests.join('\n---\n') });
  assert.equal(applied.code, 0, applied.stderr);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const has = (text: string, series: string) => text.split('\n').some((l) => l.startsWith(series) && l.endsWith(' 1'));
  scrape = await waitFor('a scrape showing every state the alerts need', async () => {
    const text = await (await fetch(metricsUrl)).text();
    const ok = has(text, 'certmanager_certificate_challenge_status{') && text.includes(`domain="${unvalidatedName}"`)
      && text.split('\n').some((l) => l.includes(`domain="${unvalidatedName}"`) && l.includes('status="invalid"') && l.endsWith(' 1'))
      && has(text, 'certmanager_clusterissuer_ready_status{name="offline",condition="False"}')
      && has(text, 'certmanager_issuer_ready_status{name="broken-ca",namespace="default",condition="False"}')
      && has(text, 'certmanager_certificate_ready_status{name="short",namespace="default",condition="True"')
      && has(text, 'certmanager_certificate_ready_status{name="web-rsa",namespace="default",condition="True"')
      && text.includes(`host="${offlineHost}"`);
    return ok ? text : undefined;
  }, 90_000, 500);
  uptimeSeconds = (Date.now() - started) / 1000;
});

after(async () => {
  await server?.stop();
  server?.cleanup();
  await Promise.all([pebble?.stop(), cts?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

const STEPS = 240; // four hours at promtool's 1m interval

/** One exposition line → promtool input series, on promtool's clock (see the header). */
function inputSeries(text: string): { series: string; values: string }[] {
  const lines = text.split('\n').filter((l) => l && !l.startsWith('#'));
  const value = (l: string) => Number(l.slice(l.lastIndexOf(' ') + 1));
  const clockLine = lines.find((l) => l.startsWith('certmanager_clock_time_seconds_gauge '));
  assert.ok(clockLine, 'the scrape has the clock gauge');
  const now = value(clockLine);
  const out: { series: string; values: string }[] = [];
  for (const line of lines) {
    const series = line.slice(0, line.lastIndexOf(' '));
    const v = value(line);
    if (!Number.isFinite(v)) continue;
    const name = series.replace(/\{.*$/, '');
    if (name === 'certmanager_clock_time_seconds_gauge') continue;
    if (/_timestamp_seconds$/.test(name)) {
      out.push({ series, values: `${v === 0 ? 0 : v - now}+0x${STEPS}` });
    } else if (/(_count|_total|_sum)$/.test(name) && !name.startsWith('certmanager_http_acme_client_request_duration')) {
      out.push({ series, values: `${v}+${((v / uptimeSeconds) * 60).toFixed(6)}x${STEPS}` });
    } else {
      out.push({ series, values: `${v}+0x${STEPS}` });
    }
  }
  // Prometheus's own series for the target: scraped for 30 minutes, then down.
  out.push({ series: 'up{job="certsmith",instance="127.0.0.1:9402"}', values: `1x30 0x${STEPS - 30}` });
  return out;
}

/** The value and labels of the first series of `metric` in the scrape whose line has every `part`. */
function sample(metric: string, ...parts: string[]): { value: number; labels: Record<string, string> } {
  const line = scrape.split('\n').find((l) => (l.startsWith(`${metric}{`) || l.startsWith(`${metric} `)) && parts.every((p) => l.includes(p)));
  assert.ok(line, `${metric} with ${parts.join(', ')} in the scrape`);
  // Prometheus has no empty labels: an empty value is the label's absence
  const labels = Object.fromEntries([...line.slice(0, line.lastIndexOf(' ')).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
    .filter((m) => m[2] !== '').map((m) => [m[1], m[2].replace(/\\(.)/g, '$1')]));
  return { value: Number(line.slice(line.lastIndexOf(' ') + 1)), labels };
}

test('each alert fires from real /metrics output (promtool test rules)', async () => {
  const now = sample('certmanager_clock_time_seconds_gauge').value;
  const expiry = sample('certmanager_certificate_expiration_timestamp_seconds', 'name="short"');
  const shortLabels = expiry.labels;
  const shortExpiresAt = expiry.value - now;
  const shortRenewsAt = sample('certmanager_certificate_renewal_timestamp_seconds', 'name="short"').value - now;
  const challengeLabels = sample('certmanager_certificate_challenge_status', `domain="${unvalidatedName}"`, 'status="invalid"').labels;
  const notReady = (name: string) => sample('certmanager_certificate_ready_status', `name="${name}"`, 'condition="False"').labels;
  const minutes = (s: number) => `${Math.ceil(s / 60)}m`;

  // Annotations are templates over the value; promtool compares them verbatim, so the test copy
  // drops them (their syntax is covered by `promtool check rules` above) and checks labels.
  const groups = (YAML.parse(readFileSync(rulesFile, 'utf8')) as { groups: RuleGroup[] }).groups
    .map((g) => ({ ...g, rules: g.rules.map(({ annotations: _annotations, ...rule }) => rule) }));
  writeFileSync(join(work, 'rules.yaml'), YAML.stringify({ groups }));
  const cases = [
    // a tenth of the 1 h lifetime (6 min) left, held for 10 min: from 54 min, firing by 65 min
    { alertname: 'CertsmithCertificateExpiringWithoutRenewal', eval_time: minutes(shortExpiresAt - 360 + 660), exp_alerts: [{ exp_labels: { severity: 'critical', ...shortLabels } }] },
    { alertname: 'CertsmithCertificateExpiringWithoutRenewal', eval_time: minutes(shortExpiresAt - 600), exp_alerts: [] },
    // renewal time (half the lifetime for a short-lived certificate) passed an hour ago, held for 15 min
    { alertname: 'CertsmithCertificateRenewalOverdue', eval_time: minutes(shortRenewsAt + 3600 + 960), exp_alerts: [{ exp_labels: { severity: 'warning', ...shortLabels } }] },
    { alertname: 'CertsmithCertificateRenewalOverdue', eval_time: minutes(shortRenewsAt + 1800), exp_alerts: [] },
    { alertname: 'CertsmithCertificateIssuanceFailing', eval_time: '20m', exp_alerts: [
      { exp_labels: { severity: 'warning', ...notReady('stranded') } },
      { exp_labels: { severity: 'warning', ...notReady('unvalidated') } },
    ] },
    { alertname: 'CertsmithCertificateIssuanceFailing', eval_time: '10m', exp_alerts: [] },
    { alertname: 'CertsmithIssuerNotReady', eval_time: '20m', exp_alerts: [{ exp_labels: { severity: 'warning', name: 'broken-ca', namespace: 'default', condition: 'True' } }] },
    { alertname: 'CertsmithClusterIssuerNotReady', eval_time: '20m', exp_alerts: [{ exp_labels: { severity: 'warning', name: 'offline', condition: 'True' } }] },
    { alertname: 'CertsmithACMEErrors', eval_time: '25m', exp_alerts: [{ exp_labels: { severity: 'warning', host: offlineHost } }] },
    { alertname: 'CertsmithACMEChallengeFailing', eval_time: '10m', exp_alerts: [{ exp_labels: { severity: 'warning', ...challengeLabels } }] },
    { alertname: 'CertsmithDown', eval_time: '40m', exp_alerts: [{ exp_labels: { severity: 'critical', job: 'certsmith', instance: '127.0.0.1:9402' } }] },
    { alertname: 'CertsmithDown', eval_time: '20m', exp_alerts: [] },
    // sync errors: the scrape's own (the offline ClusterIssuer's account controller retrying with
    // per-object backoff) are left out, as drawing their first seconds out over four hours says
    // more about the machine's speed than about the backoff; a controller failing 0.1 times a
    // second fires after 15 + 30 minutes, and only it
    { alertname: 'CertsmithControllerSyncErrors', eval_time: '50m', exp_alerts: [{ exp_labels: { severity: 'warning', controller: 'failing-for-the-test' } }] },
    { alertname: 'CertsmithControllerSyncErrors', eval_time: '20m', exp_alerts: [] },
  ];
  // the rule watches the counter certsmith serves (a series per controller once one fails)
  assert.match(scrape, /^# TYPE certmanager_controller_sync_error_count counter$/m);
  const failing = { series: 'certmanager_controller_sync_error_count{controller="failing-for-the-test"}', values: `0+6x${STEPS}` };
  const testFile = join(work, 'alerts.test.yaml');
  writeFileSync(testFile, YAML.stringify({
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [{ interval: '1m', input_series: [...inputSeries(scrape).filter((x) => !x.series.startsWith('certmanager_controller_sync_error_count')), failing], alert_rule_test: cases }],
  }, { lineWidth: 0 }));
  const r = await promtool(['test', 'rules', testFile]);
  assert.equal(r.code, 0, `${r.out}\n(test file: ${testFile})`);
  assert.match(r.out, /SUCCESS/);
});
