import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta.ts';
import { Certificate, CertificateRequest, ClusterIssuer, Issuer } from '../api/resources.ts';
import { createMetrics } from '../metrics/registry.ts';
import { FakeClock } from './clock.ts';
import { Controller, ControllerManager, controllerOwnerKey, splitKey } from './controller.ts';
import { InformerFactory } from './informer.ts';
import { openTestStore } from './testing/test-store.ts';

const settle = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

test('a failing reconcile retries with per-key backoff on the clock, and success resets it', async () => {
  const clock = new FakeClock();
  const metrics = createMetrics();
  const calls: number[] = [];
  let failuresLeft = 3;
  const c = new Controller({
    name: 'certificates-trigger', clock, metrics, backoff: { baseDelayMs: 1000, maxDelayMs: 30_000 },
    reconcile: async () => {
      calls.push(clock.now().getTime());
      if (failuresLeft-- > 0) throw new Error('conflict');
    },
  });
  c.start();
  const t0 = clock.now().getTime();
  c.enqueue('ns/a');
  await settle();
  for (const step of [1000, 2000, 4000]) { clock.advance(step); await settle(); }
  assert.deepEqual(calls.map((t) => t - t0), [0, 1000, 3000, 7000]);
  assert.equal(c.queue.numRequeues('ns/a'), 0, 'forgotten after success');
  assert.equal(clock.pendingTimers(), 0);
  const text = await metrics.text();
  assert.match(text, /certmanager_controller_sync_call_count\{controller="certificates-trigger"\} 4/);
  assert.match(text, /certmanager_controller_sync_error_count\{controller="certificates-trigger"\} 3/);
  await c.stop();
});

test('requeueAfter schedules the next look; a later schedule replaces the earlier', async () => {
  const clock = new FakeClock();
  const runs: string[] = [];
  let next = 3_600_000;
  const c = new Controller({
    name: 'certificates-readiness', clock,
    reconcile: async (key) => { runs.push(`${key}@${clock.now().toISOString()}`); return { requeueAfter: next }; },
  });
  c.start();
  c.enqueue('ns/a');
  await settle();
  next = 60_000;
  c.enqueue('ns/a'); // e.g. an informer event: this run schedules 1 min, replacing 1 h
  await settle();
  next = 3_600_000 * 24;
  clock.advance(60_000);
  await settle();
  clock.advance(3_600_000);
  await settle();
  assert.deepEqual(runs, ['ns/a@2026-01-01T00:00:00.000Z', 'ns/a@2026-01-01T00:00:00.000Z', 'ns/a@2026-01-01T00:01:00.000Z']);
  await c.stop();
  assert.equal(clock.pendingTimers(), 0);
});

test('workers run distinct keys concurrently but never one key twice at once', async () => {
  let running = 0;
  let maxRunning = 0;
  const perKey = new Map<string, number>();
  let overlapped = false;
  const release: (() => void)[] = [];
  const c = new Controller({
    name: 'orders', workers: 3,
    reconcile: async (key) => {
      running++; maxRunning = Math.max(maxRunning, running);
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      if (perKey.get(key)! > 1) overlapped = true;
      await new Promise<void>((r) => release.push(r));
      perKey.set(key, perKey.get(key)! - 1);
      running--;
    },
  });
  c.start();
  for (const k of ['a', 'b', 'c', 'a', 'a']) c.enqueue(k);
  await settle();
  assert.equal(running, 3);
  c.enqueue('a');
  while (release.length) { release.shift()!(); await settle(); }
  assert.equal(maxRunning, 3);
  assert.equal(overlapped, false);
  assert.equal(c.isIdle(), true);
  await c.stop();
});

test('stop waits for in-flight reconciles and starts no new ones', async () => {
  const done: string[] = [];
  let release!: () => void;
  const c = new Controller({
    name: 'challenges',
    reconcile: async (key) => { if (key === 'slow') await new Promise<void>((r) => { release = r; }); done.push(key); },
  });
  c.start();
  c.enqueue('slow');
  c.enqueue('queued');
  await settle();
  let stopped = false;
  const stopping = c.stop().then(() => { stopped = true; });
  await settle();
  assert.equal(stopped, false);
  release();
  await stopping;
  assert.deepEqual(done, ['slow']);
});

test('controllerOwnerKey finds the controlling owner of a kind and group', () => {
  const obj: KubeObject = {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: {
      namespace: 'ns', name: 'web-1', ownerReferences: [
        { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', name: 'not-controller', uid: '1' },
        { apiVersion: 'cert-manager.io/v1alpha2', kind: 'Certificate', name: 'web', uid: '2', controller: true },
      ],
    },
  };
  assert.equal(controllerOwnerKey(obj, Certificate), 'ns/web');
  assert.equal(controllerOwnerKey(obj, Issuer), undefined);
  assert.equal(controllerOwnerKey({ ...obj, metadata: { ...obj.metadata, ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Certificate', name: 'x', uid: '3', controller: true }] } }, Certificate), undefined);
  const clusterOwned = { ...obj, metadata: { ...obj.metadata, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', name: 'ca', uid: '4', controller: true }] } };
  assert.equal(controllerOwnerKey(clusterOwned, ClusterIssuer), 'ca');
  assert.deepEqual(splitKey('ns/web'), { namespace: 'ns', name: 'web' });
  assert.deepEqual(splitKey('ca'), { name: 'ca' });
});

test('manager: informers sync before controllers start; whenIdle waits through chains of writes', async () => {
  const store = openTestStore();
  const clock = new FakeClock();
  await store.create(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'ns', name: 'pre' }, spec: {} });
  const informers = new InformerFactory(store, { clock });
  const certs = informers.informerFor(Certificate);
  const crs = informers.informerFor(CertificateRequest);
  const seenAtStart: number[] = [];
  const reconciled: string[] = [];

  // Certificate → creates a CertificateRequest it owns; the CR controller stamps it; the
  // CR change reaches the Certificate controller again through the owner reference.
  const certificates = new Controller({
    name: 'certificates-request-manager', clock,
    reconcile: async (key) => {
      seenAtStart.push(certs.list().length);
      reconciled.push(`crt ${key}`);
      const { namespace, name } = splitKey(key);
      const crt = certs.get(namespace, name);
      if (!crt || crs.get(namespace, `${name}-1`)) return;
      await store.create(CertificateRequest, {
        apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
        metadata: { namespace, name: `${name}-1`, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: name!, uid: crt.metadata.uid!, controller: true }] },
      });
    },
  }).watch(certs).watch(crs, (cr) => controllerOwnerKey(cr, Certificate));
  const requests = new Controller({
    name: 'certificaterequests-approver', clock,
    reconcile: async (key) => {
      reconciled.push(`cr ${key}`);
      const { namespace, name } = splitKey(key);
      const cr = crs.get(namespace, name);
      if (!cr || cr.status) return;
      await store.updateStatus(CertificateRequest, { ...structuredClone(cr), status: { conditions: [{ type: 'Approved', status: 'True' }] } });
    },
  }).watch(crs);
  const manager = new ControllerManager({ informers }).add(certificates, requests);
  assert.equal(manager.isReady(), false);
  await manager.start();
  assert.equal(manager.isReady(), true);
  await manager.whenIdle();
  assert.equal(seenAtStart[0], 1, 'the cache was synced before the first reconcile');
  assert.ok(crs.get('ns', 'pre-1')?.status, 'chain ran to the end');

  await store.create(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'ns', name: 'late' }, spec: {} });
  await manager.whenIdle();
  assert.ok(crs.get('ns', 'late-1')?.status);
  assert.ok(reconciled.filter((r) => r === 'crt ns/late').length >= 2, 'owner re-reconciled on its CR changes');
  await manager.stop();
  assert.equal(store.watcherCount(), 0);
});

test('whenIdle gives up with the busy parts named', async () => {
  const store = openTestStore();
  const informers = new InformerFactory(store);
  const stuck = new Controller({ name: 'stuck', reconcile: () => new Promise(() => {}) });
  const manager = new ControllerManager({ informers }).add(stuck);
  await manager.start();
  stuck.enqueue('k');
  await assert.rejects(manager.whenIdle({ timeoutMs: 50 }), /controller stuck/);
  stuck.queue.shutDown();
  informers.stop();
});
