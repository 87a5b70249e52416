import assert from 'node:assert/strict';
import test from 'node:test';
import { DEFAULT_APPROVE_SIGNER_NAMES, signerName, signerNamesApprove } from './approval.ts';

test("a request's signer name is cert-manager's: <resource>.<group>/<namespace>.<name>, or <resource>.<group>/<name> for a cluster-scoped issuer", () => {
  const rows: [{ name: string; kind?: string; group?: string }, string][] = [
    [{ name: 'ca' }, 'issuers.cert-manager.io/team-a.ca'],
    [{ name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }, 'issuers.cert-manager.io/team-a.ca'],
    [{ name: 'le', kind: 'ClusterIssuer' }, 'clusterissuers.cert-manager.io/le'],
    [{ name: 'step', kind: 'StepIssuer', group: 'certmanager.step.sm' }, 'stepissuers.certmanager.step.sm/team-a.step'],
    [{ name: 'pca', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' }, 'awspcaclusterissuers.awspca.cert-manager.io/pca'],
  ];
  for (const [ref, expected] of rows) assert.equal(signerName(ref, 'team-a'), expected, JSON.stringify(ref));
});

test("signer names approve as cert-manager's approveSignerNames: the default lists cert-manager.io's issuers, <resource>.<group>/* covers a resource, an empty list every issuer", () => {
  const rows: [string[], { name: string; kind?: string; group?: string }, boolean][] = [
    [DEFAULT_APPROVE_SIGNER_NAMES, { name: 'ca' }, true],
    [DEFAULT_APPROVE_SIGNER_NAMES, { name: 'le', kind: 'ClusterIssuer', group: 'cert-manager.io' }, true],
    [DEFAULT_APPROVE_SIGNER_NAMES, { name: 'step', kind: 'StepIssuer', group: 'certmanager.step.sm' }, false],
    [['stepissuers.certmanager.step.sm/*'], { name: 'step', kind: 'StepIssuer', group: 'certmanager.step.sm' }, true],
    [['stepissuers.certmanager.step.sm/team-a.step'], { name: 'step', kind: 'StepIssuer', group: 'certmanager.step.sm' }, true],
    [['stepissuers.certmanager.step.sm/team-b.step'], { name: 'step', kind: 'StepIssuer', group: 'certmanager.step.sm' }, false],
    [['stepissuers.certmanager.step/*'], { name: 'step', kind: 'StepIssuer', group: 'certmanager.step.sm' }, false],
    [['issuers.cert-manager.io/*'], { name: 'le', kind: 'ClusterIssuer' }, false],
    [[], { name: 'pca', kind: 'AWSPCAClusterIssuer', group: 'awspca.cert-manager.io' }, true],
  ];
  for (const [names, ref, expected] of rows) assert.equal(signerNamesApprove(names, ref, 'team-a'), expected, `${JSON.stringify(names)} ${JSON.stringify(ref)}`);
});
