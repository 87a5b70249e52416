// Impersonation (kubectl --as/--as-group/--as-uid): the token's holder is a system:masters admin,
// who may impersonate anyone on a cluster, so a request with Impersonate-* headers runs as the
// user named, as kube-apiserver runs it: a CertificateRequest records that requester (what
// approver-policy and the approval checks read), and SelfSubjectReview says who it is. Ignoring the
// headers ran the request as admin without saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import crypto from 'node:crypto';
import { createCSR } from '../pki/csr.ts';
import { startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('impersonation');

function post(path: string, body: unknown, headers: Record<string, string | string[]>): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const review = (headers: Record<string, string | string[]>) =>
  post('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, headers);

test('Impersonate-User, -Group, -Uid and -Extra-* make the request run as that user, with system:authenticated added', async () => {
  const r = await review({ 'Impersonate-User': 'bob', 'Impersonate-Group': ['devs', 'ops'], 'Impersonate-Uid': 'u-1', 'Impersonate-Extra-Scopes': ['view', 'edit'], 'Impersonate-Extra-Acme%2Fteam': 'a' });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.status.userInfo, { username: 'bob', uid: 'u-1', groups: ['devs', 'ops', 'system:authenticated'], extra: { scopes: ['view', 'edit'], 'acme/team': ['a'] } });
  // a service account without groups gets its fixed groups
  const sa = await review({ 'Impersonate-User': 'system:serviceaccount:team-a:deployer' });
  assert.deepEqual(sa.body.status.userInfo, { username: 'system:serviceaccount:team-a:deployer', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'] });
  // without the headers: the token's own user
  assert.equal((await review({})).body.status.userInfo.username, 'admin');
});

test('a CertificateRequest created while impersonating records the impersonated requester', async () => {
  const key = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const csr = await createCSR({ dnsNames: ['bob.example.test'] }, key);
  const cr = { apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'as-bob' }, spec: { request: Buffer.from(csr).toString('base64'), issuerRef: { name: 'ca' } } };
  const r = await post('/apis/cert-manager.io/v1/namespaces/default/certificaterequests', cr, { 'Impersonate-User': 'bob', 'Impersonate-Group': 'devs' });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.spec.username, 'bob');
  assert.deepEqual(r.body.spec.groups, ['devs', 'system:authenticated']);
});

test('groups, uid or extra without a user to impersonate are refused', async () => {
  const r = await review({ 'Impersonate-Group': 'devs' });
  assert.equal(r.status, 400);
  assert.match(r.body.message, /without impersonating a user/);
});
