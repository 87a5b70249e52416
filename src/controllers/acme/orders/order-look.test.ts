// An Order waiting on the ACME server after finalize: decideOrder holds it until its next-look
// mark, and decideOrderLook says what one look at the ACME order leads to. One row per outcome.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOrder, decideOrderLook } from './order.ts';
import type { Order } from '../../../api/types.ts';
import { ANN_FINALIZED_AT, ANN_NEXT_LOOK } from '../look-schedule.ts';

const NOW = new Date('2026-06-01T00:00:00.000Z');
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

function order(state: string, annotations: Record<string, string> = {}, certificate = false): Order {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Order',
    metadata: { name: 'o', namespace: 'default', uid: 'u', annotations },
    spec: { request: '', issuerRef: { name: 'le' }, dnsNames: ['a.example.test'] },
    status: {
      url: 'https://ca.test/order/1', finalizeURL: 'https://ca.test/order/1/finalize', state: state as never,
      authorizations: [{ url: 'https://ca.test/authz/1', identifier: 'a.example.test', initialState: 'valid' }],
      ...(certificate ? { certificate: 'Y2hhaW4=' } : {}),
    },
  };
}

test('decideOrder: a processing Order is looked at when its mark is due, not before', () => {
  const rows: { name: string; order: Order; want: { kind: string; afterMs?: number } }[] = [
    { name: 'processing, no mark: look now', order: order('processing'), want: { kind: 'download' } },
    { name: 'processing, mark passed: look now', order: order('processing', { [ANN_NEXT_LOOK]: at(-1) }), want: { kind: 'download' } },
    { name: 'processing, mark ahead: look then', order: order('processing', { [ANN_NEXT_LOOK]: at(400) }), want: { kind: 'look-later', afterMs: 400 } },
    { name: 'valid without certificate, mark ahead: look then', order: order('valid', { [ANN_NEXT_LOOK]: at(100) }), want: { kind: 'look-later', afterMs: 100 } },
    { name: 'valid with certificate: the mark does not matter', order: order('valid', { [ANN_NEXT_LOOK]: at(100) }, true), want: { kind: 'none' } },
  ];
  for (const r of rows) assert.deepEqual(decideOrder({ order: r.order, solvers: [], challenges: [] }, NOW), r.want, r.name);
});

test('decideOrderLook: one row per ACME order status', () => {
  const rows: { name: string; order: Order; status: string; retryAfterMs?: number; want: ReturnType<typeof decideOrderLook> }[] = [
    { name: 'valid: download', order: order('processing'), status: 'valid', want: { kind: 'download' } },
    { name: 'invalid: failed with the order\'s problem', order: order('processing'), status: 'invalid', want: { kind: 'failed' } },
    { name: 'expired: failed', order: order('processing'), status: 'expired', want: { kind: 'failed' } },
    { name: 'deactivated: final without a certificate', order: order('processing'), status: 'deactivated', want: { kind: 'no-certificate' } },
    { name: 'revoked: final without a certificate', order: order('processing'), status: 'revoked', want: { kind: 'no-certificate' } },
    {
      name: 'first time processing: records since when, first look in 50 ms', order: order('ready'), status: 'processing',
      want: { kind: 'look-later', afterMs: 50, annotations: { [ANN_FINALIZED_AT]: at(0), [ANN_NEXT_LOOK]: at(50) } },
    },
    {
      name: 'processing for 300 ms: wait as long again', order: order('processing', { [ANN_FINALIZED_AT]: at(-300) }), status: 'processing',
      want: { kind: 'look-later', afterMs: 300, annotations: { [ANN_NEXT_LOOK]: at(300) } },
    },
    {
      name: 'processing for a minute: at most 1 s (the ACME client\'s own pace)', order: order('processing', { [ANN_FINALIZED_AT]: at(-60_000) }), status: 'processing',
      want: { kind: 'look-later', afterMs: 1_000, annotations: { [ANN_NEXT_LOOK]: at(1_000) } },
    },
    {
      name: 'a look made late (due at 200 ms, made at 450 ms): the pace counts to when it was due',
      order: order('processing', { [ANN_FINALIZED_AT]: at(-450), [ANN_NEXT_LOOK]: at(-250) }), status: 'processing',
      want: { kind: 'look-later', afterMs: 200, annotations: { [ANN_NEXT_LOOK]: at(200) } },
    },
    {
      name: 'Retry-After 5 s: not before then', order: order('processing', { [ANN_FINALIZED_AT]: at(-100) }), status: 'processing', retryAfterMs: 5_000,
      want: { kind: 'look-later', afterMs: 5_000, annotations: { [ANN_NEXT_LOOK]: at(5_000) } },
    },
    {
      name: 'still pending/ready at the CA: looked at again like processing', order: order('processing', { [ANN_FINALIZED_AT]: at(-100) }), status: 'ready',
      want: { kind: 'look-later', afterMs: 100, annotations: { [ANN_NEXT_LOOK]: at(100) } },
    },
  ];
  for (const r of rows) assert.deepEqual(decideOrderLook(r.order, r.status, NOW, r.retryAfterMs), r.want, r.name);
});
