// Issue 15, where admission does not run (a cluster with only the CRDs installed, or an object
// stored before validation existed): a Certificate with no identity (no commonName, none from a
// literalSubject, no SAN) is never requested or signed. As cert-manager's request manager does
// with pki.GenerateCSR's error, the Certificate records a failed issuance with the reason; it
// backs off like any failed issuance, and a fixed spec issues at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition } from './harness.ts';
import { Certificate, CertificateRequest } from '../../src/api/resources.ts';

for (const [what, spec] of [
  ['no names at all', { subject: { organizations: ['Example'] } }],
  ['a literalSubject without CN', { literalSubject: 'O=Example,C=DE' }],
] as [string, Record<string, unknown>][]) {
  test(`a stored Certificate with ${what} fails issuance with the reason, and is never signed`, async () => {
    const lc = await startLifecycle({ admission: false });
    try {
      await withCA(lc);
      await lc.store.create(Certificate, certificate('anonymous', spec));
      await lc.settle();
      const crt = await lc.certificate('anonymous');
      const issuing = crt.status?.conditions?.find((c) => c.type === 'Issuing');
      assert.equal(issuing?.status, 'False');
      assert.equal(issuing?.reason, 'RequestFailed');
      assert.match(issuing?.message ?? '', /Failed to generate CSR: no identity to request: at least one of commonName \(from the commonName field or from a literalSubject\), dnsNames, uris, emailAddresses, ipAddresses or otherNames must be set/);
      assert.equal(crt.status?.issuanceAttempts, 1);
      assert.equal(condition(crt, 'Ready')?.status, 'False');
      assert.equal(await lc.secret('anonymous-tls'), undefined, 'nothing was signed');
      const requests = await lc.store.list(CertificateRequest, { namespace: 'default' });
      assert.deepEqual(requests.items.filter((r) => r.metadata.name?.startsWith('anonymous')), [], 'no request was made');
      // retried after the trigger's backoff (1h), failing the same way, not on every reconcile
      await lc.advance(3_600_000);
      assert.equal((await lc.certificate('anonymous')).status?.issuanceAttempts, 2);
      // a spec with a name issues at once
      const current = await lc.certificate('anonymous');
      await lc.store.update(Certificate, { ...current, spec: { ...current.spec, dnsNames: ['ok.example.test'] } });
      await lc.settle();
      assert.equal(condition(await lc.certificate('anonymous'), 'Ready')?.status, 'True');
    } finally {
      await lc.stop();
    }
  });
}
