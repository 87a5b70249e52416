// requestSettled as a table: the requests whose changes wake no signer must be exactly those
// gateRequest stops at whatever the issuer is; anything else (pending approval, approved and
// waiting, an issuer not found yet) keeps waking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { gateRequest, requestSettled } from './signing.ts';

const T = '2026-01-01T00:00:00Z';
const cond = (type: string, status: 'True' | 'False', reason = type) => ({ type, status, reason, message: '', lastTransitionTime: T });
const cr = (conditions: ReturnType<typeof cond>[] | undefined, group?: string): CertificateRequestObj => ({
  apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
  metadata: { name: 'r', namespace: 'default' },
  spec: { request: 'Q1NS', issuerRef: { name: 'ca', ...(group ? { group } : {}) } },
  ...(conditions ? { status: { conditions } } : {}),
});

const rows: [string, CertificateRequestObj, boolean][] = [
  ['new', cr(undefined), false],
  ['approved, not signed', cr([cond('Approved', 'True')]), false],
  ['pending issuer', cr([cond('Approved', 'True'), cond('Ready', 'False', 'Pending')]), false],
  ['issued', cr([cond('Approved', 'True'), cond('Ready', 'True', 'Issued')]), true],
  ['failed', cr([cond('Approved', 'True'), cond('Ready', 'False', 'Failed')]), true],
  ['invalid', cr([cond('InvalidRequest', 'True')]), true],
  ['denied, not yet marked', cr([cond('Denied', 'True')]), false],
  ['denied and marked', cr([cond('Denied', 'True'), cond('Ready', 'False', 'Denied')]), true],
  ['another group, pending approval', cr(undefined, 'example.com'), false],
  ['another group, approved', cr([cond('Approved', 'True')], 'example.com'), true],
  ['another group, denied', cr([cond('Denied', 'True')], 'example.com'), true],
];

for (const [name, request, settled] of rows) {
  test(`requestSettled: ${name}`, () => {
    assert.equal(requestSettled(request), settled);
    // a settled request is one gateRequest stops at without a write, whatever the issuer
    if (settled) {
      for (const issuer of [undefined, { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'default' }, spec: { ca: { secretName: 'ca' } } }]) {
        const g = gateRequest({ request, issuer: issuer as never, autoApprove: true }, new Date(T));
        assert.equal(g.kind, 'stop');
        assert.equal('status' in g ? g.status : undefined, undefined);
      }
    }
  });
}
