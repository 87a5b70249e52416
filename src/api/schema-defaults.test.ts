import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as R from './resources.ts';
import { applyDefaults, withStorageDefaults } from './defaults.ts';
import type { KubeObject } from './meta.ts';

const issuer = (solvers: unknown[]): KubeObject => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'ns' },
  spec: { acme: { server: 'https://127.0.0.1:14000/dir', privateKeySecretRef: { name: 'acct' }, solvers } },
});

test('the CRD defaults are applied on write as kube-apiserver applies them: parentRefs group and kind, imagePullSecrets name', () => {
  const input = issuer([
    { http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'gw' }, { name: 'other', kind: 'ListenerSet', group: '' }] } } },
    { http01: { ingress: { podTemplate: { spec: { imagePullSecrets: [{}] } } } } },
  ]);
  const before = structuredClone(input);
  const out = applyDefaults(R.Issuer, input) as any;
  assert.deepEqual(out.spec.acme.solvers[0].http01.gatewayHTTPRoute.parentRefs, [
    { name: 'gw', group: 'gateway.networking.k8s.io', kind: 'Gateway' },
    { name: 'other', kind: 'ListenerSet', group: '' },
  ]);
  assert.deepEqual(out.spec.acme.solvers[1].http01.ingress.podTemplate.spec.imagePullSecrets, [{ name: '' }]);
  assert.deepEqual(input, before, 'the input is not modified');
});

test('no default creates a parent that is absent, and kinds without schema defaults are unchanged', () => {
  const plain = issuer([{ http01: { gatewayHTTPRoute: { labels: { a: 'b' } } } }, { dns01: { rfc2136: { nameserver: '127.0.0.1' } } }]);
  assert.deepEqual(applyDefaults(R.Issuer, plain), plain);
  const cert: KubeObject = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'ns' }, spec: { secretName: 's', issuerRef: { name: 'i' } } };
  assert.deepEqual(applyDefaults(R.Certificate, cert), cert);
});

test('admission\'s defaulting copies only the way to a filled default and never modifies its input', () => {
  const cert: KubeObject = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'ns' }, spec: { secretName: 's', issuerRef: { name: 'i' } } };
  assert.equal(withStorageDefaults(R.Certificate, cert), cert, 'no default applies: the object itself');
  const input = issuer([{ http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'gw' }] } } }, { dns01: { rfc2136: { nameserver: '127.0.0.1' } } }]);
  const before = structuredClone(input);
  const out = withStorageDefaults(R.Issuer, input) as any;
  assert.deepEqual(out, applyDefaults(R.Issuer, input));
  assert.deepEqual(input, before, 'the input is not modified');
  const solvers = (o: unknown) => (o as any).spec.acme.solvers;
  assert.notEqual(solvers(out)[0], solvers(input)[0]);
  assert.equal(solvers(out)[1], solvers(input)[1], 'what no default touches is shared');
  assert.equal(out.metadata, input.metadata);
});
