// decideOrderRequest as a table: an ACME CertificateRequest and its Order (cert-manager's
// certificaterequests/acme): create, wait, fail, retry for causes not the user's, copy back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOrderRequest, expectedOrder, type OrderRequestDecision, type OrderRequestInput } from './order-request.ts';
import type { Order } from '../../../api/types.ts';
import type { Condition } from '../../../api/meta.ts';
import type { CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { ANN_FAILURE_CAUSE, ANN_RETRY, RETRY_BOUNDS } from '../recovery.ts';
import { NOW, b64, caKeyPair, cert, certificateRequest, cond, csr, key } from '../../testing/fixtures.ts';
import { uncheckedCSR } from '../../../pki/testing/csr-by-hand.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';

interface Row {
  name: string;
  why: string;
  input: OrderRequestInput;
  check: (d: OrderRequestDecision) => void;
}

const ready = (d: OrderRequestDecision) => d.status?.conditions?.find((c) => c.type === 'Ready');
const readyText = (d: OrderRequestDecision) => (ready(d) ? `${ready(d)!.reason}: ${ready(d)!.message}` : undefined);
const eventText = (d: OrderRequestDecision) => d.events.map((e) => `${e.type} ${e.reason}`);

test('decideOrderRequest: one row per outcome', async () => {
  const mainKey = await key('main');
  const approved = [cond('Approved', 'True', 'cert-manager.io')];
  const request = async (o: { template?: Parameters<typeof csr>[0]; conditions?: Condition[]; csrPem?: string; duration?: string; status?: CertificateRequestObj['status'] } = {}) => certificateRequest({
    csrPem: o.csrPem ?? await csr(o.template ?? { dnsNames: ['a.example.test'] }, mainKey),
    annotations: { [CertificateAnnotation.certificateName]: 'a' },
    ...(o.duration ? { spec: { duration: o.duration } } : {}),
    status: { ...o.status, conditions: o.conditions ?? approved },
  });
  const cr = await request();
  const acmeIssuer: OrderRequestInput['issuer'] = { spec: { acme: {} } };
  const expected = expectedOrder(cr, acmeIssuer).order!;
  const name = expected.metadata.name!;
  const order = (o: { name?: string; owner?: string; state?: string; reason?: string; certificate?: string; cause?: string; retry?: number; certificateName?: string } = {}): Order => ({
    ...expected,
    metadata: {
      ...expected.metadata,
      name: o.name ?? name,
      annotations: {
        ...expected.metadata.annotations,
        ...(o.certificateName ? { [CertificateAnnotation.certificateName]: o.certificateName } : {}),
        ...(o.cause ? { [ANN_FAILURE_CAUSE]: o.cause } : {}),
        ...(o.retry ? { [ANN_RETRY]: String(o.retry) } : {}),
      },
      ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', name: 'a-1', uid: o.owner ?? 'cr-uid', controller: true }],
    },
    status: { ...(o.state ? { state: o.state as never } : {}), ...(o.reason ? { reason: o.reason } : {}), ...(o.certificate ? { certificate: o.certificate } : {}) },
  });
  const ca = await caKeyPair('acme-ca');
  const leaf = await cert({ keyPem: mainKey, issuer: ca });
  const foreignLeaf = await cert({ keyPem: await key('other'), issuer: ca });
  const input = (o: Partial<OrderRequestInput> = {}): OrderRequestInput => ({ request: cr, issuer: acmeIssuer, orders: [], ...o });

  const rows: Row[] = [
    { name: 'not approved', why: 'nothing is sent to the ACME server before approval', input: input({ request: await request({ conditions: [] }) }), check: (d) => assert.deepEqual(d, { events: [], deleteOrders: [] }) },
    { name: 'already issued', why: 'a request with Ready=Issued is finished', input: input({ request: await request({ conditions: [...approved, cond('Ready', 'True', 'Issued')] }) }), check: (d) => assert.deepEqual(d, { events: [], deleteOrders: [] }) },
    { name: 'denied', why: 'a denied request gets no Order', input: input({ request: await request({ conditions: [...approved, cond('Denied', 'True', 'x')] }) }), check: (d) => assert.deepEqual(d, { events: [], deleteOrders: [] }) },
    {
      name: 'CSR does not decode', why: 'Failed RequestParsingError, with failureTime, no Order',
      input: input({ request: await request({ csrPem: 'garbage' }) }),
      check: (d) => {
        assert.match(readyText(d)!, /^Failed: Failed to decode CSR in spec\.request/);
        assert.equal(d.status?.failureTime, '2026-06-01T00:00:00Z');
        assert.deepEqual(eventText(d), ['Warning RequestParsingError']);
        assert.equal(d.createOrder, undefined);
      },
    },
    {
      name: 'commonName not among the SANs', why: 'ACME needs the CN among the identifiers: InvalidOrder',
      input: input({ request: await request({ template: { commonName: 'c.example.test', dnsNames: ['a.example.test'] } }) }),
      check: (d) => assert.match(readyText(d)!, /^Failed: The CSR PEM requests a commonName that is not present/),
    },
    {
      name: 'no name to validate', why: 'an Order with no identifier would be refused: InvalidOrder',
      // createCSR refuses such a template (issue 15); another tool can still send one
      input: input({ request: await request({ csrPem: await uncheckedCSR({ subject: { organizations: ['x'] } }, mainKey) }) }),
      check: (d) => assert.equal(readyText(d), 'Failed: The CSR names no DNS name or IP address for the ACME server to validate'),
    },
    {
      name: 'no Order yet', why: 'one Order per request, named from the request and its spec; Pending OrderCreated',
      input: input({ orders: [order({ name: 'a-old', owner: 'earlier-cr', certificateName: 'a' }), order({ name: 'b-old', owner: 'other-cr', certificateName: 'b' })] }),
      check: (d) => {
        assert.equal(d.createOrder?.metadata.name, name);
        assert.deepEqual(d.createOrder?.spec.dnsNames, ['a.example.test']);
        assert.equal(readyText(d), `Pending: Created Order resource default/${name}`);
        assert.deepEqual(eventText(d), ['Normal OrderCreated']);
        assert.deepEqual(d.deleteOrders, ['a-old'], 'earlier attempts of the same Certificate go; other Certificates\' Orders stay');
      },
    },
    { name: 'duration feature on', why: 'enableDurationFeature passes spec.duration to the Order', input: input({ request: await request({ duration: '48h' }), issuer: { spec: { acme: { enableDurationFeature: true } } } }), check: (d) => assert.equal(d.createOrder?.spec.duration, '48h') },
    { name: 'duration feature off', why: 'without the feature the CA picks the lifetime', input: input({ request: await request({ duration: '48h' }) }), check: (d) => assert.equal(d.createOrder?.spec.duration, undefined) },
    { name: 'issuer profile', why: 'the issuer\'s ACME profile goes on the Order', input: input({ issuer: { spec: { acme: { profile: 'shortlived' } } } }), check: (d) => assert.equal(d.createOrder?.spec.profile, 'shortlived') },
    { name: 'renewal with ARI', why: 'RFC 9773: replaces carries the CertID of the certificate renewed', input: input({ replaces: 'abc.def' }), check: (d) => assert.equal(d.createOrder?.spec.replaces, 'abc.def') },
    { name: 'an Order of that name that is not ours', why: 'reported as a conflict, never adopted', input: input({ orders: [order({ owner: 'someone-else' })] }), check: (d) => assert.equal(d.conflict, name) },
    { name: 'Order pending', why: 'Pending OrderPending naming the Order and its state', input: input({ orders: [order({ state: 'pending' })] }), check: (d) => assert.equal(readyText(d), `Pending: Waiting on certificate issuance from order default/${name}: "pending"`) },
    {
      name: 'Order pending with a reason', why: 'why it waits (e.g. rate limited until when) is shown on the request',
      input: input({ orders: [order({ state: 'pending', reason: 'rate limited until 2026-06-01T01:00:00Z' })] }),
      check: (d) => assert.equal(readyText(d), `Pending: Waiting on certificate issuance from order default/${name}: "pending"; rate limited until 2026-06-01T01:00:00Z`),
    },
    { name: 'Order valid, certificate not downloaded', why: 'still pending until the chain is on the Order', input: input({ orders: [order({ state: 'valid' })] }), check: (d) => assert.match(readyText(d)!, /^Pending: .*: "valid"$/) },
    {
      name: 'Order invalid', why: 'the user\'s failure: Failed OrderFailed (counts as a failed issuance attempt)',
      input: input({ orders: [order({ state: 'invalid', reason: 'DNS problem' })] }),
      check: (d) => {
        assert.equal(readyText(d), `Failed: Failed to wait for order resource "${name}" to become ready: order is in "invalid" state: DNS problem`);
        assert.deepEqual(eventText(d), ['Warning OrderFailed']);
      },
    },
    {
      name: 'Order errored because the account is gone', why: 'not the user\'s failure: a new Order (retry 1), the request stays Pending',
      input: input({ orders: [order({ state: 'errored', cause: 'account-gone' })] }),
      check: (d) => {
        assert.equal(d.createOrder?.metadata.annotations?.[ANN_RETRY], '1');
        assert.notEqual(d.createOrder?.metadata.name, name);
        assert.equal(ready(d)?.reason, 'Pending');
        assert.deepEqual(eventText(d), ['Warning OrderRetried', 'Normal OrderCreated']);
      },
    },
    {
      name: 'retries for a cause used up', why: `bounded per cause (solver-unavailable: ${RETRY_BOUNDS['solver-unavailable']} retries), then the request fails`,
      input: input({ orders: [0, 1, 2].map((retry) => order({ name: `o-${retry}`, retry, state: 'invalid', cause: 'solver-unavailable' })) }),
      check: (d) => {
        assert.equal(d.createOrder, undefined);
        assert.match(readyText(d)!, /^Failed: Failed to wait for order resource "o-2"/);
        // the Challenge's reason promised a retry that does not count: the request says this one counts
        assert.match(readyText(d)!, /; the request was retried with a new Order 2 times for this cause already \(at most 2\), so this failure counts as a failed issuance attempt$/);
      },
    },
    {
      // upstream's ACME Sign returns the Certificate alone: an ACME chain ends at an intermediate,
      // which as ca.crt would be taken for a trust anchor (an earlier version put it there)
      name: 'Order valid with its chain', why: 'Issued: the chain copied to status.certificate, no status.ca (no ca.crt), as cert-manager',
      input: input({ orders: [order({ state: 'valid', certificate: b64(leaf + ca.certPem) })] }),
      check: (d) => {
        assert.equal(readyText(d), 'Issued: Certificate fetched from issuer successfully');
        assert.equal(Buffer.from(d.status!.certificate!, 'base64').toString(), leaf + ca.certPem);
        assert.equal(d.status!.ca, undefined);
        assert.deepEqual(eventText(d), ['Normal CertificateIssued']);
      },
    },
    {
      name: 'Order valid with a certificate for another key', why: 'the Order is deleted for a fresh one; the request is not failed',
      input: input({ orders: [order({ state: 'valid', certificate: b64(foreignLeaf + ca.certPem) })] }),
      check: (d) => {
        assert.deepEqual(d.deleteOrders, [name]);
        assert.equal(d.status, undefined);
        assert.deepEqual(eventText(d), ['Warning OrderBadCertificate']);
      },
    },
  ];

  const failures: string[] = [];
  for (const r of rows) {
    const d = decideOrderRequest(r.input, NOW);
    try {
      r.check(d);
    } catch (e) {
      failures.push(`${r.name} (${r.why}): ${(e as Error).message}`);
    }
  }
  assert.deepEqual(failures, []);
});
