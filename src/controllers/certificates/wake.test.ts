// The certificate controllers' wake predicates as a table: for each step of an issuance and each
// kind of outside edit, which controllers wake. A row that says false is a reconcile saved; a row
// that says true is a change the controller acts on and must never miss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Secret } from '../../api/meta.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { certificate } from '../testing/fixtures.ts';
import { CertificateAnnotation, ManagedLabel } from '../../api/annotations.ts';
import {
  issuingWakes, keyManagerWakes, readinessWakes, requestManagerWakes, revisionManagerWakes, secretChanged, requestIntentChanged,
  triggerWakes, wakesWhen, type CertificateWakes,
} from './wake.ts';

const T = '2026-01-01T00:00:00Z';
const cond = (type: string, status: 'True' | 'False', reason = type) => ({ type, status, reason, message: '', lastTransitionTime: T });
const withRV = <O extends { metadata: { resourceVersion?: string } }>(o: O, rv: string): O => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });

// one issuance, as the controllers write it
const created = certificate();
const issuing = certificate({ status: { conditions: [cond('Issuing', 'True', 'DoesNotExist'), cond('Ready', 'False', 'DoesNotExist')] } });
const keyNamed = certificate({ status: { ...issuing.status, nextPrivateKeySecretName: 'a-xyz' } });
const issued = certificate({ status: { revision: 1, conditions: [cond('Ready', 'True')], notAfter: '2026-04-01T00:00:00Z' } });
const failed = certificate({ status: { ...keyNamed.status, lastFailureTime: T, issuanceAttempts: 1, conditions: [cond('Issuing', 'False', 'Failed'), cond('Ready', 'False', 'DoesNotExist')] } });
const respecced = { ...issued, metadata: { ...issued.metadata, generation: 2 }, spec: { ...issued.spec, dnsNames: ['b.example.test'] } };
const readinessOnly = certificate({ status: { ...issued.status, conditions: [cond('Ready', 'False', 'Expired')] } });
const ari = certificate({ status: { ...issued.status, acme: { ari: { certID: 'x', nextCheck: T } } } as CertificateObj['status'] });

const secret = (name: string, o: { labels?: Record<string, string>; data?: Record<string, string>; rv?: string } = {}): Secret => ({
  apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
  metadata: { name, namespace: 'default', resourceVersion: o.rv ?? '1', labels: o.labels, ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'a', uid: 'crt-uid', controller: true }] },
  ...(o.data ? { data: o.data } : {}),
});
const nextKey = secret('a-xyz', { labels: { [ManagedLabel.nextPrivateKey]: 'true' }, data: { 'tls.key': 'a2V5' } });
const target = secret('a-tls', { data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' } });
const targetEdited = secret('a-tls', { data: { 'tls.crt': 'b3RoZXI=', 'tls.key': 'a2V5' }, rv: '2' });
const metadataOnly = secret('a-tls', { rv: '1' });

const request = (o: { revision?: string; status?: CertificateRequestObj['status']; rv?: string } = {}): CertificateRequestObj => ({
  apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
  metadata: { name: 'a-1', namespace: 'default', resourceVersion: o.rv ?? '1', annotations: { [CertificateAnnotation.revision]: o.revision ?? '1' } },
  spec: { request: 'Q1NS', issuerRef: { name: 'ca' } },
  ...(o.status ? { status: o.status } : {}),
});
const crNew = request();
const crIssued = request({ rv: '2', status: { conditions: [cond('Approved', 'True'), cond('Ready', 'True', 'Issued')], certificate: 'Y3J0' } });
const crFailed = request({ rv: '2', status: { conditions: [cond('Ready', 'False', 'Failed')], failureTime: T } });

type Event =
  | { added: CertificateObj; secret?: Secret }
  | { changed: [CertificateObj, CertificateObj] }
  | { target: [CertificateObj, Secret | undefined, Secret | undefined] }
  | { nextKey: [CertificateObj, Secret | undefined, Secret | undefined] }
  | { request: [CertificateObj, CertificateRequestObj | undefined, CertificateRequestObj | undefined] };

function wakes(w: CertificateWakes, e: Event): boolean {
  if ('added' in e) return w.added(e.added, e.secret);
  if ('changed' in e) return w.changed(...e.changed);
  if ('target' in e) return w.targetSecret(...e.target);
  if ('nextKey' in e) return w.nextKeySecret(...e.nextKey);
  return w.request(...e.request);
}

const controllers = { trigger: triggerWakes, keyManager: keyManagerWakes, requestManager: requestManagerWakes, issuing: issuingWakes, readiness: readinessWakes, revisionManager: revisionManagerWakes };
type Name = keyof typeof controllers;

// event → the controllers it wakes (every other one must stay asleep)
const rows: { name: string; event: Event; wake: Name[] }[] = [
  { name: 'new Certificate', event: { added: created }, wake: ['trigger', 'readiness'] },
  { name: 'new Certificate whose Secret exists (upkeep)', event: { added: created, secret: target }, wake: ['trigger', 'issuing', 'readiness'] },
  { name: 'listed at start while issuing', event: { added: keyNamed }, wake: ['trigger', 'keyManager', 'requestManager', 'issuing', 'readiness'] },
  { name: 'listed at start, Ready', event: { added: issued }, wake: ['trigger', 'issuing', 'readiness', 'revisionManager'] },
  { name: 'trigger sets Issuing', event: { changed: [created, issuing] }, wake: ['keyManager'] },
  { name: 'key manager names the next key', event: { changed: [issuing, keyNamed] }, wake: ['keyManager', 'requestManager'] },
  { name: 'issuing ends with a new revision', event: { changed: [keyNamed, issued] }, wake: ['trigger', 'keyManager', 'issuing', 'readiness', 'revisionManager'] },
  { name: 'issuing fails', event: { changed: [keyNamed, failed] }, wake: ['trigger', 'keyManager', 'issuing'] },
  { name: 'only resourceVersion changed', event: { changed: [issued, withRV(issued, '9')] }, wake: [] },
  { name: 'spec edited after issuance', event: { changed: [issued, respecced] }, wake: ['trigger', 'issuing', 'readiness'] },
  { name: 'spec edited while issuing', event: { changed: [keyNamed, { ...keyNamed, spec: respecced.spec, metadata: respecced.metadata }] }, wake: ['keyManager', 'requestManager', 'issuing', 'readiness'] },
  { name: 'readiness fields only', event: { changed: [issued, readinessOnly] }, wake: [] },
  { name: 'ARI answer stored', event: { changed: [issued, ari] }, wake: ['trigger', 'readiness'] },
  { name: 'Certificate being deleted', event: { changed: [issued, { ...issued, metadata: { ...issued.metadata, deletionTimestamp: T } }] }, wake: ['trigger', 'issuing', 'readiness'] },
  { name: 'next key Secret made by the key manager', event: { nextKey: [issuing, undefined, nextKey] }, wake: [] },
  { name: 'next key Secret appears after being named', event: { nextKey: [keyNamed, undefined, nextKey] }, wake: ['keyManager', 'requestManager', 'issuing'] },
  { name: 'next key Secret deleted while issuing', event: { nextKey: [keyNamed, nextKey, undefined] }, wake: ['keyManager', 'requestManager', 'issuing'] },
  { name: 'next key Secret deleted after issuance', event: { nextKey: [issued, nextKey, undefined] }, wake: [] },
  { name: 'stale next key Secret of a Certificate not issuing', event: { nextKey: [issued, undefined, nextKey] }, wake: ['keyManager'] },
  { name: 'target Secret written while issuing', event: { target: [keyNamed, undefined, target] }, wake: ['readiness'] },
  { name: 'target Secret edited after issuance', event: { target: [issued, target, targetEdited] }, wake: ['trigger', 'issuing', 'readiness'] },
  { name: 'target Secret deleted after issuance', event: { target: [issued, target, undefined] }, wake: ['trigger', 'issuing', 'readiness'] },
  { name: 'target Secret unchanged but for resourceVersion', event: { target: [issued, target, withRV(target, '2')] }, wake: [] },
  { name: 'metadata-only Secret with a new version', event: { target: [issued, metadataOnly, withRV(metadataOnly, '2')] }, wake: ['trigger', 'issuing', 'readiness'] },
  { name: 'request created', event: { request: [keyNamed, undefined, crNew] }, wake: ['requestManager'] },
  { name: 'request issued', event: { request: [keyNamed, crNew, crIssued] }, wake: ['issuing'] },
  { name: 'request failed', event: { request: [keyNamed, crNew, crFailed] }, wake: ['requestManager', 'issuing'] },
  { name: 'current revision\'s request deleted after issuance', event: { request: [issued, crIssued, undefined] }, wake: ['trigger', 'readiness'] },
  { name: 'renewal request created for a Ready Certificate', event: { request: [issued, undefined, request({ revision: '2' })] }, wake: ['trigger', 'revisionManager'] },
];

for (const row of rows) {
  test(`wakes: ${row.name}`, () => {
    const woke = (Object.keys(controllers) as Name[]).filter((n) => wakes(controllers[n], row.event));
    assert.deepEqual(woke, row.wake);
  });
}

test('wakesWhen: only Certificates it applies to, and only real changes', () => {
  const w = wakesWhen((crt) => crt.spec.issuerRef.name === 'acme');
  const acme = { ...issued, spec: { ...issued.spec, issuerRef: { name: 'acme' } } };
  assert.equal(w.added(issued, undefined), false);
  assert.equal(w.added(acme, undefined), true);
  assert.equal(w.changed(acme, withRV(acme, '5')), false);
  assert.equal(w.changed(acme, { ...acme, status: { ...acme.status, revision: 2 } }), true);
  // moved away from the issuer it applies to: one last look
  assert.equal(w.changed(acme, { ...issued, metadata: { ...issued.metadata, generation: 2 } }), true);
  assert.equal(w.targetSecret(acme, target, targetEdited), true);
  assert.equal(w.targetSecret(issued, target, targetEdited), false);
});

test('secretChanged and requestIntentChanged: bookkeeping never counts, content always does', () => {
  const rows: [string, boolean, boolean][] = [
    ['added', secretChanged(undefined, target), true],
    ['deleted', secretChanged(target, undefined), true],
    ['same content, new version', secretChanged(target, withRV(target, '7')), false],
    ['data edited', secretChanged(target, targetEdited), true],
    ['label added', secretChanged(target, { ...target, metadata: { ...target.metadata, labels: { x: 'y' } } }), true],
    ['metadata only, same version', secretChanged(metadataOnly, metadataOnly), false],
    ['metadata only, new version', secretChanged(metadataOnly, withRV(metadataOnly, '2')), true],
    ['request status only', requestIntentChanged(crNew, crIssued), false],
    ['request annotation changed', requestIntentChanged(crNew, request({ revision: '2' })), true],
    ['request added', requestIntentChanged(undefined, crNew), true],
  ];
  for (const [name, got, want] of rows) assert.equal(got, want, name);
});
