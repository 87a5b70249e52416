// The dashboard's live view sends each page the whole list once, then only what changed: with
// 1,000 certificates issuing, a whole list per burst was about 2.5 MB a second per open page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import { realClock } from '../../runtime/clock.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { defaultBackoff } from '../../shared/backoff.ts';
import { Certificate as CertificateType } from '../../api/resources.ts';
import type { Certificate } from '../../api/types.ts';
import type { CertificateSummary } from '../model/certificate-view.ts';
import { LiveView, type StreamMessage } from './live-view.ts';

const certificate = (name: string): Certificate => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
  spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } },
} as Certificate);

/** Messages as one page receives them, with a way to wait for the next. */
function recorder() {
  const messages: StreamMessage[] = [];
  let wake: (() => void) | undefined;
  return {
    messages,
    push: (m: StreamMessage) => {
      messages.push(m);
      wake?.();
    },
    async next(count: number): Promise<StreamMessage> {
      const deadline = Date.now() + 10_000;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`message ${count} did not come; got ${JSON.stringify(messages.map((m) => m.event))}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
      }
      return messages[count - 1];
    },
  };
}

/** What a page holds after applying the messages it received, in the order the list is sent. */
function applied(messages: StreamMessage[]): { version: number; certificates: CertificateSummary[] } {
  let version = -1;
  const rows = new Map<string, CertificateSummary>();
  for (const m of messages) {
    if (m.event === 'snapshot') {
      rows.clear();
      for (const c of m.data.certificates) rows.set(`${c.namespace}/${c.name}`, c);
    } else {
      assert.equal(m.data.from, version, 'a change list continues from the version the page holds');
      for (const r of m.data.removed) rows.delete(`${r.namespace}/${r.name}`);
      for (const c of m.data.upserted) rows.set(`${c.namespace}/${c.name}`, c);
    }
    version = m.data.version;
  }
  return { version, certificates: [...rows.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}

test('a page gets the whole list once, then only the certificates that changed or went', async () => {
  const store = openSqliteStore({ path: ':memory:', clock: realClock });
  const view = new LiveView({ store, clock: realClock, logger: silentLogger, backoff: defaultBackoff, settleMs: 20 });
  try {
    for (let i = 0; i < 40; i++) await store.create(CertificateType, certificate(`c${String(i).padStart(2, '0')}`));
    await view.start();
    const page = recorder();
    const unsubscribe = view.subscribe(page.push);
    const first = await page.next(1);
    assert.equal(first.event, 'snapshot');
    assert.equal(first.data.certificates.length, 40);

    const c07 = (await store.get<Certificate>(CertificateType, 'default', 'c07'))!;
    await store.update(CertificateType, { ...c07, spec: { ...c07.spec, dnsNames: ['renamed.example.test'] } });
    const second = await page.next(2);
    assert.equal(second.event, 'changes');
    assert.equal(second.data.from, first.data.version);
    assert.deepEqual(second.data.upserted.map((c) => [c.name, c.names]), [['c07', ['renamed.example.test']]]);
    assert.deepEqual(second.data.removed, []);
    assert.ok(JSON.stringify(second).length * 10 < JSON.stringify(first).length, 'a change list carries the changed certificate, not the list');

    await store.delete(CertificateType, 'default', 'c12');
    await store.create(CertificateType, certificate('new'));
    await page.next(3);
    // a page that opens now starts from the whole list, and both pages hold the same
    const late = recorder();
    view.subscribe(late.push);
    const lateFirst = await late.next(1);
    assert.equal(lateFirst.event, 'snapshot');
    const [a, b] = [applied(page.messages), applied(late.messages)];
    assert.equal(a.certificates.length, 40);
    assert.ok(!a.certificates.some((c) => c.name === 'c12') && a.certificates.some((c) => c.name === 'new'));
    assert.deepEqual(a, b);
    unsubscribe();
  } finally {
    view.stop();
    await store.close();
  }
});

test('a page that subscribes before the lists are loaded gets its first whole list when they are', async () => {
  const store = openSqliteStore({ path: ':memory:', clock: realClock });
  const view = new LiveView({ store, clock: realClock, logger: silentLogger, backoff: defaultBackoff, settleMs: 20 });
  try {
    await store.create(CertificateType, certificate('only'));
    const page = recorder();
    view.subscribe(page.push);
    await view.start();
    const first = await page.next(1);
    assert.equal(first.event, 'snapshot');
    assert.deepEqual(first.data.certificates.map((c) => c.name), ['only']);
  } finally {
    view.stop();
    await store.close();
  }
});
