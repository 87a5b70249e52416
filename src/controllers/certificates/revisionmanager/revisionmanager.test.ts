import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestsToPrune } from './controller.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';

const crt = (revision: number, ready: boolean, limit?: number): CertificateObj => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default' },
  spec: { secretName: 'a', issuerRef: { name: 'ca' }, revisionHistoryLimit: limit },
  status: { revision, conditions: ready ? [{ type: 'Ready', status: 'True' }] : [] },
});
const cr = (rev: string | undefined): CertificateRequestObj => ({
  apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
  metadata: { name: `a-${rev}`, namespace: 'default', annotations: rev === undefined ? {} : { [CertificateAnnotation.revision]: rev } },
  spec: { request: '', issuerRef: { name: 'ca' } },
});

test('keeps revisionHistoryLimit issued revisions, never the one in flight', () => {
  assert.deepEqual(requestsToPrune(crt(3, true), [cr('1'), cr('2'), cr('3')]), ['a-1', 'a-2']);
  assert.deepEqual(requestsToPrune(crt(3, true, 2), [cr('3'), cr('1'), cr('2')]), ['a-1']);
  // a renewal in flight (revision 4) does not cost revision 3 its request
  assert.deepEqual(requestsToPrune(crt(3, true), [cr('3'), cr('4')]), []);
  // not Ready: nothing is pruned
  assert.deepEqual(requestsToPrune(crt(3, false), [cr('1'), cr('2'), cr('3')]), []);
  // unparseable revisions are left to the request manager
  assert.deepEqual(requestsToPrune(crt(2, true), [cr(undefined), cr('1'), cr('2')]), ['a-1']);
});
