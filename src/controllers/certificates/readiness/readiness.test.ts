import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey } from '../../../pki/keys.ts';
import { createCSR } from '../../../pki/csr.ts';
import { signCertificate } from '../../../pki/sign.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../../api/types.ts';
import type { Secret } from '../../../api/meta.ts';
import { issuanceCompleting } from '../policies.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('readiness leaves a Certificate to the issuing controller only between its Secret write and its status write', async () => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const issue = async () => signCertificate({ csrPem: await createCSR({ dnsNames: ['a.example.test'] }, key), notBefore: new Date(), durationMs: 3_600_000, selfSignKeyPem: key });
  const [fresh, previous] = [await issue(), await issue()];
  const issuing = [{ type: 'Issuing', status: 'True' as const, reason: 'Renewing', message: '' }];
  const crt = (conditions = issuing): CertificateObj => ({
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'a', namespace: 'default' },
    spec: { secretName: 'a-tls', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' } }, status: { revision: 1, conditions },
  });
  const secret = (pem: string): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-tls', namespace: 'default' }, data: { 'tls.crt': b64(pem), 'tls.key': b64(key) } });
  const nextCR: CertificateRequestObj = {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'a-2', namespace: 'default' },
    spec: { request: '', issuerRef: { name: 'ca' } }, status: { certificate: b64(fresh) },
  };
  assert.equal(issuanceCompleting({ certificate: crt(), secret: secret(fresh), nextCR }), true, 'Secret holds what the next request issued, Issuing still True');
  assert.equal(issuanceCompleting({ certificate: crt(), secret: secret(previous), nextCR }), false, 'the Secret still holds the previous certificate');
  assert.equal(issuanceCompleting({ certificate: crt([]), secret: secret(fresh), nextCR }), false, 'issuance finished: readiness owns the status again');
  assert.equal(issuanceCompleting({ certificate: crt(), secret: secret(fresh) }), false, 'no next request');
  assert.equal(issuanceCompleting({ certificate: crt(), nextCR }), false, 'no Secret');
});
