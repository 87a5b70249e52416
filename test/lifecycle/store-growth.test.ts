// A year of renewals on the embedded store with a fake clock (issue 17): 90-day Certificates from
// a CA issuer renew every 60 days, old requests and Events go, compaction drops history and
// returns free pages, and state.db never grows past 1.5× its size after the first issuance.
// The stack is `certsmith server`'s (src/composition) on a state file, as a user runs it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../src/runtime/clock.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { compose } from '../../src/composition/index.ts';
import { Certificate, CertificateRequest, EventType, resourceTypeFor } from '../../src/api/resources.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { Certificate as CertificateObj } from '../../src/api/types.ts';

const COUNT = 60;
const DAY = 86_400_000;
const HOUR = 3_600_000;

const STEP_DAYS = 5;

test(`a year of renewals of ${COUNT} 90-day Certificates: state.db stays within 1.5× its size after the first issuance`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-year-'));
  const path = join(dir, 'state.db');
  const clock = new FakeClock('2026-01-01T00:00:00Z');
  // history kept in proportion to the Certificates, as the default 10,000 revisions is at 10,000
  const backend = openSqliteStore({ path, clock, compactKeep: COUNT, compactIntervalMs: HOUR });
  const stack = compose({ store: backend, clock, logger: silentLogger });
  try {
    const running = await stack.startControllers({ options: { metricsListen: '', healthListen: '' } });
    const settle = () => running.manager.whenIdle({ timeoutMs: 120_000 });
    const apply = (o: KubeObject) => stack.store.create(resourceTypeFor(o.apiVersion, o.kind)!, o);
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ca', namespace: 'default' }, spec: { isCA: true, commonName: 'year CA', secretName: 'ca', duration: '87600h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } } });
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'default' }, spec: { ca: { secretName: 'ca' } } });
    await settle();
    await Promise.all(Array.from({ length: COUNT }, (_, i) => apply({
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: `c${i}`, namespace: 'default' },
      spec: { secretName: `c${i}-tls`, dnsNames: [`c${i}.year.test`], duration: '2160h', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'ca' } },
    })));
    await settle();
    const certificates = async () => (await backend.list<CertificateObj>(Certificate, { namespace: 'default' })).items.filter((c) => c.metadata.name !== 'ca');
    const ready = (c: CertificateObj) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
    assert.equal((await certificates()).filter(ready).length, COUNT);

    // what the file holds once the store has compacted and written its WAL back
    const size = () => {
      backend.compact();
      backend.checkpoint();
      return statSync(path).size;
    };
    const first = size();
    const sizes: string[] = [];
    let largest = 0;
    // in steps of a few days: each timer still fires at its own instant (FakeClock.set)
    for (let day = STEP_DAYS; day <= 365; day = Math.min(365, day + STEP_DAYS)) {
      clock.set(Date.parse('2026-01-01T00:00:00Z') + day * DAY);
      await settle();
      if (day % 30 === 0 || day === 365) {
        const s = size();
        largest = Math.max(largest, s);
        sizes.push(`day ${day}: ${(s / 1024).toFixed(0)} KiB`);
      }
      if (day === 365) break;
    }
    t.diagnostic(`state.db after the first issuance ${(first / 1024).toFixed(0)} KiB, then ${sizes.join(', ')}`);
    const crts = await certificates();
    assert.equal(crts.filter(ready).length, COUNT, 'every Certificate is Ready at the end of the year');
    // issued on day 0, renewed every 60 days: six renewals in a year
    assert.ok(crts.every((c) => (c.status?.revision ?? 0) >= 6), `revisions: ${[...new Set(crts.map((c) => c.status?.revision))].join(', ')}`);
    // one request per Certificate (revisionHistoryLimit 1) and no Event older than the TTL
    assert.ok((await backend.list(CertificateRequest, { namespace: 'default' })).items.length <= COUNT + 1);
    assert.ok((await backend.list(EventType, { namespace: 'default' })).items.length <= 10 * COUNT);
    assert.ok(largest <= 1.5 * first, `state.db after the first issuance ${(first / 1024).toFixed(0)} KiB, then ${sizes.join(', ')}`);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
