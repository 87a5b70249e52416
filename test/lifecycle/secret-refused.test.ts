// A Secret the API refuses (its alt-names annotation past kube's 256 KiB of annotations, for a
// Certificate of 15,000 names) left only a log line: the Certificate said "Secret does not exist"
// for ever. The refusal is now an Event on the Certificate naming the Secret and the API's reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate } from './harness.ts';
import { EventType } from '../../src/api/resources.ts';
import type { KubeObject } from '../../src/api/meta.ts';

test('a Secret the API refuses to store is told on the Certificate as a Warning naming the reason', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    const dnsNames = Array.from({ length: 15_000 }, (_, i) => `host-${i}.example.test`);
    await lc.apply(certificate('many', { dnsNames, privateKey: { algorithm: 'ECDSA' } }));
    await lc.settle();
    const events = (await lc.store.list<KubeObject & { involvedObject?: { name?: string; kind?: string }; reason?: string; type?: string; message?: string }>(EventType, { namespace: 'default' })).items
      .filter((e) => e.involvedObject?.kind === 'Certificate' && e.involvedObject.name === 'many' && e.reason === 'SecretNotWritten');
    assert.equal(events.length, 1, 'one Event, counted, not one per retry');
    assert.equal(events[0].type, 'Warning');
    assert.match(events[0].message ?? '', /^Secret "many-tls" could not be written: .*metadata\.annotations: Too long: must have at most 262144 bytes/);
    assert.equal(await lc.secret('many-tls'), undefined);
  } finally {
    await lc.stop();
  }
});
