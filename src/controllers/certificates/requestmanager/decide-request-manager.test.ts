// decideRequestManager as a table: while Issuing=True exactly one CertificateRequest for the next
// revision, made from the spec and the next private key; one row per action and reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideRequestManager, type RequestAction } from './requestmanager.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { b64, certificate, certificateRequest, cond, csr, key, secretFor } from '../../testing/fixtures.ts';

interface Row {
  name: string;
  why: string;
  certificate: CertificateObj;
  nextKeySecret?: Secret;
  requests: CertificateRequestObj[];
  want: Partial<RequestAction>[];
}

test('decideRequestManager: one row per action', async () => {
  const nextKey = await key('next');
  const otherKey = await key('other');
  const issuing = cond('Issuing', 'True', 'Renewing', '', { lastTransitionTime: '2026-06-01T00:00:00Z' });
  const status = (extra: CertificateObj['status'] = {}): CertificateObj['status'] => ({ revision: 1, nextPrivateKeySecretName: 'a-next', conditions: [issuing], ...extra });
  const crt = certificate({ status: status() });
  const keySecret = secretFor({ name: 'a-next', keyPem: nextKey });
  const request = async (o: { name?: string; revision?: string; attempt?: string; keyPem?: string; dnsNames?: string[]; status?: CertificateRequestObj['status'] } = {}) => certificateRequest({
    name: o.name ?? 'a-2',
    csrPem: await csr({ dnsNames: o.dnsNames ?? ['a.example.test'] }, o.keyPem ?? nextKey),
    annotations: {
      ...(o.revision !== '' ? { [CertificateAnnotation.revision]: o.revision ?? '2' } : {}),
      ...(o.attempt !== undefined ? { [CertificateAnnotation.issuanceAttempt]: o.attempt } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  });
  const failedAt = (t: string): CertificateRequestObj['status'] => ({ failureTime: t, conditions: [cond('Ready', 'False', 'Failed')] });
  const create = (attempt = 0, name = 'a-2', revision = 2) => ({ kind: 'create' as const, name, revision, attempt, keySecretName: 'a-next' });

  const rows: Row[] = [
    { name: 'not issuing', why: 'nothing happens until the trigger sets Issuing=True', certificate: certificate({ status: status({ conditions: [] }) }), nextKeySecret: keySecret, requests: [], want: [] },
    { name: 'being deleted', why: 'a Certificate being deleted gets no new request', certificate: certificate({ status: status(), deletionTimestamp: '2026-06-01T00:00:00Z' }), nextKeySecret: keySecret, requests: [], want: [] },
    { name: 'no next key named yet', why: 'waits for the key manager\'s status.nextPrivateKeySecretName', certificate: certificate({ status: status({ nextPrivateKeySecretName: undefined }) }), nextKeySecret: keySecret, requests: [], want: [] },
    { name: 'next key Secret not seen yet', why: 'waits for the key Secret', certificate: crt, requests: [], want: [] },
    { name: 'next key does not parse', why: 'no CSR can be made from a broken key: wait for the key manager to replace it', certificate: crt, nextKeySecret: secretFor({ name: 'a-next', data: { 'tls.key': b64('garbage') } }), requests: [], want: [] },
    { name: 'no request', why: 'creates the stable name <certificate>-<revision+1> for the current attempt', certificate: crt, nextKeySecret: keySecret, requests: [], want: [create()] },
    { name: 'first issuance', why: 'no status.revision: revision 1', certificate: certificate({ status: status({ revision: undefined }) }), nextKeySecret: keySecret, requests: [], want: [create(0, 'a-1', 1)] },
    { name: 'after two failed attempts', why: 'the request records the attempt it was made for', certificate: certificate({ status: status({ issuanceAttempts: 2 }) }), nextKeySecret: keySecret, requests: [], want: [create(2)] },
    { name: 'a matching request', why: 'kept: no churn while the issuer works', certificate: crt, nextKeySecret: keySecret, requests: [await request({ attempt: '0' })], want: [] },
    { name: 'a request of the current revision', why: 'other revisions are the revision manager\'s, never deleted here', certificate: crt, nextKeySecret: keySecret, requests: [await request({ name: 'a-1', revision: '1' })], want: [create()] },
    {
      name: 'a request without a revision annotation', why: 'deleted (invalid-revision) and, under another name, replaced in the same pass',
      certificate: crt, nextKeySecret: keySecret, requests: [await request({ name: 'stray', revision: '' })],
      want: [{ kind: 'delete', name: 'stray', cause: 'invalid-revision' }, create()],
    },
    { name: 'a request with a revision that is not a number', why: 'as good as none: deleted', certificate: crt, nextKeySecret: keySecret, requests: [await request({ name: 'stray', revision: 'two' })], want: [{ kind: 'delete', name: 'stray', cause: 'invalid-revision' }, create()] },
    {
      name: 'a request for other names', why: 'a spec change replaces the request (mismatch); the new one waits until the delete is seen, its name being the same',
      certificate: crt, nextKeySecret: keySecret, requests: [await request({ dnsNames: ['b.example.test'] })],
      want: [{ kind: 'delete', name: 'a-2', cause: 'mismatch' }],
    },
    { name: 'a request for another key', why: 'the request must be for the next private key', certificate: crt, nextKeySecret: keySecret, requests: [await request({ keyPem: otherKey })], want: [{ kind: 'delete', name: 'a-2', cause: 'mismatch' }] },
    {
      name: 'a request from a failed earlier attempt', why: 'replaced, never reused (upstream reuses a denied one and never recovers)',
      certificate: certificate({ status: status({ issuanceAttempts: 1 }) }), nextKeySecret: keySecret, requests: [await request({ attempt: '0', status: failedAt('2026-05-31T00:00:00Z') })],
      want: [{ kind: 'delete', name: 'a-2', cause: 'earlier-attempt' }],
    },
    {
      name: 'mismatched and from an earlier attempt', why: 'mismatch is the cause reported first (only mismatch deletes are backed off)',
      certificate: certificate({ status: status({ issuanceAttempts: 1 }) }), nextKeySecret: keySecret, requests: [await request({ attempt: '0', keyPem: otherKey })],
      want: [{ kind: 'delete', name: 'a-2', cause: 'mismatch' }],
    },
    {
      name: 'another controller\'s request that failed before Issuing began', why: 'without an attempt annotation, upstream\'s rule on failureTime',
      certificate: crt, nextKeySecret: keySecret, requests: [await request({ status: failedAt('2026-05-31T00:00:00Z') })],
      want: [{ kind: 'delete', name: 'a-2', cause: 'earlier-attempt' }],
    },
    {
      name: 'another controller\'s request that failed since Issuing began', why: 'a failure of this attempt is for the issuing controller to record, not replaced here',
      certificate: crt, nextKeySecret: keySecret, requests: [await request({ status: failedAt('2026-06-01T00:05:00Z') })], want: [],
    },
  ];
  const failures: string[] = [];
  for (const r of rows) {
    const got = decideRequestManager({ certificate: r.certificate, ...(r.nextKeySecret ? { nextKeySecret: r.nextKeySecret } : {}), requests: r.requests });
    // compare only the fields the row names (a delete's `why` text is for people)
    const shown = got.map((a, i) => Object.fromEntries(Object.keys(r.want[i] ?? a).map((k) => [k, (a as Record<string, unknown>)[k]])));
    try {
      assert.deepEqual(shown, r.want);
    } catch {
      failures.push(`${r.name} (${r.why}): got ${JSON.stringify(got)}`);
    }
  }
  assert.deepEqual(failures, []);
});
