import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../api/meta.ts';
import { namespaceDeletionConditions } from './namespace-conditions.ts';

const t0 = '2026-11-27T10:00:00Z';
const t1 = '2026-11-27T10:00:05Z';
const byType = (cs: Condition[]) => Object.fromEntries(cs.map((c) => [c.type, c]));

test('content held by finalizers: what remains by resource and by finalizer, in kube\'s words, sorted', () => {
  const cs = byType(namespaceDeletionConditions([
    { plural: 'issuers', group: 'cert-manager.io', finalizers: ['example.com/hold'] },
    { plural: 'secrets', group: '', finalizers: ['example.com/hold', 'b.example/x'] },
    { plural: 'secrets', group: '', finalizers: [] },
  ], undefined, t0));
  assert.deepEqual(cs.NamespaceContentRemaining, {
    type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', lastTransitionTime: t0,
    message: 'Some resources are remaining: issuers.cert-manager.io has 1 resource instances, secrets. has 2 resource instances',
  });
  assert.deepEqual(cs.NamespaceFinalizersRemaining, {
    type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', lastTransitionTime: t0,
    message: 'Some content in the namespace has finalizers remaining: b.example/x in 1 resource instances, example.com/hold in 2 resource instances',
  });
  assert.deepEqual(cs.NamespaceDeletionContentFailure, {
    type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', lastTransitionTime: t0,
    message: 'All content successfully deleted, may be waiting on finalization',
  });
  assert.equal(Object.keys(cs).length, 5);
});

test('nothing left: every condition False with its ok words; a condition whose status did not change keeps its time', () => {
  const first = namespaceDeletionConditions([{ plural: 'secrets', group: '', finalizers: ['f'] }], undefined, t0);
  const cs = byType(namespaceDeletionConditions([], first, t1));
  assert.equal(cs.NamespaceContentRemaining.status, 'False');
  assert.equal(cs.NamespaceContentRemaining.message, 'All content successfully removed');
  assert.equal(cs.NamespaceContentRemaining.lastTransitionTime, t1, 'changed status: a new time');
  assert.equal(cs.NamespaceDeletionDiscoveryFailure.lastTransitionTime, t0, 'unchanged: its time kept');
});
