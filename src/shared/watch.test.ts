// The generic wake predicates as tables, and wakeOwners applying one: bookkeeping-only updates
// wake nobody, a resync (the same object twice) and every real change do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta.ts';
import type { Informer } from '../runtime/informer.ts';
import { Certificate } from '../api/resources.ts';
import { changedApartFromBookkeeping, specOrMetadataChanged, wakeOwners } from './watch.ts';

type Obj = KubeObject & { spec?: unknown; status?: unknown };
const base: Obj = {
  apiVersion: 'v1', kind: 'Thing',
  metadata: { name: 'a', namespace: 'ns', resourceVersion: '1', generation: 1, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'crt', uid: 'u', controller: true }] },
  spec: { x: 1 }, status: { ready: false },
};
const edit = (m: Partial<Obj['metadata']>, rest: Partial<Obj> = {}): Obj => ({ ...base, ...rest, metadata: { ...base.metadata, resourceVersion: '2', ...m } });

const rows: [string, Obj, boolean, boolean][] = [
  // name, next, changedApartFromBookkeeping, specOrMetadataChanged
  ['a resync (the same object)', base, true, true],
  ['resourceVersion only', edit({}), false, false],
  ['managedFields only', edit({ managedFields: [{ manager: 'm' }] as never }), false, false],
  ['status only', edit({}, { status: { ready: true } }), true, false],
  ['spec', edit({ generation: 2 }, { spec: { x: 2 } }), true, true],
  ['label', edit({ labels: { a: 'b' } }), true, true],
  ['annotation', edit({ annotations: { a: 'b' } }), true, true],
  ['finalizer', edit({ finalizers: ['f'] }), true, true],
  ['deletion', edit({ deletionTimestamp: '2026-01-01T00:00:00Z' }), true, true],
];

for (const [name, next, any, intent] of rows) {
  test(`predicates: ${name}`, () => {
    assert.equal(changedApartFromBookkeeping(base, next), any);
    assert.equal(specOrMetadataChanged(base, next), intent);
  });
}

test('wakeOwners: owners of added, changed and deleted objects; bookkeeping-only updates skipped; a moved owner reference wakes both', () => {
  const handlers: { add?: (o: Obj) => void; update?: (o: Obj, n: Obj) => void; del?: (o: Obj) => void } = {};
  const informer = {
    onAdd: (fn: (o: Obj) => void) => { handlers.add = fn; },
    onUpdate: (fn: (o: Obj, n: Obj) => void) => { handlers.update = fn; },
    onDelete: (fn: (o: Obj) => void) => { handlers.del = fn; },
  } as unknown as Informer<Obj>;
  const woke: string[] = [];
  wakeOwners(informer, Certificate, (k) => woke.push(k), specOrMetadataChanged);
  handlers.add!(base);
  handlers.update!(base, edit({}, { status: { ready: true } }));
  handlers.update!(base, edit({}));
  handlers.update!(base, edit({ labels: { a: 'b' } }));
  handlers.update!(base, edit({ ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'other', uid: 'v', controller: true }] }));
  handlers.del!(base);
  assert.deepEqual(woke, ['ns/crt', 'ns/crt', 'ns/crt', 'ns/other', 'ns/crt']);
});
