// Server-side apply's field ownership: two appliers on one object, conflicts and force,
// co-ownership, removal of what an applier stops applying, FieldsV1 as kube writes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/meta.ts';
import { StoreError } from '../../store/store.ts';
import { applyConfiguration, decodeFieldsV1, encodeFieldsV1, fieldsOf, managedFieldsForCreate, recordUpdate, type ApplyRequest } from './apply.ts';

const as = (manager: string, force = false): ApplyRequest => ({
  manager, force, scope: 'main', hasStatusSubresource: true, now: () => new Date('2026-01-02T03:04:05.678Z'), resource: 'certificates.cert-manager.io',
});

const cert = (spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'default', ...(labels ? { labels } : {}) }, spec,
});

function created(config: Record<string, any>, manager: string): KubeObject {
  const o = structuredClone(config) as KubeObject;
  o.metadata.managedFields = managedFieldsForCreate(config, as(manager));
  return o;
}

const owners = (o: KubeObject) => Object.fromEntries((o.metadata.managedFields as { manager: string; fieldsV1: unknown }[]).map((e) => [e.manager, decodeFieldsV1(e.fieldsV1).map((p) => p.join('.')).sort()]));

test('ssa: the fields a configuration sets, in kube\'s FieldsV1 form and back', () => {
  const config = { ...cert({ secretName: 's', dnsNames: ['a', 'b'], issuerRef: { name: 'ca' }, selfSigned: {} }, { app: 'x' }), status: { revision: 1 } };
  const paths = fieldsOf(config, 'main', true);
  assert.deepEqual(paths.map((p) => p.join('.')), ['metadata.labels.app', 'spec.secretName', 'spec.dnsNames', 'spec.issuerRef.name', 'spec.selfSigned']);
  assert.deepEqual(encodeFieldsV1(paths), {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': { 'f:secretName': {}, 'f:dnsNames': {}, 'f:issuerRef': { 'f:name': {} }, 'f:selfSigned': {} },
  });
  assert.deepEqual(decodeFieldsV1({ 'f:spec': { '.': {}, 'f:a': {} } }), [['spec', 'a']]);
  assert.deepEqual(fieldsOf(config, 'status', true), [['status', 'revision']]);
});

test('ssa: two appliers own different fields; changing the other\'s field conflicts unless forced', () => {
  let o = created(cert({ secretName: 's', dnsNames: ['a'], issuerRef: { name: 'ca' }, duration: '720h' }), 'alice');
  o = applyConfiguration(o, cert({ renewBefore: '100h' }), as('bob'));
  assert.equal((o as any).spec.secretName, 's', 'bob\'s apply leaves alice\'s fields alone');
  assert.deepEqual(owners(o), { alice: ['spec.dnsNames', 'spec.duration', 'spec.issuerRef.name', 'spec.secretName'], bob: ['spec.renewBefore'] });
  assert.equal((o.metadata.managedFields as any[])[1].time, '2026-01-02T03:04:05Z');
  assert.equal((o.metadata.managedFields as any[])[1].operation, 'Apply');

  assert.throws(() => applyConfiguration(o, cert({ renewBefore: '100h', duration: '1000h' }), as('bob')), (e: unknown) =>
    e instanceof StoreError && e.reason === 'Conflict' && e.message === 'Apply failed with 1 conflict: conflict with "alice": .spec.duration');
  // the same value is no conflict: both own it
  const shared = applyConfiguration(o, cert({ renewBefore: '100h', duration: '720h' }), as('bob'));
  assert.ok(owners(shared).alice.includes('spec.duration') && owners(shared).bob.includes('spec.duration'));

  const forced = applyConfiguration(o, cert({ renewBefore: '100h', duration: '1000h' }), as('bob', true));
  assert.equal((forced as any).spec.duration, '1000h');
  assert.ok(!owners(forced).alice.includes('spec.duration'), 'the field changed hands');
  assert.ok(owners(forced).bob.includes('spec.duration'));
});

test('ssa: a field an applier stops applying is removed unless another applier owns it', () => {
  let o = created(cert({ secretName: 's', dnsNames: ['a'], issuerRef: { name: 'ca' } }, { team: 'x' }), 'alice');
  o = applyConfiguration(o, cert({ dnsNames: ['a'], renewBefore: '1h' }), as('bob'));
  o = applyConfiguration(o, cert({ secretName: 's', issuerRef: { name: 'ca' } }), as('alice'));
  assert.deepEqual((o as any).spec.dnsNames, ['a'], 'bob still owns dnsNames');
  assert.equal(o.metadata.labels, undefined, 'only alice owned the label: gone, and the empty map with it');
  o = applyConfiguration(o, cert({ dnsNames: ['a'] }), as('bob'));
  assert.equal((o as any).spec.renewBefore, undefined);
  assert.equal((o as any).spec.secretName, 's');
});

test('ssa: an applier forced out of every field leaves managedFields; Update entries are kept as they are', () => {
  let o = created(cert({ duration: '1h' }), 'alice');
  (o.metadata.managedFields as unknown[]).push({ manager: 'kubectl-edit', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:x': {} } } });
  o = applyConfiguration(o, cert({ duration: '2h' }), as('bob', true));
  assert.deepEqual((o.metadata.managedFields as { manager: string }[]).map((e) => e.manager), ['kubectl-edit', 'bob']);
});

test('ssa: a non-apply write owns what it set or changed (operation Update), taking it from appliers; a no-op changes nothing', () => {
  const now = () => new Date('2026-01-02T03:04:05Z');
  const createdByKubectl = recordUpdate(undefined, cert({ secretName: 's', duration: '1h' }) as KubeObject, 'kubectl-create', true, now);
  assert.deepEqual(owners(createdByKubectl), { 'kubectl-create': ['spec.duration', 'spec.secretName'] });
  assert.equal((createdByKubectl.metadata.managedFields as { operation: string }[])[0].operation, 'Update');

  let o = created(cert({ secretName: 's', duration: '1h' }), 'alice');
  const same = recordUpdate(o, structuredClone(o), 'kubectl-edit', true, now);
  assert.deepEqual(same.metadata.managedFields, o.metadata.managedFields, 'nothing changed, nothing recorded');
  o = recordUpdate(o, { ...o, spec: { secretName: 's', duration: '2h', renewBefore: '1h' } } as KubeObject, 'kubectl-edit', true, now);
  assert.deepEqual(owners(o), { alice: ['spec.secretName'], 'kubectl-edit': ['spec.duration', 'spec.renewBefore'] });
  // alice applying her old value now conflicts with the editor, as on kube-apiserver
  // an Update manager is named with the apiVersion it wrote, as kube's printManager names it
  assert.throws(() => applyConfiguration(o, cert({ secretName: 's', duration: '1h' }), as('alice')), (e: Error) =>
    e.message === 'Apply failed with 1 conflict: conflict with "kubectl-edit" using cert-manager.io/v1: .spec.duration'
    && (e as StoreError).causes?.[0]?.message === 'conflict with "kubectl-edit" using cert-manager.io/v1');
  // a field the editor removes is nobody's
  o = recordUpdate(o, { ...o, spec: { secretName: 's', duration: '2h' } } as KubeObject, 'kubectl-edit', true, now);
  assert.deepEqual(owners(o)['kubectl-edit'], ['spec.duration']);
});
