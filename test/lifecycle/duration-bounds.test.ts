// Issue 12, finding 11 where admission does not run: a stored Certificate whose duration no
// certificate can have fails its issuance visibly (with the reason, then the trigger's
// backoff) instead of leaving Issuing=True and an error loop in the logs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition } from './harness.ts';
import { Certificate } from '../../src/api/resources.ts';

test('a stored Certificate with duration 99999999999999h is a failed issuance naming the duration', async () => {
  // no admission: the case this file is about (a cluster with only the CRDs installed)
  const lc = await startLifecycle({ admission: false });
  try {
    await withCA(lc);
    await lc.store.create(Certificate, certificate('long', { dnsNames: ['long.example.test'], duration: '99999999999999h' }));
    await lc.settle();
    const crt = await lc.certificate('long');
    const issuing = crt.status?.conditions?.find((c) => c.type === 'Issuing');
    assert.equal(issuing?.status, 'False', JSON.stringify(crt.status));
    assert.match(issuing?.message ?? '', /invalid duration "99999999999999h": out of range/);
    assert.equal(crt.status?.issuanceAttempts, 1);
    assert.equal(condition(crt, 'Ready')?.status, 'False');
  } finally {
    await lc.stop();
  }
});
