import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCSR } from '../pki/csr.ts';
import { generatePrivateKey } from '../pki/keys.ts';
import { applyJSONPatch } from '../store/patch.ts';
import { reviewAdmission, type AdmissionAnswer, type AdmissionMode } from './admission-review.ts';

const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
const csrPem = await createCSR({ dnsNames: ['a.example'] }, keyPem);

const gvk = (group: string, kind: string) => ({ group, version: 'v1', kind });
const certificate = (spec: Record<string, unknown>) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec });
const goodCertificate = certificate({ secretName: 'web-tls', dnsNames: ['a.example'], issuerRef: { name: 'ca' } });
const request = (spec: Record<string, unknown>) => ({
  apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'web-1', namespace: 'default' },
  spec: { request: Buffer.from(csrPem).toString('base64'), issuerRef: { name: 'ca' }, ...spec },
});
const userInfo = { username: 'alice', uid: 'u-1', groups: ['system:authenticated', 'devs'], extra: { scopes: ['a'] } };

function nested(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function review(req: Record<string, unknown>) {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'req-1', ...req } };
}

interface Case {
  name: string;
  mode: AdmissionMode;
  body: unknown;
  /** HTTP status and, for 200, allowed and status code of the response */
  http: 200 | 400;
  allowed?: boolean;
  code?: number;
  /** what the message must say */
  message?: RegExp;
  /** the object after the patch, for mutations; undefined: no patch expected */
  patched?: (object: any) => unknown;
}

const cases: Case[] = [
  // well-formed reviews
  { name: 'a valid Certificate is allowed', mode: 'validate', http: 200, allowed: true, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: goodCertificate }) },
  {
    name: 'a Certificate with no identity is refused with 422, the field path and kube\'s wording', mode: 'validate', http: 200, allowed: false, code: 422,
    message: /^Certificate\.cert-manager\.io "web" is invalid: spec: Invalid value: "": at least one of commonName/,
    body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: certificate({ secretName: 's', issuerRef: { name: 'ca' } }) }),
  },
  {
    name: 'every field error is listed', mode: 'validate', http: 200, allowed: false, code: 422,
    message: /is invalid: \[spec\.privateKey\.algorithm: Unsupported value: "ECDSB": supported values: "RSA", "ECDSA", "Ed25519", spec\.secretName: Required value: must be specified, spec\.issuerRef\.name: Required value/,
    body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: certificate({ dnsNames: ['a.example'], privateKey: { algorithm: 'ECDSB' } }) }),
  },
  {
    name: 'an Issuer with no issuer type is refused', mode: 'validate', http: 200, allowed: false, code: 422, message: /Issuer\.cert-manager\.io "ca" is invalid: spec: Required value: at least one issuer must be configured/,
    body: review({ kind: gvk('cert-manager.io', 'Issuer'), operation: 'CREATE', object: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'ca', namespace: 'default' }, spec: {} } }),
  },
  {
    name: 'the kind is found from request.resource when request.kind is absent', mode: 'validate', http: 200, allowed: false, code: 422, message: /ClusterIssuer\.cert-manager\.io "ca" is invalid/,
    body: review({ resource: { group: 'cert-manager.io', version: 'v1', resource: 'clusterissuers' }, operation: 'CREATE', object: { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'ca' }, spec: {} } }),
  },
  {
    name: 'UPDATE passes oldObject: a CertificateRequest spec cannot change', mode: 'validate', http: 200, allowed: false, code: 422, message: /spec: Forbidden: cannot change spec after creation/,
    body: review({ kind: gvk('cert-manager.io', 'CertificateRequest'), operation: 'UPDATE', object: request({ duration: '2h' }), oldObject: request({}) }),
  },
  {
    name: 'UPDATE that keeps the spec is allowed', mode: 'validate', http: 200, allowed: true,
    body: review({ kind: gvk('cert-manager.io', 'CertificateRequest'), operation: 'UPDATE', object: request({}), oldObject: request({}) }),
  },
  {
    name: 'what no kind may hold (a non-string annotation) is refused before validation', mode: 'validate', http: 200, allowed: false, code: 400, message: /cannot unmarshal number/,
    body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: { ...goodCertificate, metadata: { name: 'web', annotations: { a: 1 } } } }),
  },
  { name: 'DELETE is allowed', mode: 'validate', http: 200, allowed: true, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'DELETE', oldObject: goodCertificate }) },
  { name: 'CONNECT is allowed', mode: 'mutate', http: 200, allowed: true, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CONNECT' }) },
  {
    name: 'a kind the webhook does not handle is allowed with no patch', mode: 'mutate', http: 200, allowed: true,
    body: review({ kind: gvk('', 'Secret'), operation: 'CREATE', userInfo, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } }),
  },
  {
    name: 'an unknown kind of a cert-manager group (another version) is allowed', mode: 'validate', http: 200, allowed: true,
    body: review({ kind: { group: 'cert-manager.io', version: 'v1alpha2', kind: 'Certificate' }, operation: 'CREATE', object: certificate({}) }),
  },
  // mutation
  {
    name: 'mutate: a new CertificateRequest gets its creator\'s identity by JSON patch', mode: 'mutate', http: 200, allowed: true,
    body: review({ kind: gvk('cert-manager.io', 'CertificateRequest'), operation: 'CREATE', userInfo, object: request({ username: 'mallory', groups: ['system:masters'] }) }),
    patched: (o) => ({ ...o, spec: { ...o.spec, username: 'alice', uid: 'u-1', groups: ['system:authenticated', 'devs'], extra: { scopes: ['a'] } } }),
  },
  {
    name: 'mutate: an identity sent by a client without uid/groups is removed', mode: 'mutate', http: 200, allowed: true,
    body: review({ kind: gvk('cert-manager.io', 'CertificateRequest'), operation: 'CREATE', userInfo: { username: 'bob' }, object: request({ uid: 'forged', groups: ['x'] }) }),
    patched: (o) => ({ ...o, spec: { request: o.spec.request, issuerRef: o.spec.issuerRef, username: 'bob' } }),
  },
  { name: 'mutate: nothing to default, no patch', mode: 'mutate', http: 200, allowed: true, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', userInfo, object: goodCertificate }) },
  { name: 'mutate: an UPDATE does not restamp the identity', mode: 'mutate', http: 200, allowed: true, body: review({ kind: gvk('cert-manager.io', 'CertificateRequest'), operation: 'UPDATE', userInfo, object: request({ username: 'x' }), oldObject: request({ username: 'x' }) }) },
  // bad input
  { name: 'not an object', mode: 'validate', http: 400, message: /must be a JSON object/, body: [1, 2] },
  { name: 'null', mode: 'mutate', http: 400, message: /must be a JSON object/, body: null },
  { name: 'wrong kind of review', mode: 'validate', http: 400, message: /expected apiVersion "admission\.k8s\.io\/v1" and kind "AdmissionReview", got apiVersion "v1" and kind "Pod"/, body: { apiVersion: 'v1', kind: 'Pod', request: { uid: 'x' } } },
  { name: 'a v1beta1 review', mode: 'validate', http: 400, message: /got apiVersion "admission\.k8s\.io\/v1beta1"/, body: { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x' } } },
  { name: 'no request', mode: 'validate', http: 400, message: /request is missing/, body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' } },
  { name: 'no request.uid', mode: 'mutate', http: 400, message: /request\.uid is missing/, body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } } },
  { name: 'a non-string uid', mode: 'validate', http: 400, message: /request\.uid is missing or not a string/, body: review({ uid: 7 }) },
  { name: 'no object', mode: 'validate', http: 200, allowed: false, code: 400, message: /request\.object is missing/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE' }) },
  { name: 'an object that is a string', mode: 'mutate', http: 200, allowed: false, code: 400, message: /request\.object is missing or not an object/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: 'x' }) },
  { name: 'UPDATE without oldObject', mode: 'validate', http: 200, allowed: false, code: 400, message: /request\.oldObject is missing/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'UPDATE', object: goodCertificate }) },
  { name: 'an object without metadata', mode: 'validate', http: 200, allowed: false, code: 400, message: /metadata is missing/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: { spec: {} } }) },
  { name: 'an object nested past 200 levels', mode: 'mutate', http: 200, allowed: false, code: 400, message: /^request\.object: the object is nested too deeply: more than 200 levels/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: { ...goodCertificate, spec: nested(300) } }) },
  { name: 'an oldObject with a lone surrogate', mode: 'validate', http: 200, allowed: false, message: /^request\.oldObject: metadata\.name: Invalid value: the value is not well-formed Unicode/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'UPDATE', object: goodCertificate, oldObject: { ...goodCertificate, metadata: { name: 'a\ud800' } } }) },
  { name: 'an unknown operation', mode: 'validate', http: 200, allowed: false, code: 400, message: /request\.operation "PATCH" is not one of/, body: review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'PATCH', object: goodCertificate }) },
];

function check(c: Case, a: AdmissionAnswer) {
  assert.equal(a.httpStatus, c.http);
  if (a.httpStatus === 400) {
    assert.match(a.message, c.message!);
    return;
  }
  const r = a.review.response;
  assert.equal(a.review.apiVersion, 'admission.k8s.io/v1');
  assert.equal(a.review.kind, 'AdmissionReview');
  assert.equal(r.uid, 'req-1', 'the response answers the request uid');
  assert.equal(r.allowed, c.allowed);
  if (c.code !== undefined) assert.equal(r.status?.code, c.code);
  if (c.message) assert.match(r.status?.message ?? '', c.message);
  if (c.allowed) assert.equal(r.status, undefined);
  const object = (c.body as any).request.object;
  if (c.patched) {
    assert.equal(r.patchType, 'JSONPatch');
    const ops = JSON.parse(Buffer.from(r.patch!, 'base64').toString('utf8'));
    assert.deepEqual(applyJSONPatch(object, ops), c.patched(structuredClone(object)));
  } else {
    assert.equal(r.patch, undefined);
    assert.equal(r.patchType, undefined);
  }
}

for (const c of cases) {
  test(`${c.mode}: ${c.name}`, () => {
    const before = structuredClone(c.body);
    check(c, reviewAdmission(c.mode, c.body));
    assert.deepEqual(c.body, before, 'the review is not modified');
  });
}

test('a 422 carries each field error as a cause with its field apart', () => {
  const a = reviewAdmission('validate', review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: certificate({ dnsNames: ['a.example'], issuerRef: { name: 'ca' } }) }));
  assert.equal(a.httpStatus, 200);
  if (a.httpStatus !== 200) return;
  assert.deepEqual(a.review.response.status, {
    code: 422, reason: 'Invalid',
    message: 'Certificate.cert-manager.io "web" is invalid: spec.secretName: Required value: must be specified',
    details: { name: 'web', group: 'cert-manager.io', kind: 'Certificate', causes: [{ field: 'spec.secretName', message: 'Required value: must be specified', reason: 'FieldValueRequired' }] },
  });
});

test('a generateName object is named by its prefix in the message', () => {
  const obj = { ...certificate({ secretName: 's', issuerRef: { name: 'ca' } }), metadata: { generateName: 'web-', namespace: 'default' } };
  const a = reviewAdmission('validate', review({ kind: gvk('cert-manager.io', 'Certificate'), operation: 'CREATE', object: obj }));
  assert.equal(a.httpStatus, 200);
  if (a.httpStatus === 200) assert.match(a.review.response.status!.message, /^Certificate\.cert-manager\.io "web-" is invalid/);
});
