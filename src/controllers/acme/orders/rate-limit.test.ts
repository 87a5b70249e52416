import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOrder } from './order.ts';
import { rateLimitWaitMs } from '../../../acme/errors.ts';
import { ANN_RATE_LIMITED } from '../recovery.ts';
import type { Order } from '../../../api/types.ts';

const order = (annotations: Record<string, string>, status: Order['status'] = {}): Order => ({
  apiVersion: 'acme.cert-manager.io/v1', kind: 'Order',
  metadata: { name: 'o', namespace: 'default', annotations },
  spec: { request: '', issuerRef: { name: 'i' }, dnsNames: ['a.example'] },
  status,
});

test('after a 429 nothing is sent before the Retry-After time, then the Order goes on (table)', () => {
  const now = new Date('2026-03-01T00:00:00Z');
  const rows: [string, Order, string][] = [
    ['no mark: create', order({}), 'create'],
    ['marked until later: wait', order({ [ANN_RATE_LIMITED]: '2026-03-01T00:10:00Z' }), 'rate-limited'],
    ['mark in the past: create', order({ [ANN_RATE_LIMITED]: '2026-02-28T23:59:59Z' }), 'create'],
    ['marked, with a URL: still wait (finalize and polling are rate limited too)', order({ [ANN_RATE_LIMITED]: '2026-03-01T00:10:00Z' }, { url: 'https://ca/o/1', state: 'pending', authorizations: [] }), 'rate-limited'],
    ['marked but failed: nothing', order({ [ANN_RATE_LIMITED]: '2026-03-01T00:10:00Z' }, { state: 'errored' }), 'none'],
  ];
  for (const [name, o, kind] of rows) assert.equal(decideOrder({ order: o, solvers: [], challenges: [] }, now).kind, kind, name);
  const step = decideOrder({ order: order({ [ANN_RATE_LIMITED]: '2026-03-01T00:10:00Z' }), solvers: [], challenges: [] }, now);
  assert.deepEqual(step, { kind: 'rate-limited', untilMs: 600_000 });
  assert.equal(rateLimitWaitMs(undefined), 900_000);
  assert.equal(rateLimitWaitMs(0), 1000);
  assert.equal(rateLimitWaitMs(3_600_000), 3_600_000);
});
