import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as R from './resources.ts';
import type { Certificate, CertificateRequest } from './types.ts';
import {
  applyDefaults, issuanceAttemptsOf, normalizeRenewalWindow, rotationPolicyOf, sameIssuer, issuerRefKind, issuerRefGroup,
} from './defaults.ts';
import { validate } from './validation.ts';

const cert: Certificate = {
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'ns' },
  spec: { secretName: 'c-tls', issuerRef: { name: 'ca' }, dnsNames: ['a.example.com'], privateKey: { algorithm: 'ECDSA' } },
};

test('Certificate storage defaults mirror upstream: nothing is added, and the input is not modified', () => {
  const before = structuredClone(cert);
  const out = applyDefaults(R.Certificate, cert);
  assert.deepEqual(out, before);
  assert.notEqual(out, cert);
  assert.notEqual(out.spec, cert.spec);
  assert.deepEqual(cert, before);
  // issuerRef kind/group and rotationPolicy stay unset in storage; controllers default them at runtime
  assert.equal(out.spec.issuerRef.kind, undefined);
  assert.equal(out.spec.privateKey?.rotationPolicy, undefined);
  assert.equal(rotationPolicyOf(out.spec), 'Always');
  assert.equal(rotationPolicyOf({ ...out.spec, privateKey: { rotationPolicy: 'Never' } }), 'Never');
});

test('CertificateRequest create stamps the authenticated requester over whatever the client sent', () => {
  const cr: CertificateRequest = {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'cr', namespace: 'ns' },
    spec: { request: 'AAAA', issuerRef: { name: 'ca' }, username: 'mallory', groups: ['system:masters'] },
  };
  const out = applyDefaults(R.CertificateRequest, cr, { requester: { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } } });
  assert.deepEqual(
    { username: out.spec.username, uid: out.spec.uid, groups: out.spec.groups, extra: out.spec.extra },
    { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } },
  );
  assert.equal(cr.spec.username, 'mallory');
  const anon = applyDefaults(R.CertificateRequest, cr, { requester: { username: 'bob' } });
  assert.equal(anon.spec.groups, undefined);
  // without a requester (updates, internal writes) the spec is left alone, so immutability holds
  assert.deepEqual(validate(R.CertificateRequest, applyDefaults(R.CertificateRequest, cr), cr).filter((e) => e.field === 'spec'), []);
});

test('runtime helpers: issuer defaulting in comparisons, attempts fallback, window spellings', () => {
  assert.equal(issuerRefKind({ name: 'x' }), 'Issuer');
  assert.equal(issuerRefGroup({ name: 'x', group: '' }), 'cert-manager.io');
  assert.ok(sameIssuer({ name: 'x' }, { name: 'x', kind: 'Issuer', group: 'cert-manager.io' }));
  assert.ok(!sameIssuer({ name: 'x' }, { name: 'x', kind: 'ClusterIssuer' }));
  assert.equal(issuanceAttemptsOf({ failedIssuanceAttempts: 3 }), 3);
  assert.equal(issuanceAttemptsOf({ issuanceAttempts: 1, failedIssuanceAttempts: 3 }), 1);
  assert.equal(issuanceAttemptsOf(undefined), undefined);
  assert.deepEqual(normalizeRenewalWindow({ cron: '0 1 * * *', windowDuration: '2h', timezone: 'Europe/Paris' }), { cron: ['0 1 * * *'], duration: '2h', timeZone: 'Europe/Paris' });
  assert.deepEqual(normalizeRenewalWindow({ cron: ['0 1 * * *', '0 2 * * *'], duration: '6h' }), { cron: ['0 1 * * *', '0 2 * * *'], duration: '6h', timeZone: 'UTC' });
});
