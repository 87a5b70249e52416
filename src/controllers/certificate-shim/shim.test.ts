import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import { decideIngressShim, type IngressObj, type IngressShimOptions, type ShimAction } from './shim.ts';
import { splitQuotedList } from './annotations.ts';

const UID = 'ing-uid-1';

function ingress(annotations: Record<string, string>, tls: IngressObj['spec'] extends infer S ? S extends { tls?: infer T } ? T : never : never, extra: Partial<IngressObj['metadata']> = {}): IngressObj {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name: 'web', namespace: 'apps', uid: UID, annotations, ...extra },
    spec: { tls },
  };
}

const issuerAnn = { 'cert-manager.io/cluster-issuer': 'ca' };
const oneTLS = [{ hosts: ['a.example.test'], secretName: 'a-tls' }];

function created(actions: ShimAction[]): CertificateObj[] {
  return actions.flatMap((a) => (a.kind === 'create' ? [a.certificate] : []));
}

function only(ing: IngressObj, certs: CertificateObj[] = [], options: IngressShimOptions = {}): CertificateObj {
  const d = decideIngressShim(ing, certs, options);
  assert.deepEqual(d.events, []);
  assert.equal(d.actions.length, 1, JSON.stringify(d.actions));
  const a = d.actions[0];
  assert.ok(a.kind === 'create' || a.kind === 'update');
  return a.certificate;
}

test('two tls entries give two Certificates named after their secrets, owned by the Ingress, with the cluster issuer', () => {
  const d = decideIngressShim(ingress(issuerAnn, [
    { hosts: ['a.example.test', 'www.a.example.test'], secretName: 'a-tls' },
    { hosts: ['b.example.test', '10.0.0.1'], secretName: 'b-tls' },
  ], { labels: { team: 'web', 'applyset.kubernetes.io/part-of': 'x' } }), []);
  assert.deepEqual(d.events, []);
  const certs = created(d.actions);
  assert.deepEqual(certs.map((c) => c.metadata.name), ['a-tls', 'b-tls']);
  const [a, b] = certs;
  assert.equal(a.metadata.namespace, 'apps');
  assert.deepEqual(a.spec.dnsNames, ['a.example.test', 'www.a.example.test']);
  assert.equal(a.spec.secretName, 'a-tls');
  assert.deepEqual(a.spec.issuerRef, { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.deepEqual(a.spec.usages, ['digital signature', 'key encipherment']);
  assert.deepEqual(a.metadata.ownerReferences, [{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'web', uid: UID, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(a.metadata.labels, { team: 'web' }, 'labels copied, applyset label dropped');
  // an IP host becomes an IP SAN
  assert.deepEqual(b.spec.dnsNames, ['b.example.test']);
  assert.deepEqual(b.spec.ipAddresses, ['10.0.0.1']);
});

test('issuer annotations: namespaced issuer, external issuer kind and group, default issuer for tls-acme', () => {
  assert.deepEqual(only(ingress({ 'cert-manager.io/issuer': 'local' }, oneTLS)).spec.issuerRef, { name: 'local', kind: 'Issuer', group: 'cert-manager.io' });
  assert.deepEqual(only(ingress({ 'cert-manager.io/issuer': 'vault', 'cert-manager.io/issuer-kind': 'VaultIssuer', 'cert-manager.io/issuer-group': 'example.io' }, oneTLS)).spec.issuerRef,
    { name: 'vault', kind: 'VaultIssuer', group: 'example.io' });
  const defaults = { defaultIssuerName: 'le', defaultIssuerKind: 'ClusterIssuer', defaultIssuerGroup: 'cert-manager.io' };
  assert.deepEqual(only(ingress({ 'kubernetes.io/tls-acme': 'true' }, oneTLS), [], defaults).spec.issuerRef, { name: 'le', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  // tls-acme without a default issuer: told why, nothing made
  const d = decideIngressShim(ingress({ 'kubernetes.io/tls-acme': 'true' }, oneTLS), []);
  assert.deepEqual(d.actions, []);
  assert.match(d.events[0].message, /failed to determine issuer name/);
  // not annotated (or tls-acme "false"): not the shim's business
  assert.deepEqual(decideIngressShim(ingress({}, oneTLS), [], defaults), { actions: [], events: [] });
  assert.deepEqual(decideIngressShim(ingress({ 'kubernetes.io/tls-acme': 'false' }, oneTLS), [], defaults), { actions: [], events: [] });
  // conflicting issuer annotations
  const both = decideIngressShim(ingress({ 'cert-manager.io/issuer': 'a', 'cert-manager.io/cluster-issuer': 'b' }, oneTLS), []);
  assert.deepEqual(both.actions, []);
  assert.equal(both.events[0].reason, 'BadConfig');
  assert.match(both.events[0].message, /both "cert-manager.io\/issuer" and "cert-manager.io\/cluster-issuer" may not be set/);
});

test('each certificate annotation maps onto its spec field', () => {
  const crt = only(ingress({
    ...issuerAnn,
    'cert-manager.io/common-name': 'a.example.test',
    'cert-manager.io/duration': '2160h',
    'cert-manager.io/renew-before': '360h',
    'cert-manager.io/usages': 'digital signature, key encipherment,server auth',
    'cert-manager.io/revision-history-limit': '3',
    'cert-manager.io/private-key-algorithm': 'ECDSA',
    'cert-manager.io/private-key-encoding': 'PKCS8',
    'cert-manager.io/private-key-size': '384',
    'cert-manager.io/private-key-rotation-policy': 'Never',
    'cert-manager.io/subject-organizations': '"Acme, Inc",Example',
    'cert-manager.io/subject-organizationalunits': 'Web',
    'cert-manager.io/subject-countries': 'NL',
    'cert-manager.io/subject-provinces': 'NH',
    'cert-manager.io/subject-localities': 'Amsterdam',
    'cert-manager.io/subject-streetaddresses': '"1 Main St, Suite 2"',
    'cert-manager.io/subject-postalcodes': '1000AA',
    'cert-manager.io/subject-serialnumber': '42',
    'cert-manager.io/email-sans': 'ops@example.test,web@example.test',
    'cert-manager.io/ip-sans': '10.0.0.2,2001:db8::1',
    'cert-manager.io/uri-sans': 'spiffe://example.test/web',
    'cert-manager.io/alt-names': 'alt.example.test,a.example.test',
    'cert-manager.io/secret-template': '{"labels":{"tier":"web"},"annotations":{"x.example/y":"z"}}',
  }, [{ hosts: ['a.example.test', '2001:0db8::1'], secretName: 'a-tls' }]));
  assert.deepEqual(crt.spec, {
    secretName: 'a-tls',
    issuerRef: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    commonName: 'a.example.test',
    dnsNames: ['a.example.test', 'alt.example.test'],
    ipAddresses: ['2001:0db8::1', '10.0.0.2'],
    uris: ['spiffe://example.test/web'],
    emailAddresses: ['ops@example.test', 'web@example.test'],
    subject: {
      organizations: ['Acme, Inc', 'Example'], organizationalUnits: ['Web'], countries: ['NL'], provinces: ['NH'],
      localities: ['Amsterdam'], streetAddresses: ['1 Main St, Suite 2'], postalCodes: ['1000AA'], serialNumber: '42',
    },
    duration: '2160h0m0s',
    renewBefore: '360h0m0s',
    usages: ['digital signature', 'key encipherment', 'server auth'],
    revisionHistoryLimit: 3,
    privateKey: { algorithm: 'ECDSA', encoding: 'PKCS8', size: 384, rotationPolicy: 'Never' },
    secretTemplate: { annotations: { 'x.example/y': 'z' }, labels: { tier: 'web' } },
  });
  assert.equal(only(ingress({ ...issuerAnn, 'cert-manager.io/renew-before-percentage': '25' }, oneTLS)).spec.renewBeforePercentage, 25);
});

test('acme annotations: edit-in-place names the Ingress for the HTTP-01 solver; ingress class overrides pass through', () => {
  const crt = only(ingress({
    ...issuerAnn, 'acme.cert-manager.io/http01-edit-in-place': 'true',
    'acme.cert-manager.io/http01-ingress-class': 'traefik', 'acme.cert-manager.io/http01-ingress-ingressclassname': 'nginx',
  }, oneTLS));
  assert.deepEqual(crt.metadata.annotations, {
    'acme.cert-manager.io/http01-override-ingress-name': 'web',
    'cert-manager.io/issue-temporary-certificate': 'true',
    'acme.cert-manager.io/http01-override-ingress-class': 'traefik',
    'acme.cert-manager.io/http01-override-ingress-ingressclassname': 'nginx',
  });
  assert.equal(only(ingress({ ...issuerAnn, 'acme.cert-manager.io/http01-edit-in-place': 'false' }, oneTLS)).metadata.annotations, undefined);
});

test('a bad annotation value gives a BadConfig Warning naming the annotation, and no Certificate', () => {
  const cases: [string, string][] = [
    ['cert-manager.io/duration', 'abc'],
    ['cert-manager.io/renew-before', '10 days'],
    ['cert-manager.io/renew-before-percentage', 'half'],
    ['cert-manager.io/usages', 'digital signature,flying'],
    ['cert-manager.io/revision-history-limit', '0'],
    ['cert-manager.io/private-key-algorithm', 'DSA'],
    ['cert-manager.io/private-key-encoding', 'PEM'],
    ['cert-manager.io/private-key-size', '1024'],
    ['cert-manager.io/private-key-rotation-policy', 'Sometimes'],
    ['cert-manager.io/ip-sans', 'not-an-ip'],
    ['cert-manager.io/uri-sans', 'no scheme here'],
    ['cert-manager.io/subject-organizations', '"unterminated'],
    ['cert-manager.io/secret-template', '{"annotations":{"cert-manager.io/x":"y"}}'],
    // parses, but the API would refuse it: duration below the 1h minimum
    ['cert-manager.io/duration', '5m'],
    ['cert-manager.io/email-sans', 'not an email'],
  ];
  for (const [key, value] of cases) {
    const d = decideIngressShim(ingress({ ...issuerAnn, [key]: value }, oneTLS), []);
    assert.deepEqual(d.actions, [], `${key}=${value}: no writes`);
    assert.equal(d.events.length, 1, `${key}=${value}`);
    assert.equal(d.events[0].type, 'Warning');
    assert.equal(d.events[0].reason, 'BadConfig');
    assert.ok(d.events[0].message.includes(key), `${key}=${value}: ${d.events[0].message}`);
  }
  // ECDSA sizes are checked against the algorithm the annotations choose
  const ecdsa = decideIngressShim(ingress({ ...issuerAnn, 'cert-manager.io/private-key-algorithm': 'ECDSA', 'cert-manager.io/private-key-size': '2048' }, oneTLS), []);
  assert.match(ecdsa.events[0].message, /private-key-size.*ECDSA/);
});

test('tls entries without secretName or hosts are skipped with a Warning; the others proceed', () => {
  const d = decideIngressShim(ingress(issuerAnn, [
    { hosts: ['a.example.test'] },
    { hosts: [], secretName: 'empty-tls' },
    { hosts: ['b.example.test'], secretName: 'b-tls' },
  ]), []);
  assert.deepEqual(created(d.actions).map((c) => c.metadata.name), ['b-tls']);
  assert.deepEqual(d.events.map((e) => [e.type, e.reason]), [['Warning', 'BadConfig'], ['Warning', 'BadConfig']]);
  assert.match(d.events[0].message, /spec\.tls\[0\]\.secretName: Required value/);
  assert.match(d.events[1].message, /spec\.tls\[1\]\.hosts: Required value/);
});

test('two tls entries with one secretName: Warning, nothing written', () => {
  const d = decideIngressShim(ingress(issuerAnn, [{ hosts: ['a.example.test'], secretName: 'same' }, { hosts: ['b.example.test'], secretName: 'same' }]), []);
  assert.deepEqual(d.actions, []);
  assert.match(d.events[0].message, /"same" must only appear in a single TLS entry/);
});

function existing(crt: CertificateObj, patch: Partial<CertificateObj['spec']> = {}, meta: Partial<CertificateObj['metadata']> = {}): CertificateObj {
  return { ...crt, metadata: { ...crt.metadata, resourceVersion: '7', uid: 'crt-uid', ...meta }, spec: { ...crt.spec, ...patch } };
}

test('an owned Certificate already in line is left alone; a host added or an annotation changed updates its spec', () => {
  const ing = ingress(issuerAnn, [{ hosts: ['a.example.test'], secretName: 'a-tls' }]);
  const current = existing(only(ing), {}, { annotations: { 'someone.else/note': 'kept' } });
  assert.deepEqual(decideIngressShim(ing, [current]), { actions: [], events: [] });

  const grown = ingress({ ...issuerAnn, 'cert-manager.io/duration': '720h' }, [{ hosts: ['a.example.test', 'new.example.test'], secretName: 'a-tls' }]);
  // fields the shim does not manage survive the update
  const withKeystore = existing(current, { keystores: { pkcs12: { create: true, password: 'x' } } });
  const d = decideIngressShim(grown, [withKeystore]);
  assert.equal(d.actions.length, 1);
  const a = d.actions[0];
  assert.equal(a.kind, 'update');
  assert.ok(a.kind === 'update');
  assert.deepEqual(a.certificate.spec.dnsNames, ['a.example.test', 'new.example.test']);
  assert.equal(a.certificate.spec.duration, '720h0m0s');
  assert.deepEqual(a.certificate.spec.keystores, { pkcs12: { create: true, password: 'x' } });
  assert.equal(a.certificate.metadata.resourceVersion, '7', 'written back at the version read');
  assert.deepEqual(a.certificate.metadata.annotations, { 'someone.else/note': 'kept' });

  // removing an annotation takes its field away again
  const shrunk = decideIngressShim(ing, [existing(current, { duration: '720h0m0s' })]);
  assert.ok(shrunk.actions[0].kind === 'update');
  assert.equal(shrunk.actions[0].certificate.spec.duration, undefined);
});

test('a same-named Certificate the Ingress does not control: Warning, left alone, never deleted', () => {
  const ing = ingress(issuerAnn, oneTLS);
  const foreign = existing(only(ing), { dnsNames: ['other.example.test'] }, { ownerReferences: undefined });
  const d = decideIngressShim(ing, [foreign]);
  assert.deepEqual(d.actions, []);
  assert.equal(d.events[0].type, 'Warning');
  assert.match(d.events[0].message, /"a-tls" already exists and is not controlled by this Ingress/);
  const otherOwner = existing(only(ing), { dnsNames: ['other.example.test'] }, { ownerReferences: [{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'web', uid: 'an-older-web', controller: true }] });
  assert.deepEqual(decideIngressShim(ing, [otherOwner]).actions, []);
});

test('a tls entry removed: the Certificate it had is deleted; Certificates the Ingress does not control stay', () => {
  const before = ingress(issuerAnn, [{ hosts: ['a.example.test'], secretName: 'a-tls' }, { hosts: ['b.example.test'], secretName: 'b-tls' }]);
  const [a, b] = created(decideIngressShim(before, []).actions).map((c) => existing(c));
  const unrelated = existing(b, {}, { name: 'mine', ownerReferences: undefined });
  const after = ingress(issuerAnn, [{ hosts: ['a.example.test'], secretName: 'a-tls' }]);
  assert.deepEqual(decideIngressShim(after, [a, b, unrelated]), { actions: [{ kind: 'delete', name: 'b-tls' }], events: [] });
  // a bad annotation stops deletions too: nothing happens until the user fixes it
  const broken = ingress({ ...issuerAnn, 'cert-manager.io/duration': 'abc' }, [{ hosts: ['a.example.test'], secretName: 'a-tls' }]);
  assert.deepEqual(decideIngressShim(broken, [a, b]).actions, []);
});

test('an Ingress being deleted is left to the garbage collector', () => {
  const ing = ingress(issuerAnn, oneTLS, { deletionTimestamp: '2025-01-01T00:00:00Z' });
  assert.deepEqual(decideIngressShim(ing, []), { actions: [], events: [] });
});

test('splitQuotedList reads quoted fields as Go\'s encoding/csv does', () => {
  assert.deepEqual(splitQuotedList('a, b,"c, d","e ""q"""'), ['a', 'b', 'c, d', 'e "q"']);
  assert.throws(() => splitQuotedList('"open'));
});

test('an Ingress of the wrong shape (the embedded server stores what it is sent) gives BadConfig Warnings, never an exception retried for ever', () => {
  const bad = (tls: unknown) => decideIngressShim({ ...ingress(issuerAnn, []), spec: { tls } } as unknown as IngressObj, []);
  const notAList = bad('notalist');
  assert.deepEqual(notAList.actions, []);
  assert.match(notAList.events[0]?.message ?? '', /spec\.tls: Invalid value: must be a list of TLS blocks/);
  const mixed = bad([{ hosts: 'notalist', secretName: 'x-tls' }, null, 7, { hosts: [1, null], secretName: 5 }, { hosts: ['ok.example.test'], secretName: 'ok-tls' }]);
  assert.deepEqual(created(mixed.actions).map((c) => c.metadata.name), ['ok-tls']);
  assert.deepEqual(mixed.events.map((e) => e.message.match(/spec\.tls\[\d\][^:]*/)?.[0]), ['spec.tls[0].hosts', 'spec.tls[1]', 'spec.tls[2]', 'spec.tls[3].hosts']);
  assert.ok(mixed.events.every((e) => e.type === 'Warning' && e.reason === 'BadConfig'));
});
