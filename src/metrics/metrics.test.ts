import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { register as globalRegistry } from 'prom-client';
import type { KubeObject } from '../api/meta.ts';
import { FakeClock } from '../runtime/clock.ts';
import { createMetrics } from './registry.ts';
import { startOperationalServers } from './http.ts';

function certificate(name: string, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'ns', name },
    spec: { issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } }, status,
  };
}

const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('certificate gauges are computed from the source at scrape time, with cert-manager names and labels', async () => {
  let certs = [
    certificate('web', { notAfter: '2026-04-01T00:00:00Z', notBefore: '2026-01-01T00:00:00Z', renewalTime: '2026-03-02T00:00:00Z', conditions: [{ type: 'Ready', status: 'True' }] }),
    certificate('new', {}),
  ];
  const m = createMetrics({ certificates: () => certs, clock: new FakeClock('2026-01-01T00:00:00Z') });
  let text = await m.text();
  const l = 'name="web",namespace="ns",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert-manager.io"';
  assert.equal(sample(text, `certmanager_certificate_expiration_timestamp_seconds{${l}}`), Date.parse('2026-04-01T00:00:00Z') / 1000);
  assert.equal(sample(text, `certmanager_certificate_not_before_timestamp_seconds{${l}}`), Date.parse('2026-01-01T00:00:00Z') / 1000);
  assert.equal(sample(text, `certmanager_certificate_renewal_timestamp_seconds{${l}}`), Date.parse('2026-03-02T00:00:00Z') / 1000);
  assert.equal(sample(text, `certmanager_certificate_ready_status{name="web",namespace="ns",condition="True",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert-manager.io"}`), 1);
  assert.equal(sample(text, `certmanager_certificate_ready_status{name="web",namespace="ns",condition="False",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert-manager.io"}`), 0);
  // no Ready condition: Unknown is 1; unset times are 0
  assert.equal(sample(text, `certmanager_certificate_ready_status{name="new",namespace="ns",condition="Unknown",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert-manager.io"}`), 1);
  assert.equal(sample(text, `certmanager_certificate_expiration_timestamp_seconds{name="new",namespace="ns",issuer_name="ca",issuer_kind="Issuer",issuer_group="cert-manager.io"}`), 0);
  assert.equal(sample(text, 'certmanager_clock_time_seconds_gauge'), Date.parse('2026-01-01T00:00:00Z') / 1000);
  // the deprecated counter upstream still serves beside the gauge (dashboards and Datadog's integration read it)
  assert.equal(sample(text, 'certmanager_clock_time_seconds'), Date.parse('2026-01-01T00:00:00Z') / 1000);
  assert.match(text, /^# TYPE certmanager_clock_time_seconds counter$/m);
  // a deleted certificate's series disappear
  certs = certs.slice(1);
  text = await m.text();
  assert.equal(text.includes('name="web"'), false);
});

test('counters: controller syncs, ACME requests, renewal deferred/bypassed; not on the global registry', async () => {
  const m = createMetrics();
  m.controllerSync('certificates-trigger');
  m.controllerSync('certificates-trigger');
  m.controllerSyncError('certificates-trigger');
  m.acmeRequest({ scheme: 'https', host: '127.0.0.1:14000', action: 'new-order', method: 'POST', status: 201 }, 0.25);
  m.renewalDeferred('outside_window');
  m.renewalBypassed('expiry_imminent');
  const text = await m.text();
  assert.equal(sample(text, 'certmanager_controller_sync_call_count{controller="certificates-trigger"}'), 2);
  assert.equal(sample(text, 'certmanager_controller_sync_error_count{controller="certificates-trigger"}'), 1);
  const acme = 'scheme="https",host="127.0.0.1:14000",action="new-order",method="POST",status="201"';
  assert.equal(sample(text, `certmanager_http_acme_client_request_count{${acme}}`), 1);
  assert.equal(sample(text, `certmanager_http_acme_client_request_duration_seconds_sum{${acme}}`), 0.25);
  assert.match(text, /certmanager_http_acme_client_request_duration_seconds\{quantile="0.99",/);
  assert.equal(sample(text, 'certmanager_certificate_renewal_deferred_total{reason="outside_window"}'), 1);
  assert.equal(sample(text, 'certmanager_certificate_renewal_bypassed_total{reason="expiry_imminent"}'), 1);
  assert.equal((await globalRegistry.metrics()).includes('certmanager_'), false);
  // two sets in one process do not collide
  assert.doesNotThrow(() => createMetrics());
});

test('operational servers serve /metrics and the probes on loopback', async () => {
  const m = createMetrics();
  m.controllerSync('orders');
  let ready = false;
  const servers = await startOperationalServers({ metricsAddress: '127.0.0.1:0', healthAddress: '127.0.0.1:0', registry: m.registry, ready: () => ready });
  try {
    assert.match(servers.metricsAddress, /^127\.0\.0\.1:\d+$/);
    const res = await fetch(`http://${servers.metricsAddress}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(await res.text(), /certmanager_controller_sync_call_count\{controller="orders"\} 1/);
    assert.equal((await fetch(`http://${servers.metricsAddress}/other`)).status, 404);
    const h = `http://${servers.healthAddress}`;
    assert.equal((await fetch(`${h}/healthz`)).status, 200);
    assert.equal((await fetch(`${h}/livez`)).status, 200);
    assert.equal((await fetch(`${h}/readyz`)).status, 503);
    ready = true;
    assert.equal((await fetch(`${h}/readyz`)).status, 200);
  } finally {
    await servers.close();
  }
  await assert.rejects(fetch(`http://${servers.metricsAddress}/metrics`));
});

test('a port already taken fails the start and leaves nothing listening', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    await assert.rejects(startOperationalServers({ metricsAddress: '127.0.0.1:0', healthAddress: `127.0.0.1:${port}`, registry: createMetrics().registry, ready: () => true }), /EADDRINUSE/);
  } finally {
    await new Promise((r) => blocker.close(r));
  }
});

test('issuer, clusterissuer and challenge gauges under cert-manager names and labels, read at scrape time', async () => {
  const issuer = (kind: string, name: string, namespace: string | undefined, status?: string): KubeObject => ({
    apiVersion: 'cert-manager.io/v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) },
    status: status ? { conditions: [{ type: 'Ready', status }] } : {},
  });
  const challenge = (name: string, status: Record<string, unknown>): KubeObject => ({
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', metadata: { namespace: 'ns', name },
    spec: { dnsName: 'example.com', type: 'DNS-01' }, status,
  });
  let challenges = [challenge('c1', { state: 'pending', processing: true }), challenge('c2', {})];
  const m = createMetrics({
    issuers: () => [issuer('Issuer', 'ca', 'ns', 'True')],
    clusterIssuers: () => [issuer('ClusterIssuer', 'le', undefined, 'False'), issuer('ClusterIssuer', 'new', undefined)],
    challenges: () => challenges,
  });
  let text = await m.text();
  assert.equal(sample(text, 'certmanager_issuer_ready_status{name="ca",namespace="ns",condition="True"}'), 1);
  assert.equal(sample(text, 'certmanager_issuer_ready_status{name="ca",namespace="ns",condition="False"}'), 0);
  assert.equal(sample(text, 'certmanager_clusterissuer_ready_status{name="le",condition="False"}'), 1);
  assert.equal(sample(text, 'certmanager_clusterissuer_ready_status{name="le",condition="True"}'), 0);
  assert.equal(sample(text, 'certmanager_clusterissuer_ready_status{name="new",condition="Unknown"}'), 1);
  const c1 = 'name="c1",namespace="ns",domain="example.com",type="DNS-01",processing="true",reason=""';
  assert.equal(sample(text, `certmanager_certificate_challenge_status{${c1},status="pending"}`), 1);
  assert.equal(sample(text, `certmanager_certificate_challenge_status{${c1},status="valid"}`), 0);
  // a challenge with no state yet reports the empty state, as upstream's collector does
  assert.equal(sample(text, 'certmanager_certificate_challenge_status{name="c2",namespace="ns",domain="example.com",type="DNS-01",processing="false",reason="",status=""}'), 1);
  challenges = [challenge('c1', { state: 'invalid', processing: false, reason: 'connection refused' })];
  text = await m.text();
  assert.equal(sample(text, 'certmanager_certificate_challenge_status{name="c1",namespace="ns",domain="example.com",type="DNS-01",processing="false",reason="connection refused",status="invalid"}'), 1);
  assert.equal(text.includes('name="c2"'), false);
});

test('ACME request latency quantiles cover the last 10 minutes, as Go\'s client_golang Summary (MaxAge 10m) upstream uses, not the whole process life', async () => {
  mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
  try {
    const m = createMetrics();
    const labels = { scheme: 'https', host: 'acme.example', action: 'new-order', method: 'POST', status: 201 };
    const q = (text: string) => sample(text, 'certmanager_http_acme_client_request_duration_seconds{quantile="0.99",scheme="https",host="acme.example",action="new-order",method="POST",status="201"}');
    for (let i = 0; i < 50; i++) m.acmeRequest(labels, 30);
    assert.equal(q(await m.text()), 30, 'a slow CA');
    mock.timers.tick(11 * 60_000);
    for (let i = 0; i < 50; i++) m.acmeRequest(labels, 0.2);
    assert.equal(q(await m.text()), 0.2, 'eleven minutes later, fast again: the slow minutes have aged out');
  } finally {
    mock.timers.reset();
  }
});

test('the clock gauges are whole seconds, as upstream\'s clock.Now().Unix()', async () => {
  const m = createMetrics({ clock: new FakeClock('2026-01-01T00:00:00.750Z') });
  const text = await m.text();
  assert.equal(sample(text, 'certmanager_clock_time_seconds_gauge'), Date.parse('2026-01-01T00:00:00Z') / 1000);
  assert.equal(sample(text, 'certmanager_clock_time_seconds'), Date.parse('2026-01-01T00:00:00Z') / 1000);
});

test('process metrics as upstream\'s process collector gives them: start time, CPU, memory, descriptors', async () => {
  const text = await createMetrics().text();
  const start = sample(text, 'process_start_time_seconds');
  assert.ok(start !== undefined && Math.abs(start - (Date.now() / 1000 - process.uptime())) <= 1, `process_start_time_seconds ${start}`);
  assert.ok((sample(text, 'process_cpu_seconds_total') ?? 0) > 0);
  assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 1e6);
  assert.ok((sample(text, 'process_virtual_memory_bytes') ?? 0) > 1e6);
  assert.ok((sample(text, 'process_open_fds') ?? 0) >= 3);
  assert.ok((sample(text, 'process_max_fds') ?? 0) >= 64);
  assert.ok((sample(text, 'nodejs_heap_size_used_bytes') ?? 0) > 1e6);
  // nothing that samples in the background (an event-loop delay monitor wakes every 10 ms, which
  // an idle server with 100,000 Certificates cannot afford)
  assert.equal(text.includes('nodejs_eventloop_lag'), false);
});
