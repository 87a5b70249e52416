import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { Certificate } from '../api/resources.ts';
import type { Certificate as CertificateObj } from '../api/types.ts';
import { namedCertificates, triggerRenewal } from './renew.ts';

// `renew a nope c` renewed a, failed on nope and never tried c, saying nothing of a or c; cmctl
// looks every name up first, so a script knows nothing was renewed.
test('renew with a name that does not exist renews none of the names', async () => {
  const store = openSqliteStore({ path: ':memory:' });
  try {
    for (const name of ['a', 'c']) {
      await store.create<CertificateObj>(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' }, spec: { secretName: `${name}-tls`, dnsNames: [`${name}.test`], issuerRef: { name: 'ca' } } } as CertificateObj);
    }
    await assert.rejects(async () => {
      for (const t of await namedCertificates(store, 'default', ['a', 'nope', 'c'])) await triggerRenewal(store, t.namespace, t.name);
    }, /certificate default\/nope not found; no Certificate was renewed/);
    for (const name of ['a', 'c']) {
      const crt = await store.get<CertificateObj>(Certificate, 'default', name);
      assert.equal(crt?.status?.conditions?.some((c) => c.type === 'Issuing'), undefined, `${name} untouched`);
    }
    assert.deepEqual(await namedCertificates(store, 'default', ['a', 'c']), [{ namespace: 'default', name: 'a' }, { namespace: 'default', name: 'c' }]);
  } finally {
    await store.close();
  }
});
