// Issue 15: certsmith's CSRs no longer carry BasicConstraints (as cert-manager's, with the
// UseCertificateRequestBasicConstraints gate off). A cluster that upgrades keeps the requests the
// old code made, with BasicConstraints CA:FALSE (or CA:TRUE for an isCA Certificate): they must
// still match their Certificate, so nothing is re-issued (no RequestChanged, no replaced request).
// Requests made by the new code match too, for leaves and CAs alike: isCA is compared on the
// request's spec, as upstream's RequestMatchesSpec does, and on the CSR only where it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstViolation, requestMismatches, secretPolicies } from './policies.ts';
import { decideRequestManager } from './requestmanager/requestmanager.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';
import { createCSR } from '../../pki/csr.ts';
import { legacyCSR } from '../../pki/testing/csr-by-hand.ts';
import { templateOf } from '../../shared/certificate-template.ts';
import { type Certificate as CertificateObj } from '../../api/types.ts';
import { cert, certificate, certificateRequest, cond, issuedAnnotations, key, secretFor } from '../testing/fixtures.ts';

type Spec = Partial<CertificateObj['spec']>;
const leafSpec: Spec = { dnsNames: ['a.example.test'], usages: ['digital signature', 'key encipherment', 'server auth'] };
const caSpec: Spec = { isCA: true, commonName: 'root', dnsNames: undefined };

/** A request for `crt` as the request manager makes it (spec.isCA copied), holding `csrPem`. */
function requestFor(crt: CertificateObj, csrPem: string, revision = '1') {
  return certificateRequest({
    name: `a-${revision}`, csrPem,
    annotations: { [CertificateAnnotation.revision]: revision, [CertificateAnnotation.issuanceAttempt]: '0' },
    spec: { ...(crt.spec.isCA ? { isCA: true } : {}), ...(crt.spec.usages ? { usages: crt.spec.usages } : {}) },
  });
}

test('a request made by the old code (BasicConstraints CA:FALSE in the CSR) still matches its non-CA Certificate: no re-issuance', async () => {
  const keyPem = await key('main');
  const crt = certificate({ spec: leafSpec });
  const old = requestFor(crt, await legacyCSR(templateOf(crt.spec), keyPem));
  assert.deepEqual(requestMismatches(crt, old), []);

  // the trigger and readiness chain: an issued Secret with the old request as the current one
  const secret = secretFor({ keyPem, certPem: await cert({ keyPem, template: templateOf(crt.spec) }), annotations: issuedAnnotations() });
  assert.equal(firstViolation(secretPolicies, { certificate: crt, secret, currentCR: old }), undefined);

  // the request manager keeps an old request of the next revision (no delete, no new request)
  const issuing = certificate({
    spec: leafSpec,
    status: { revision: 1, nextPrivateKeySecretName: 'a-next', conditions: [cond('Issuing', 'True', 'Renewing', '')] },
  });
  const nextKey = await key('next');
  const pending = requestFor(issuing, await legacyCSR(templateOf(issuing.spec), nextKey), '2');
  assert.deepEqual(decideRequestManager({ certificate: issuing, nextKeySecret: secretFor({ name: 'a-next', keyPem: nextKey }), requests: [pending] }), []);
});

test('a request made by the old code for an isCA Certificate (CA:TRUE in the CSR) still matches it', async () => {
  const keyPem = await key('main');
  const crt = certificate({ spec: caSpec });
  const old = requestFor(crt, await legacyCSR(templateOf(crt.spec), keyPem));
  assert.deepEqual(requestMismatches(crt, old), []);
});

test('requests made by the new code (no BasicConstraints) match leaf and CA Certificates; isCA changes are still seen', async () => {
  const keyPem = await key('main');
  for (const spec of [leafSpec, caSpec]) {
    const crt = certificate({ spec });
    const csrPem = await createCSR(templateOf(crt.spec), keyPem);
    assert.deepEqual(requestMismatches(crt, requestFor(crt, csrPem)), [], JSON.stringify(spec));
  }
  // turning isCA on or off is a change of the request's spec (upstream compares req.Spec.IsCA);
  // usages are compared on the request's spec as well (both unset here), not on the CSR, whose
  // key usages differ by cert sign
  const leaf = certificate({ spec: { ...caSpec, isCA: false } });
  const ca = certificate({ spec: caSpec });
  const leafRequest = requestFor(leaf, await createCSR(templateOf(leaf.spec), keyPem));
  const caRequest = requestFor(ca, await createCSR(templateOf(ca.spec), keyPem));
  assert.deepEqual(requestMismatches(ca, leafRequest), ['spec.isCA']);
  assert.deepEqual(requestMismatches(leaf, caRequest), ['spec.isCA']);
  // an old CSR stating CA:FALSE against an isCA spec is reported by the CSR side as well
  const oldLeafCSR = await legacyCSR({ commonName: 'root' }, keyPem);
  assert.ok(requestMismatches(ca, requestFor(ca, oldLeafCSR))?.includes('spec.isCA'));
});

// encodeUsagesInRequest: false. The new code's CSR carries no usages (as upstream's GenerateCSR);
// the old code's carried the default key usages whatever spec.usages said. Both match their
// Certificate, since usages are compared on the request's spec as upstream does.
const clientSpec: Spec = { dnsNames: ['c.example.test'], encodeUsagesInRequest: false, usages: ['digital signature', 'key encipherment', 'client auth'] };

test('encodeUsagesInRequest: false: a request made by the old code (default key usages in the CSR) still matches: no re-issuance', async () => {
  const keyPem = await key('main');
  const crt = certificate({ spec: clientSpec });
  const oldCSR = await createCSR({ dnsNames: crt.spec.dnsNames }, keyPem);
  const old = requestFor(crt, oldCSR);
  assert.deepEqual(requestMismatches(crt, old), []);

  const secret = secretFor({ keyPem, certPem: await cert({ keyPem, template: templateOf(crt.spec) }), annotations: issuedAnnotations() });
  assert.equal(firstViolation(secretPolicies, { certificate: crt, secret, currentCR: old }), undefined);

  const issuing = certificate({
    spec: clientSpec,
    status: { revision: 1, nextPrivateKeySecretName: 'a-next', conditions: [cond('Issuing', 'True', 'Renewing', '')] },
  });
  const nextKey = await key('next');
  const pending = requestFor(issuing, await createCSR({ dnsNames: issuing.spec.dnsNames }, nextKey), '2');
  assert.deepEqual(decideRequestManager({ certificate: issuing, nextKeySecret: secretFor({ name: 'a-next', keyPem: nextKey }), requests: [pending] }), []);
});

test('encodeUsagesInRequest: false: the new code\'s request (no usages in the CSR) matches; a change of spec.usages is still seen', async () => {
  const keyPem = await key('main');
  const crt = certificate({ spec: clientSpec });
  const csrPem = await createCSR(templateOf(crt.spec), keyPem);
  const request = requestFor(crt, csrPem);
  assert.deepEqual(requestMismatches(crt, request), []);
  const changed = certificate({ spec: { ...clientSpec, usages: ['digital signature', 'key encipherment', 'server auth'] } });
  assert.deepEqual(requestMismatches(changed, request), ['spec.usages']);
  // and so is a request stored by the old code
  assert.deepEqual(requestMismatches(changed, requestFor(crt, await createCSR({ dnsNames: crt.spec.dnsNames }, keyPem))), ['spec.usages']);
});
