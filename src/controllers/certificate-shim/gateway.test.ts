import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import { decideGatewayShim, gatewaySource, type GatewayListener, type GatewayObj } from './gateway.ts';
import { decideIngressShim, type ShimAction } from './shim.ts';

const UID = 'gw-uid-1';
const issuerAnn = { 'cert-manager.io/issuer': 'ca' };

function gateway(listeners: GatewayListener[], annotations: Record<string, string> = issuerAnn, extra: Partial<GatewayObj['metadata']> = {}): GatewayObj {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'apps', uid: UID, annotations, ...extra },
    spec: { gatewayClassName: 'test', listeners },
  };
}

const https = (name: string, hostname: string | undefined, secret: string, tls: Partial<NonNullable<GatewayListener['tls']>> = {}): GatewayListener => ({
  name, hostname, port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', group: '', name: secret }], ...tls },
});

const created = (actions: ShimAction[]): CertificateObj[] => actions.flatMap((a) => (a.kind === 'create' ? [a.certificate] : []));

test('listeners → entries: which listeners give a Certificate, which are skipped silently, which with a Warning', () => {
  const cases: { what: string; listener: GatewayListener; entries: { secretName: string; hosts: string[] }[]; warning?: RegExp }[] = [
    { what: 'Terminate', listener: https('a', 'a.example.test', 'a-tls'), entries: [{ secretName: 'a-tls', hosts: ['a.example.test'] }] },
    { what: 'mode unset (Gateway API default Terminate)', listener: https('a', 'a.example.test', 'a-tls', { mode: undefined }), entries: [{ secretName: 'a-tls', hosts: ['a.example.test'] }] },
    { what: 'TLS protocol', listener: { ...https('a', 'a.example.test', 'a-tls'), protocol: 'TLS' }, entries: [{ secretName: 'a-tls', hosts: ['a.example.test'] }] },
    { what: 'group "core", kind unset', listener: https('a', 'a.example.test', 'a-tls', { certificateRefs: [{ group: 'core', name: 'a-tls' }] }), entries: [{ secretName: 'a-tls', hosts: ['a.example.test'] }] },
    { what: 'same-namespace ref spelled out', listener: https('a', 'a.example.test', 'a-tls', { certificateRefs: [{ name: 'a-tls', namespace: 'apps' }] }), entries: [{ secretName: 'a-tls', hosts: ['a.example.test'] }] },
    { what: 'Passthrough', listener: https('a', 'a.example.test', 'a-tls', { mode: 'Passthrough' }), entries: [] },
    { what: 'plain HTTP listener', listener: { name: 'http', hostname: 'a.example.test', port: 80, protocol: 'HTTP' }, entries: [] },
    { what: 'hostname missing', listener: https('a', undefined, 'a-tls'), entries: [], warning: /spec\.listeners\[0\]\.hostname: Required value/ },
    { what: 'cross-namespace ref', listener: https('a', 'a.example.test', 'a-tls', { certificateRefs: [{ kind: 'Secret', name: 'a-tls', namespace: 'other' }] }), entries: [], warning: /certificateRef\[0\]\.namespace: Invalid value: "other": cross-namespace/ },
    { what: 'non-Secret kind', listener: https('a', 'a.example.test', 'a-tls', { certificateRefs: [{ kind: 'ConfigMap', name: 'a-tls' }] }), entries: [], warning: /certificateRef\[0\]\.kind: Unsupported value: "ConfigMap"/ },
    { what: 'non-core group', listener: https('a', 'a.example.test', 'a-tls', { certificateRefs: [{ group: 'example.io', kind: 'Secret', name: 'a-tls' }] }), entries: [], warning: /certificateRef\[0\]\.group: Unsupported value: "example.io"/ },
    { what: 'no certificateRefs', listener: https('a', 'a.example.test', 'a-tls', { certificateRefs: [] }), entries: [], warning: /listener has no certificateRefs/ },
    { what: 'no tls block', listener: { name: 'a', hostname: 'a.example.test', port: 443, protocol: 'HTTPS' }, entries: [], warning: /spec\.listeners\[0\]\.tls: Required value/ },
  ];
  for (const c of cases) {
    const source = gatewaySource(gateway([c.listener]));
    assert.deepEqual(source.entries, c.entries, c.what);
    if (c.warning) {
      assert.equal(source.skipped.length, 1, c.what);
      assert.equal(source.skipped[0].type, 'Warning');
      assert.equal(source.skipped[0].reason, 'BadConfig');
      assert.match(source.skipped[0].message, /^Skipped a listener block: /, c.what);
      assert.match(source.skipped[0].message, c.warning, c.what);
    } else {
      assert.deepEqual(source.skipped, [], c.what);
    }
  }
});

test('listeners sharing a certificateRef merge into one entry; a listener with two refs feeds both', () => {
  const source = gatewaySource(gateway([
    https('a', 'a.example.test', 'shared-tls'),
    https('b', 'b.example.test', 'own-tls'),
    https('c', 'c.example.test', 'shared-tls'),
    https('d', 'd.example.test', 'x', { certificateRefs: [{ name: 'rsa-tls' }, { name: 'shared-tls' }] }),
    https('e', 'a.example.test', 'shared-tls'),
  ]));
  assert.deepEqual(source.entries, [
    { secretName: 'shared-tls', hosts: ['a.example.test', 'c.example.test', 'd.example.test', 'a.example.test'] },
    { secretName: 'own-tls', hosts: ['b.example.test'] },
    { secretName: 'rsa-tls', hosts: ['d.example.test'] },
  ]);
  // the duplicate hostname counts once in the Certificate
  const certs = created(decideGatewayShim(gateway([https('a', 'a.example.test', 'shared-tls'), https('e', 'a.example.test', 'shared-tls'), https('c', 'c.example.test', 'shared-tls')]), []).actions);
  assert.deepEqual(certs.map((c) => c.spec.dnsNames), [['a.example.test', 'c.example.test']]);
});

test('cert-manager.io/ignore-tls-listeners leaves the named listeners out', () => {
  const source = gatewaySource(gateway([https('a', 'a.example.test', 'a-tls'), https('b', 'b.example.test', 'b-tls'), https('c', 'c.example.test', 'c-tls')],
    { ...issuerAnn, 'cert-manager.io/ignore-tls-listeners': 'a, c' }));
  assert.deepEqual(source.entries.map((e) => e.secretName), ['b-tls']);
});

test('a Gateway gets Certificates owned by it, with the issuer and certificate annotations the ingress-shim reads', () => {
  const d = decideGatewayShim(gateway([https('a', 'a.example.test', 'a-tls'), https('w', '*.example.test', 'w-tls'), { name: 'http', port: 80, protocol: 'HTTP' }],
    { 'cert-manager.io/cluster-issuer': 'ca', 'cert-manager.io/duration': '720h', 'cert-manager.io/private-key-algorithm': 'ECDSA' }, { labels: { team: 'edge' } }), []);
  assert.deepEqual(d.events, []);
  const [a, w] = created(d.actions);
  assert.equal(a.metadata.name, 'a-tls');
  assert.equal(a.metadata.namespace, 'apps');
  assert.deepEqual(a.metadata.ownerReferences, [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'gw', uid: UID, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(a.metadata.labels, { team: 'edge' });
  assert.deepEqual(a.spec.issuerRef, { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.equal(a.spec.duration, '720h0m0s');
  assert.equal(a.spec.privateKey?.algorithm, 'ECDSA');
  assert.deepEqual(a.spec.dnsNames, ['a.example.test']);
  assert.deepEqual(w.spec.dnsNames, ['*.example.test']);
});

test('not annotated, or only kubernetes.io/tls-acme (Ingress-only): nothing; a bad annotation: a Warning and nothing', () => {
  const listeners = [https('a', 'a.example.test', 'a-tls')];
  const defaults = { defaultIssuerName: 'le', defaultIssuerKind: 'ClusterIssuer' };
  assert.deepEqual(decideGatewayShim(gateway(listeners, {}), [], defaults), { actions: [], events: [] });
  assert.deepEqual(decideGatewayShim(gateway(listeners, { 'kubernetes.io/tls-acme': 'true' }), [], defaults), { actions: [], events: [] });
  const bad = decideGatewayShim(gateway(listeners, { ...issuerAnn, 'cert-manager.io/renew-before': 'soon' }), []);
  assert.deepEqual(bad.actions, []);
  assert.match(bad.events[0].message, /cert-manager\.io\/renew-before/);
});

test('a listener skipped for bad configuration keeps its Certificate; a certificateRef removed deletes it; another owner\'s Certificate stays', () => {
  const both = gateway([https('a', 'a.example.test', 'a-tls'), https('b', 'b.example.test', 'b-tls')]);
  const [a, b] = created(decideGatewayShim(both, []).actions).map((c) => ({ ...c, metadata: { ...c.metadata, resourceVersion: '3' } }));
  assert.deepEqual(decideGatewayShim(both, [a, b]), { actions: [], events: [] });

  // b's hostname went missing: skipped with a Warning, but the Secret is still named, so not deleted
  const broken = decideGatewayShim(gateway([https('a', 'a.example.test', 'a-tls'), https('b', undefined, 'b-tls')]), [a, b]);
  assert.deepEqual(broken.actions, []);
  assert.match(broken.events[0].message, /hostname: Required value/);

  assert.deepEqual(decideGatewayShim(gateway([https('a', 'a.example.test', 'a-tls')]), [a, b]).actions, [{ kind: 'delete', name: 'b-tls' }]);

  // an Ingress's Certificate for the same secret name is not the Gateway's to touch
  const ingressCert = created(decideIngressShim({
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'apps', uid: 'ing-uid', annotations: issuerAnn },
    spec: { tls: [{ hosts: ['other.example.test'], secretName: 'a-tls' }] },
  }, []).actions)[0];
  const foreign = decideGatewayShim(gateway([https('a', 'a.example.test', 'a-tls')]), [ingressCert]);
  assert.deepEqual(foreign.actions, []);
  assert.match(foreign.events[0].message, /"a-tls" already exists and is not controlled by this Gateway/);
});

test('a Gateway of the wrong shape gives BadConfig Warnings, never an exception retried for ever', () => {
  const bad = (listeners: unknown) => decideGatewayShim({ ...gateway([]), spec: { gatewayClassName: 'test', listeners } } as unknown as GatewayObj, []);
  const notAList = bad('notalist');
  assert.deepEqual(notAList.actions, []);
  assert.match(notAList.events[0]?.message ?? '', /spec\.listeners: Invalid value: must be a list of listeners/);
  const mixed = bad([null, 1, { protocol: 'HTTPS', hostname: 'a.example.test', tls: 'x' }, { protocol: 'HTTPS', hostname: 'b.example.test', tls: { certificateRefs: [null, { name: 5 }] } }, https('ok', 'ok.example.test', 'ok-tls')]);
  assert.deepEqual(created(mixed.actions).map((c) => c.metadata.name), ['ok-tls']);
  assert.equal(mixed.events.length, 4, JSON.stringify(mixed.events));
  assert.ok(mixed.events.every((e) => e.type === 'Warning' && e.reason === 'BadConfig'));
});
