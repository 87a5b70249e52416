import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Certificate } from '../../../api/types.ts';
import { REVOKE_ON_DELETE_ANNOTATION, REVOKE_ON_KEY_ROTATION_ANNOTATION, SUPERSEDED_CERTIFICATES_ANNOTATION } from '../../../api/annotations.ts';
import { REVOKE_FINALIZER, revocationWakesOnAdd, revocationWakesOnUpdate } from './wake.ts';

function crt(meta: Partial<Certificate['metadata']> = {}, status: Certificate['status'] = {}): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
    metadata: { namespace: 'ns', name: 'c', resourceVersion: '1', ...meta },
    spec: { secretName: 's', issuerRef: { name: 'le' }, dnsNames: ['a.example'] },
    status,
  } as Certificate;
}

const plain = crt();
const onDelete = crt({ annotations: { [REVOKE_ON_DELETE_ANNOTATION]: 'true' } });
const onRotation = crt({ annotations: { [REVOKE_ON_KEY_ROTATION_ANNOTATION]: 'true' } });
const pending = crt({ annotations: { [SUPERSEDED_CERTIFICATES_ANNOTATION]: 'MIIB' } });
const finalized = crt({ finalizers: [REVOKE_FINALIZER] });
const deleting = crt({ finalizers: [REVOKE_FINALIZER], deletionTimestamp: '2026-11-25T00:00:00Z' });

test('an added Certificate wakes the revocation controller only when it concerns revocation', () => {
  const rows: [string, Certificate, boolean][] = [
    ['no annotation, no finalizer', plain, false],
    ['revoke-on-delete', onDelete, true],
    ['revoke-on-key-rotation', onRotation, true],
    ['replaced certificates pending', pending, true],
    ['our finalizer (annotation since removed)', finalized, true],
    ['being deleted', deleting, true],
  ];
  for (const [what, c, want] of rows) assert.equal(revocationWakesOnAdd(c), want, what);
});

test('an update wakes it when what it reads changed on a Certificate that concerns revocation', () => {
  const withStatus = (c: Certificate) => ({ ...c, metadata: { ...c.metadata, resourceVersion: '2' }, status: { notAfter: '2027-01-01T00:00:00Z' } });
  const rows: [string, Certificate, Certificate, boolean][] = [
    ['status write of an opted-out Certificate', plain, withStatus(plain), false],
    ['status write of an opted-in Certificate', onDelete, withStatus(onDelete), false],
    ['annotation added', plain, onDelete, true],
    ['annotation removed (the finalizer must go)', onDelete, plain, true],
    ['deletion started', finalized, deleting, true],
    ['spec change of an opted-out Certificate', plain, { ...plain, spec: { ...plain.spec, dnsNames: ['b.example'] } }, false],
    ['informer resync of an opted-in Certificate', onRotation, onRotation, true],
  ];
  for (const [what, o, n, want] of rows) assert.equal(revocationWakesOnUpdate(o, n), want, what);
});
