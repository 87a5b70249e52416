// Issue 12, finding 7 where admission does not run (a cluster with only the CRDs installed, or an
// object stored before validation existed): a dnsName with a newline, NUL, quote or `$()` is
// never signed; the Certificate shows a failed issuance and backs off, its Secret is never written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition } from './harness.ts';
import { Certificate } from '../../src/api/resources.ts';

for (const bad of ['a\nb.example.test', 'a\u0000b.example.test', '$(reboot).example.test', 'a"b.example.test']) {
  test(`a stored Certificate with dnsName ${JSON.stringify(bad)} is not signed`, async () => {
    // no admission: the case this file is about (a cluster with only the CRDs installed)
    const lc = await startLifecycle({ admission: false });
    try {
      await withCA(lc);
      await lc.store.create(Certificate, certificate('unsafe', { dnsNames: ['ok.example.test', bad] }));
      await lc.settle();
      const crt = await lc.certificate('unsafe');
      const issuing = crt.status?.conditions?.find((c) => c.type === 'Issuing');
      assert.equal(issuing?.status, 'False');
      assert.match(issuing?.message ?? '', /Failed to generate CSR: dnsName .* may only contain letters, digits/);
      assert.equal(crt.status?.issuanceAttempts, 1);
      assert.equal(condition(crt, 'Ready')?.status, 'False');
      assert.equal(await lc.secret('unsafe-tls'), undefined, 'nothing was signed');
      // retried after the trigger's backoff (1h), failing the same way
      await lc.advance(3_600_000);
      assert.equal((await lc.certificate('unsafe')).status?.issuanceAttempts, 2);
      // fixing the spec retries at once, without waiting out the 2h backoff
      const current = await lc.certificate('unsafe');
      await lc.store.update(Certificate, { ...current, spec: { ...current.spec, dnsNames: ['ok.example.test'] } });
      await lc.settle();
      assert.equal(condition(await lc.certificate('unsafe'), 'Ready')?.status, 'True');
    } finally {
      await lc.stop();
    }
  });
}
