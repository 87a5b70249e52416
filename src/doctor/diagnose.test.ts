// certsmith doctor over many Certificates: the namespace's requests, orders and challenges are
// read once per run, not once per Certificate (1,000 healthy Certificates took 3 min 10 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { Certificate, ClusterIssuer, EventType } from '../api/resources.ts';
import { BACKOFF_EVENT_REASON, backoffEventMessage } from '../shared/backoff.ts';
import type { Certificate as CertificateObj } from '../api/types.ts';
import type { ResourceType } from '../api/resources.ts';
import type { ListOptions, Store } from '../store/store.ts';
import { diagnoseAll } from './diagnose.ts';

test('diagnoseAll lists each kind once for the whole run, and still diagnoses each Certificate', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await store.create(ClusterIssuer, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
    await store.updateStatus(ClusterIssuer, { ...(await store.get(ClusterIssuer, undefined, 'selfsigned'))!, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'IsReady', message: 'ready' }] } });
    const certs: CertificateObj[] = [];
    for (let i = 0; i < 30; i++) {
      const created = await store.create<CertificateObj>(Certificate, {
        apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `c${i}`, namespace: 'bulk' },
        spec: { secretName: `c${i}-tls`, dnsNames: [`c${i}.example.test`], issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } },
      } as CertificateObj);
      // every other one failed once and waits for its next attempt
      certs.push(i % 2 ? await store.updateStatus<CertificateObj>(Certificate, { ...created, status: { lastFailureTime: '2026-11-27T00:00:00Z', failedIssuanceAttempts: 1 } } as CertificateObj) : created);
    }
    const lists: string[] = [];
    const counting = { get: store.get.bind(store), list: (type: ResourceType, o?: ListOptions) => { lists.push(`${type.plural}/${o?.namespace ?? ''}`); return store.list(type, o); } } as unknown as Store;
    const found = await diagnoseAll(counting, certs, { backoff: { initialMs: 3_600_000, maxMs: 32 * 3_600_000 }, now: () => new Date('2026-11-27T00:30:00Z') });
    assert.equal(found.length, 30);
    assert.ok(found.every((d) => d.findings.some((f) => f.check === 'issuer' && f.severity === 'ok')), JSON.stringify(found[0]));
    assert.ok(found.filter((d) => d.findings.some((f) => f.check === 'backoff')).length >= 15, 'the failed ones have their backoff');
    assert.deepEqual([...new Set(lists)].sort(), lists.slice().sort(), `each list once: ${lists.join(', ')}`);
  } finally {
    await store.close();
  }
});

test('the backoff finding names the next attempt the server\'s own Backoff Event gives, whatever --backoff-initial doctor is given', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    await store.create(ClusterIssuer, { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
    const created = await store.create<CertificateObj>(Certificate, {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' },
      spec: { secretName: 'web-tls', dnsNames: ['web.example.test'], issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } },
    } as CertificateObj);
    const crt = await store.updateStatus<CertificateObj>(Certificate, { ...created, status: { lastFailureTime: '2026-11-27T00:00:00Z', failedIssuanceAttempts: 1 } } as CertificateObj);
    // a server run with --backoff-initial 1m said so when it backed off
    await store.create(EventType, {
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.backoff', namespace: 'default' },
      involvedObject: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'web', namespace: 'default', uid: crt.metadata.uid },
      reason: BACKOFF_EVENT_REASON, message: backoffEventMessage(1, '2026-11-27T00:01:00Z'), type: 'Normal', count: 1,
      firstTimestamp: '2026-11-27T00:00:01Z', lastTimestamp: '2026-11-27T00:00:01Z', source: { component: 'certificates-trigger' },
    } as never);
    const [found] = await diagnoseAll(store, [crt], { backoff: { initialMs: 3_600_000, maxMs: 32 * 3_600_000 }, now: () => new Date('2026-11-27T00:00:30Z') });
    const backoff = found.findings.find((f) => f.check === 'backoff');
    assert.match(backoff?.sentence ?? '', /certsmith tries again at 2026-11-27T00:01:00\.000Z \(in 30s\)/, JSON.stringify(found.findings));
  } finally {
    await store.close();
  }
});
