// The automatic approver as cert-manager's certificaterequests-approver: a request whose issuer
// does not exist is approved and then reports IssuerNotFound, not WaitingForApproval.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateRequest } from './signing.ts';
import { getCondition } from '../../api/conditions.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';

const now = new Date('2026-01-01T00:00:00Z');

function request(kind: 'Issuer' | 'ClusterIssuer'): CertificateRequestObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: { name: 'r', namespace: 'default' },
    spec: { request: 'LS0t', issuerRef: { name: 'missing', kind } },
  } as unknown as CertificateRequestObj;
}

for (const kind of ['Issuer', 'ClusterIssuer'] as const) {
  test(`a request for a missing ${kind} is approved and reports IssuerNotFound`, () => {
    const gate = gateRequest({ request: request(kind), issuer: undefined, autoApprove: true }, now);
    assert.equal(gate.kind, 'stop');
    const conds = gate.status?.conditions;
    assert.equal(getCondition(conds, 'Approved')?.status, 'True');
    assert.equal(getCondition(conds, 'Approved')?.reason, 'cert-manager.io');
    const ready = getCondition(conds, 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'Pending');
    assert.equal(ready?.message, `Referenced "${kind}" not found: ${kind.toLowerCase()}.cert-manager.io "missing" not found`);
    assert.deepEqual(gate.events.map((e) => e.reason), ['cert-manager.io', 'IssuerNotFound']);
  });
}

test('with auto-approval off a request for a missing issuer waits for approval', () => {
  const gate = gateRequest({ request: request('Issuer'), issuer: undefined, autoApprove: false }, now);
  assert.equal(gate.kind, 'stop');
  assert.equal(gate.status, undefined);
  assert.deepEqual(gate.events.map((e) => e.reason), ['WaitingForApproval']);
});
