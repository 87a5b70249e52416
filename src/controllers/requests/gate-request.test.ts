// gateRequest as a table: what the CertificateRequest controller does before signing (cert-manager's
// certificaterequests sync): foreign groups, denial, finished requests, approval, issuer state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateRequest, type GateResult } from './signing.ts';
import type { IssuerView as IssuerLike } from './signing.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { Condition } from '../../api/meta.ts';
import { NOW, b64, certificateRequest, cond, csr, issuer, key } from '../testing/fixtures.ts';

interface Row {
  name: string;
  why: string;
  request: CertificateRequestObj;
  issuer?: IssuerLike;
  autoApprove?: boolean;
  approveSignerNames?: string[];
  want: {
    kind: GateResult['kind'];
    /** Ready condition written (reason: message), or null for no status write */
    ready?: string | null;
    approved?: boolean;
    events: string[];
    issuerType?: string;
    failureTime?: string;
  };
}

test('gateRequest: one row per outcome', async () => {
  const csrPem = await csr({ dnsNames: ['a.example.test'] }, await key('main'));
  const approved = cond('Approved', 'True', 'cert-manager.io', 'approved');
  const cr = (o: { conditions?: Condition[]; issuerRef?: CertificateRequestObj['spec']['issuerRef']; status?: CertificateRequestObj['status'] } = {}) =>
    certificateRequest({ csrPem, ...(o.issuerRef ? { issuerRef: o.issuerRef } : {}), status: { ...o.status, ...(o.conditions ? { conditions: o.conditions } : {}) } });
  const readyCA = issuer({ conditions: [cond('Ready', 'True', 'KeyPairVerified')] });
  const waiting = 'Normal WaitingForApproval';
  const approvedEvent = 'Normal cert-manager.io';

  const rows: Row[] = [
    {
      name: 'issuer of another group, pending, default signer names', why: 'cert-manager\'s default install approves issuers.cert-manager.io/* and clusterissuers.cert-manager.io/* only: an external issuer\'s request waits for an approver granted its signer',
      request: cr({ issuerRef: { name: 'v', kind: 'FooIssuer', group: 'example.com' } }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] },
    },
    {
      name: 'issuer of another group, pending, its signer listed', why: '--approve-signer-names with fooissuers.example.com/*: approved (external issuers such as step-issuer wait for it), and not signed here',
      request: cr({ issuerRef: { name: 'v', kind: 'FooIssuer', group: 'example.com' } }), issuer: readyCA, approveSignerNames: ['fooissuers.example.com/*'], want: { kind: 'stop', approved: true, ready: null, events: [approvedEvent] },
    },
    {
      name: 'issuer of another group, pending, its exact signer listed', why: 'a namespaced issuer\'s signer name is <resource>.<group>/<namespace>.<name>',
      request: cr({ issuerRef: { name: 'v', kind: 'FooIssuer', group: 'example.com' } }), issuer: readyCA, approveSignerNames: ['fooissuers.example.com/default.v'], want: { kind: 'stop', approved: true, ready: null, events: [approvedEvent] },
    },
    {
      name: 'cluster-scoped issuer of another group, its exact signer listed', why: 'a ClusterIssuer kind\'s signer name is <resource>.<group>/<name>',
      request: cr({ issuerRef: { name: 'v', kind: 'FooClusterIssuer', group: 'example.com' } }), issuer: readyCA, approveSignerNames: ['fooclusterissuers.example.com/v'], want: { kind: 'stop', approved: true, ready: null, events: [approvedEvent] },
    },
    {
      name: 'issuer of another group, pending, no signer names', why: 'an empty list approves every issuer (cert-manager\'s approveSignerNames: [])',
      request: cr({ issuerRef: { name: 'v', kind: 'FooIssuer', group: 'example.com' } }), issuer: readyCA, approveSignerNames: [], want: { kind: 'stop', approved: true, ready: null, events: [approvedEvent] },
    },
    {
      name: 'Issuer not among the signer names', why: 'only clusterissuers.cert-manager.io/* listed: an Issuer\'s request waits for approval',
      request: cr(), issuer: readyCA, approveSignerNames: ['clusterissuers.cert-manager.io/*'], want: { kind: 'stop', ready: null, events: [waiting] },
    },
    {
      name: 'Issuer named exactly among the signer names', why: 'issuers.cert-manager.io/<namespace>.<name>',
      request: cr({ conditions: [] }), issuer: readyCA, approveSignerNames: ['issuers.cert-manager.io/default.ca'], want: { kind: 'sign', issuerType: 'ca', approved: true, events: [approvedEvent] },
    },
    { name: 'issuer of another group, approved', why: 'its own controller signs it: nothing written', request: cr({ issuerRef: { name: 'v', group: 'example.com' }, conditions: [approved] }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'issuer of another group, auto-approval off', why: '--no-auto-approve: left to another approver, not signed here', request: cr({ issuerRef: { name: 'v', group: 'example.com' } }), issuer: readyCA, autoApprove: false, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'issuer group cert-manager.io spelled out', why: 'the default group and the explicit one are the same', request: cr({ issuerRef: { name: 'ca', group: 'cert-manager.io' }, conditions: [approved] }), issuer: readyCA, want: { kind: 'sign', issuerType: 'ca', events: [] } },
    {
      name: 'denied', why: 'Ready=False Denied and failureTime once a request is denied',
      request: cr({ conditions: [cond('Denied', 'True', 'Policy', 'no')] }), issuer: readyCA,
      want: { kind: 'stop', ready: 'Denied: The CertificateRequest was denied by an approval controller', failureTime: '2026-06-01T00:00:00Z', events: [] },
    },
    {
      name: 'denied with a failureTime', why: 'an earlier failureTime is kept',
      request: cr({ conditions: [cond('Denied', 'True', 'Policy', 'no')], status: { failureTime: '2026-05-01T00:00:00Z' } }), issuer: readyCA,
      want: { kind: 'stop', ready: 'Denied: The CertificateRequest was denied by an approval controller', failureTime: '2026-05-01T00:00:00Z', events: [] },
    },
    { name: 'denied and marked', why: 'no second write once Ready says Denied', request: cr({ conditions: [cond('Denied', 'True', 'Policy', 'no'), cond('Ready', 'False', 'Denied', 'x')] }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'invalid request', why: 'InvalidRequest=True is final', request: cr({ conditions: [approved, cond('InvalidRequest', 'True', 'BadCSR')] }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'failed', why: 'Ready=False Failed is final: never signed again', request: cr({ conditions: [approved, cond('Ready', 'False', 'Failed')] }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'issued', why: 'Ready=True Issued is final: signed once', request: cr({ conditions: [approved, cond('Ready', 'True', 'Issued')] }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'pending, auto-approval off', why: '--no-auto-approve: waits for a person or another approver', request: cr(), issuer: readyCA, autoApprove: false, want: { kind: 'stop', ready: null, events: [waiting] } },
    { name: 'pending, issuer served elsewhere', why: 'an issuer naming no type certsmith knows is left to its own approver', request: cr(), issuer: issuer({ spec: {}, conditions: [cond('Ready', 'True', 'x')] }), want: { kind: 'stop', ready: null, events: [waiting] } },
    {
      name: 'pending, Vault issuer', why: 'approved, then Failed naming the unimplemented issuer rather than waiting forever (issue 15)',
      request: cr(), issuer: issuer({ spec: { vault: {} } }),
      want: { kind: 'stop', approved: true, ready: 'Failed: certsmith does not implement the Vault issuer (spec.vault); use a CA, SelfSigned or ACME issuer, or run cert-manager for Vault', failureTime: '2026-06-01T00:00:00Z', events: [approvedEvent, 'Warning UnsupportedIssuerType'] },
    },
    {
      name: 'pending, issuer not found', why: 'approved as cert-manager\'s approver does, then IssuerNotFound (issue 15)',
      request: cr(), want: { kind: 'stop', approved: true, ready: 'Pending: Referenced "Issuer" not found: issuer.cert-manager.io "ca" not found', events: [approvedEvent, 'Normal IssuerNotFound'] },
    },
    { name: 'pending, ready CA issuer', why: 'auto-approved and signed in the same pass', request: cr(), issuer: readyCA, want: { kind: 'sign', approved: true, issuerType: 'ca', events: [approvedEvent] } },
    { name: 'approved, issuer not found', why: 'Pending IssuerNotFound naming the kind', request: cr({ conditions: [approved] }), want: { kind: 'stop', ready: 'Pending: Referenced "Issuer" not found: issuer.cert-manager.io "ca" not found', events: ['Normal IssuerNotFound'] } },
    { name: 'approved, ClusterIssuer not found', why: 'the message names the referenced kind', request: cr({ conditions: [approved], issuerRef: { name: 'ca', kind: 'ClusterIssuer' } }), want: { kind: 'stop', ready: 'Pending: Referenced "ClusterIssuer" not found: clusterissuer.cert-manager.io "ca" not found', events: ['Normal IssuerNotFound'] } },
    {
      name: 'approved, issuer still not found', why: 'the event is not repeated when reason and message are unchanged',
      request: cr({ conditions: [approved, cond('Ready', 'False', 'Pending', 'Referenced "Issuer" not found: issuer.cert-manager.io "ca" not found')] }),
      want: { kind: 'stop', ready: 'Pending: Referenced "Issuer" not found: issuer.cert-manager.io "ca" not found', events: [] },
    },
    { name: 'approved, issuer naming no type', why: 'left alone, nothing written', request: cr({ conditions: [approved] }), issuer: issuer({ spec: {} }), want: { kind: 'stop', ready: null, events: [] } },
    {
      name: 'approved, Venafi issuer', why: 'Failed with the issuer\'s message, so the Certificate backs off as for any failure (issue 15)',
      request: cr({ conditions: [approved] }), issuer: issuer({ spec: { venafi: {} } }),
      want: { kind: 'stop', ready: 'Failed: certsmith does not implement the Venafi issuer (spec.venafi); use a CA, SelfSigned or ACME issuer, or run cert-manager for Venafi', events: ['Warning UnsupportedIssuerType'] },
    },
    { name: 'approved, issuer not ready', why: 'Pending IssuerNotReady until the issuer is Ready', request: cr({ conditions: [approved] }), issuer: issuer({ conditions: [cond('Ready', 'False', 'ErrGetKeyPair')] }), want: { kind: 'stop', ready: 'Pending: Referenced issuer does not have a Ready status condition', events: ['Normal IssuerNotReady'] } },
    { name: 'approved, certificate already set', why: 'a request with a certificate is never signed twice', request: cr({ conditions: [approved], status: { certificate: b64('x') } }), issuer: readyCA, want: { kind: 'stop', ready: null, events: [] } },
    { name: 'approved, ready CA issuer', why: 'signs with the CA', request: cr({ conditions: [approved] }), issuer: readyCA, want: { kind: 'sign', issuerType: 'ca', events: [] } },
    { name: 'approved, ready SelfSigned issuer', why: 'signs with the request\'s own key', request: cr({ conditions: [approved] }), issuer: issuer({ spec: { selfSigned: {} }, conditions: [cond('Ready', 'True', 'IsReady')] }), want: { kind: 'sign', issuerType: 'selfSigned', events: [] } },
    { name: 'approved, ready ACME issuer', why: 'passed on typed acme: the controller hands it to the ACME controllers', request: cr({ conditions: [approved] }), issuer: issuer({ spec: { acme: {} }, conditions: [cond('Ready', 'True', 'ACMEAccountRegistered')] }), want: { kind: 'sign', issuerType: 'acme', events: [] } },
  ];

  const failures: string[] = [];
  for (const r of rows) {
    const g = gateRequest({ request: r.request, ...(r.issuer ? { issuer: r.issuer } : {}), autoApprove: r.autoApprove ?? true, ...(r.approveSignerNames ? { approveSignerNames: r.approveSignerNames } : {}) }, NOW);
    const readyCond = g.status?.conditions?.find((c) => c.type === 'Ready');
    const got: Row['want'] = {
      kind: g.kind,
      ...(r.want.ready !== undefined ? { ready: g.status && readyCond ? `${readyCond.reason}: ${readyCond.message}` : null } : {}),
      ...(r.want.approved !== undefined ? { approved: !!g.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True') } : {}),
      events: g.events.map((e) => `${e.type} ${e.reason}`),
      ...(r.want.issuerType !== undefined ? { issuerType: g.kind === 'sign' ? g.issuerType : undefined } : {}),
      ...(r.want.failureTime !== undefined ? { failureTime: g.status?.failureTime } : {}),
    };
    try {
      assert.deepEqual(got, r.want);
    } catch {
      failures.push(`${r.name} (${r.why}): got ${JSON.stringify(got)}`);
    }
  }
  assert.deepEqual(failures, []);
});
