// A Vault (or Venafi) Issuer is accepted by the schema but certsmith does not sign for it
// (issue 15): the Issuer says so, the request fails with the same message, and the Certificate
// fails and backs off as for any failed issuance instead of waiting for approval for ever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, certificate, condition, Issuer } from './harness.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { failedAttemptsOf } from '../../src/shared/backoff.ts';

test('a Vault Issuer is Ready=False UnsupportedIssuerType, its request fails, the Certificate backs off', async () => {
  const lc = await startLifecycle();
  try {
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'vault', namespace: 'default' },
      spec: { vault: { server: 'https://vault.example.test', path: 'pki/sign/web', auth: { tokenSecretRef: { name: 'vault-token', key: 'token' } } } },
    } as KubeObject);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], issuerRef: { name: 'vault', kind: 'Issuer' } }));
    await lc.settle();

    const issuer = await lc.store.get<KubeObject & { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }>(Issuer, 'default', 'vault');
    const ready = condition(issuer!, 'Ready') as { status: string; reason?: string; message?: string } | undefined;
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'UnsupportedIssuerType');
    assert.match(ready?.message ?? '', /certsmith does not implement the Vault issuer/);

    const [cr] = await lc.requests();
    assert.ok(cr, 'a request was made');
    const crReady = condition(cr, 'Ready') as { status: string; reason?: string; message?: string } | undefined;
    assert.equal(condition(cr, 'Approved')?.status, 'True', 'approved, not left waiting for an approver');
    assert.deepEqual([crReady?.status, crReady?.reason], ['False', 'Failed']);
    assert.equal(crReady?.message, ready?.message);

    const crt = await lc.certificate('web');
    assert.equal(condition(crt, 'Ready')?.status, 'False');
    assert.equal(condition(crt, 'Issuing')?.status, 'False', JSON.stringify(crt.status));
    assert.match((condition(crt, 'Issuing') as { message?: string }).message ?? '', /certsmith does not implement the Vault issuer/);
    assert.ok(crt.status?.lastFailureTime, 'lastFailureTime set: the Certificate backs off before a new request');
    assert.equal(failedAttemptsOf(crt.status), 1, 'one failed attempt counted');
  } finally {
    await lc.stop();
  }
});
