import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ACMESolver, Order } from '../../../api/types.ts';
import { requiredChallenges } from './order.ts';
import { withHTTP01Overrides } from './http01-overrides.ts';

const solver: ACMESolver = { http01: { ingress: { class: 'nginx', serviceType: 'ClusterIP' } } };

function order(annotations: Record<string, string>): Order {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Order',
    metadata: { name: 'web-1', namespace: 'apps', uid: 'order-uid', annotations },
    spec: { request: 'csr', issuerRef: { name: 'le', kind: 'ClusterIssuer' }, dnsNames: ['a.example.test'] },
    status: {
      authorizations: [{
        url: 'https://acme.test/authz/1', identifier: 'a.example.test', initialState: 'pending',
        challenges: [{ type: 'http-01', url: 'https://acme.test/chall/1', token: 'tok' }],
      }],
    },
  } as Order;
}

test('ingress-shim\'s edit-in-place annotation on the Order makes its Challenge route through that Ingress', () => {
  const { challenges } = requiredChallenges({
    order: order({ 'acme.cert-manager.io/http01-override-ingress-name': 'web' }), solvers: [solver], challenges: [],
  });
  assert.deepEqual(challenges[0].spec.solver.http01?.ingress, { serviceType: 'ClusterIP', name: 'web' });
  // no annotation: the issuer's solver as it is
  const plain = requiredChallenges({ order: order({}), solvers: [solver], challenges: [] });
  assert.deepEqual(plain.challenges[0].spec.solver, solver);
});

test('class and ingressClassName overrides replace the other two fields; solvers without an ingress are untouched', () => {
  assert.deepEqual(withHTTP01Overrides(solver, { 'acme.cert-manager.io/http01-override-ingress-class': 'traefik' }).http01?.ingress,
    { serviceType: 'ClusterIP', class: 'traefik' });
  assert.deepEqual(withHTTP01Overrides({ http01: { ingress: { name: 'x' } } }, { 'acme.cert-manager.io/http01-override-ingress-ingressclassname': 'nginx' }).http01?.ingress,
    { ingressClassName: 'nginx' });
  const dns: ACMESolver = { dns01: { rfc2136: { nameserver: '127.0.0.1:53' } } } as ACMESolver;
  assert.equal(withHTTP01Overrides(dns, { 'acme.cert-manager.io/http01-override-ingress-name': 'web' }), dns);
});
