// The CA issuer reads its CA Secret from the Secret cache when the cache holds all of it (a CA
// certsmith issued), not from the store: a store read commits the store's open batch of
// writes early (issue 17). A CA Secret made by someone else is cached as metadata only and is
// still read from the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import { realClock } from '../../runtime/clock.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { compose } from '../../composition/index.ts';
import { Certificate, resourceTypeFor, SecretType } from '../../api/resources.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { Store } from '../../store/store.ts';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import { caKeyPair } from '../testing/fixtures.ts';

async function issueWith(caSecret: 'issued' | 'imported'): Promise<number> {
  const stack = compose({ store: openSqliteStore({ path: ':memory:' }), clock: realClock, logger: silentLogger });
  let caSecretReads = 0;
  const view = (s: Store): Store => ({
    ...s,
    get: (t, ns, n) => { if (t.kind === 'Secret' && n === 'ca') caSecretReads++; return s.get(t, ns, n); },
  });
  const running = await stack.startControllers({ view, options: { metricsListen: '', healthListen: '' } });
  try {
    const apply = (o: KubeObject) => stack.store.create(resourceTypeFor(o.apiVersion, o.kind)!, o);
    if (caSecret === 'issued') {
      await apply({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} } });
      await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'ca', namespace: 't' }, spec: { isCA: true, commonName: 'ca', secretName: 'ca', privateKey: { algorithm: 'ECDSA' }, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } } });
    } else {
      // the fixture CA's validity is the fixtures' fixed date: the issuance fails, after signing
      const ca = await caKeyPair('ca');
      await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ca', namespace: 't' }, type: 'kubernetes.io/tls', data: { 'tls.crt': Buffer.from(ca.certPem).toString('base64'), 'tls.key': Buffer.from(ca.keyPem).toString('base64') } } as KubeObject);
    }
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 't' }, spec: { ca: { secretName: 'ca' } } });
    await running.manager.whenIdle({ timeoutMs: 60_000 });
    const before = caSecretReads;
    await apply({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'leaf', namespace: 't' }, spec: { secretName: 'leaf-tls', dnsNames: ['leaf.example.test'], issuerRef: { name: 'ca' } } });
    await running.manager.whenIdle({ timeoutMs: 60_000 });
    if (caSecret === 'issued') {
      const leaf = await stack.store.get<CertificateObj>(Certificate, 't', 'leaf');
      assert.ok(leaf?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), JSON.stringify(leaf?.status));
      assert.ok(await stack.store.get(SecretType, 't', 'leaf-tls'));
    }
    return caSecretReads - before;
  } finally {
    await stack.stop();
  }
}

test('a CA Secret certsmith issued is read from the cache when signing', async () => {
  assert.equal(await issueWith('issued'), 0);
});

test('a CA Secret made elsewhere (cached as metadata) is read from the store when signing', async () => {
  assert.ok(await issueWith('imported') >= 1);
});
