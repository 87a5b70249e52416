// --approve-signer-names: cert-manager's approveSignerNames on both commands that run the
// controllers. Absent: cert-manager.io's Issuers and ClusterIssuers; "" approves every issuer;
// an entry that is no signer name is refused with the flag named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerOptionsFrom, type ControllerFlags } from './server.ts';
import { CliError } from './cli-error.ts';

const flags = (over: Partial<ControllerFlags>): ControllerFlags => ({
  autoApprove: true, metricsListen: '127.0.0.1:0', healthListen: '127.0.0.1:0', clusterResourceNamespace: 'cert-manager',
  ingressShim: true, defaultIssuerKind: 'Issuer', defaultIssuerGroup: 'cert-manager.io', autoCertificateAnnotations: 'kubernetes.io/tls-acme',
  caInjector: true, ...over,
});

test('--approve-signer-names: absent leaves the default, a list passes through, an empty value approves every issuer', () => {
  assert.equal(controllerOptionsFrom(flags({})).approveSignerNames, undefined);
  assert.deepEqual(controllerOptionsFrom(flags({ approveSignerNames: 'issuers.cert-manager.io/*, stepissuers.certmanager.step.sm/*' })).approveSignerNames,
    ['issuers.cert-manager.io/*', 'stepissuers.certmanager.step.sm/*']);
  assert.deepEqual(controllerOptionsFrom(flags({ approveSignerNames: '' })).approveSignerNames, []);
});

test('--approve-signer-names: an entry that is no <resource>.<group>/<name or *> is refused, naming the flag and the entry', () => {
  for (const bad of ['issuers', 'issuers.cert-manager.io', 'issuers.cert-manager.io/', '/x', 'Issuers.cert-manager.io/*', 'issuers.cert-manager.io/a/b']) {
    assert.throws(() => controllerOptionsFrom(flags({ approveSignerNames: `clusterissuers.cert-manager.io/*,${bad}` })),
      (e: Error) => e instanceof CliError && e.message.includes('--approve-signer-names') && e.message.includes(`"${bad}"`), bad);
  }
});
