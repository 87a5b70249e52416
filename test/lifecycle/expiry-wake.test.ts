// Readiness looks again at a certificate's notAfter even when nothing is written in between
// (issue 17: readiness no longer wakes for every status write, so the write that records a new
// notAfter must still wake it to schedule that look).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, condition, withCA } from './harness.ts';
import { Issuer } from '../../src/api/resources.ts';

const S = 1000;

test('a certificate whose renewal never completes turns Ready=False Expired at its notAfter', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('app', { dnsNames: ['app.example.test'], duration: '1h' }));
    await lc.settle();
    assert.equal(condition(await lc.certificate('app'), 'Ready')?.status, 'True');
    const notAfter = Date.parse((await lc.certificate('app')).status!.notAfter!);
    // the issuer goes: the renewal at 2/3 of the duration waits for it for good
    await lc.store.delete(Issuer, 'default', 'ca');
    await lc.settle();
    await lc.advance(notAfter - lc.clock.now().getTime() - S);
    assert.equal(condition(await lc.certificate('app'), 'Issuing')?.status, 'True', 'the renewal started and is stuck');
    assert.equal(condition(await lc.certificate('app'), 'Ready')?.status, 'True', 'still valid one second before notAfter');
    await lc.advance(3 * S);
    const ready = condition(await lc.certificate('app'), 'Ready');
    assert.deepEqual([ready?.status, ready?.reason], ['False', 'Expired']);
  } finally {
    await lc.stop();
  }
});
