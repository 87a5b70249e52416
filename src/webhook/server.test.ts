// The webhook against the embedded API server: it creates its CA Secret there, serves over TLS
// a client verifies with the CA read back from that Secret, and survives whatever is POSTed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import type { KubeObject } from '../api/meta.ts';
import { NamespaceType, SecretType } from '../api/resources.ts';
import { realClock } from '../runtime/clock.ts';
import { startTestApiServer } from '../server/testing/test-api-server.ts';
import { HttpStore } from '../store/http/http-store.ts';
import { applyJSONPatch } from '../store/patch.ts';
import { ServingCertificates } from './serving-ca.ts';
import { startWebhookServer } from './server.ts';

const { api } = await startTestApiServer('webhook');
const store = new HttpStore({ server: api.url, qps: 0 });
await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'certsmith-test' } });
const certificates = new ServingCertificates({ store, namespace: 'certsmith-test', secretName: 'webhook-ca', clock: realClock, dnsNames: ['127.0.0.1', 'localhost'] });
const first = await certificates.start();
const webhook = await startWebhookServer({ host: '127.0.0.1', port: 0, certPem: first.certPem, keyPem: first.keyPem, maxBodyBytes: 64 * 1024 });
after(async () => {
  certificates.stop();
  await webhook.close();
  await store.close();
});

const secret = await store.get<KubeObject & { data: Record<string, string> }>(SecretType, 'certsmith-test', 'webhook-ca');
assert.ok(secret, 'the CA Secret is created on the API server');
const caPem = Buffer.from(secret.data['ca.crt'], 'base64').toString();

interface Reply { status: number; headers: Record<string, unknown>; text: string; json?: any }

function send(o: { method?: string; path: string; body?: string | Buffer; headers?: Record<string, string>; chunked?: boolean; host?: string; ca?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: o.host ?? '127.0.0.1', port: webhook.port, path: o.path, method: o.method ?? 'POST', ca: o.ca ?? caPem,
      headers: { 'Content-Type': 'application/json', ...(o.headers ?? {}) }, agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json;
        try { json = JSON.parse(text); } catch { /* text answers */ }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (o.body !== undefined && o.chunked) {
      // no Content-Length: the limit must hold while streaming
      const buf = Buffer.from(o.body);
      for (let i = 0; i < buf.length; i += 16 * 1024) req.write(buf.subarray(i, i + 16 * 1024));
      req.end();
    } else req.end(o.body);
  });
}

const review = (request: Record<string, unknown>) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1', ...request } });
const certificateGVK = { group: 'cert-manager.io', version: 'v1', kind: 'Certificate' };

test('the CA Secret is the kubernetes.io/tls Secret the CA injector may inject, and it verifies the serving certificate', async () => {
  const s = await store.get<KubeObject & { type: string; data: Record<string, string> }>(SecretType, 'certsmith-test', 'webhook-ca');
  assert.equal(s!.type, 'kubernetes.io/tls');
  assert.equal(s!.metadata.annotations?.['cert-manager.io/allow-direct-injection'], 'true');
  assert.ok(new X509Certificate(first.certPem).verify(new X509Certificate(caPem).publicKey));
  // by IP and by name, with only the CA from the Secret trusted
  assert.equal((await send({ method: 'GET', path: '/healthz' })).text, 'ok\n');
  assert.equal((await send({ method: 'GET', path: '/readyz', host: 'localhost' })).status, 200);
  // another CA is not trusted: the client refuses the handshake
  const { createCA } = await import('./serving-ca.ts');
  await assert.rejects(send({ method: 'GET', path: '/healthz', ca: (await createCA(new Date())).certPem }), /self-signed|unable to verify|certificate/i);
});

test('POST /validate: an invalid Certificate is refused with the field path; a valid one passes', async () => {
  const bad = await send({ path: '/validate', body: review({ kind: certificateGVK, operation: 'CREATE', object: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec: { dnsNames: ['a.example'], issuerRef: { name: 'ca' } } } }) });
  assert.equal(bad.status, 200);
  assert.equal(bad.json.kind, 'AdmissionReview');
  assert.equal(bad.json.response.uid, 'u-1');
  assert.equal(bad.json.response.allowed, false);
  assert.equal(bad.json.response.status.code, 422);
  assert.equal(bad.json.response.status.reason, 'Invalid');
  assert.equal(bad.json.response.status.message, 'Certificate.cert-manager.io "web" is invalid: spec.secretName: Required value: must be specified');
  const good = await send({ path: '/validate', body: review({ kind: certificateGVK, operation: 'CREATE', object: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec: { secretName: 's', dnsNames: ['a.example'], issuerRef: { name: 'ca' } } } }) });
  assert.deepEqual(good.json.response, { uid: 'u-1', allowed: true });
});

test('POST /mutate: a JSON patch that stamps the requester onto a new CertificateRequest', async () => {
  const object = { apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest', metadata: { name: 'r', namespace: 'default' }, spec: { request: 'eA==', issuerRef: { name: 'ca' } } };
  const r = await send({ path: '/mutate', body: review({ kind: { ...certificateGVK, kind: 'CertificateRequest' }, operation: 'CREATE', userInfo: { username: 'alice', groups: ['devs'] }, object }) });
  assert.equal(r.json.response.allowed, true);
  assert.equal(r.json.response.patchType, 'JSONPatch');
  const patched = applyJSONPatch<typeof object>(object, JSON.parse(Buffer.from(r.json.response.patch, 'base64').toString()));
  assert.deepEqual(patched.spec, { ...object.spec, username: 'alice', groups: ['devs'] });
});

test('bad input gets a clear refusal and the webhook keeps serving', async () => {
  const cases: Array<{ name: string; req: Parameters<typeof send>[0]; status: number; text?: RegExp; denied?: RegExp }> = [
    { name: 'malformed JSON', req: { path: '/validate', body: '{"apiVersion": "admission.k8s.io/v1", ' }, status: 400, text: /malformed AdmissionReview: the body is not JSON/ },
    { name: 'empty body', req: { path: '/mutate', body: '' }, status: 400, text: /the body is not JSON/ },
    { name: 'wrong kind', req: { path: '/validate', body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap' }) }, status: 400, text: /expected apiVersion "admission\.k8s\.io\/v1" and kind "AdmissionReview", got apiVersion "v1" and kind "ConfigMap"/ },
    { name: 'missing uid', req: { path: '/validate', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }) }, status: 400, text: /request\.uid is missing/ },
    { name: 'missing object', req: { path: '/validate', body: review({ kind: certificateGVK, operation: 'CREATE' }) }, status: 200, denied: /request\.object is missing/ },
    { name: 'huge body (Content-Length)', req: { path: '/validate', body: Buffer.alloc(200 * 1024, 0x20) }, status: 413, text: /larger than 65536 bytes/ },
    { name: 'huge body (chunked)', req: { path: '/mutate', body: Buffer.alloc(200 * 1024, 0x20), chunked: true }, status: 413, text: /larger than 65536 bytes/ },
    { name: 'deeply nested JSON', req: { path: '/validate', body: review({ kind: certificateGVK, operation: 'CREATE', object: { metadata: { name: 'x' }, spec: 'DEEP' } }).replace('"DEEP"', '['.repeat(20000) + ']'.repeat(20000)) }, status: 200, denied: /nest|depth|deep/i },
    { name: 'GET on /validate', req: { method: 'GET', path: '/validate' }, status: 405, text: /GET is not allowed on \/validate/ },
    { name: 'unknown path', req: { path: '/convert', body: '{}' }, status: 404, text: /no such path "\/convert"/ },
    { name: 'not JSON content', req: { path: '/validate', body: 'a: b', headers: { 'Content-Type': 'application/yaml' } }, status: 415, text: /unsupported content type "application\/yaml"/ },
  ];
  for (const c of cases) {
    const r = await send(c.req);
    assert.equal(r.status, c.status, `${c.name}: ${r.text}`);
    if (c.text) assert.match(r.text, c.text, c.name);
    if (c.denied) {
      assert.equal(r.json.response.allowed, false, c.name);
      assert.match(r.json.response.status.message, c.denied, c.name);
    }
    assert.equal((await send({ method: 'GET', path: '/healthz' })).status, 200, `alive after ${c.name}`);
  }
});

test('/readyz reports what keeps the webhook from serving; /healthz stays 200', async () => {
  let problem: string | undefined = 'the serving certificate expired';
  const other = await startWebhookServer({ host: '127.0.0.1', port: 0, certPem: first.certPem, keyPem: first.keyPem, notReady: () => problem });
  try {
    const get = (path: string) => new Promise<{ status: number; text: string }>((res, rej) => {
      const req = https.request({ host: '127.0.0.1', port: other.port, path, ca: caPem, agent: false }, (r) => {
        let t = '';
        r.on('data', (d) => (t += d));
        r.on('end', () => res({ status: r.statusCode!, text: t }));
      });
      req.on('error', rej);
      req.end();
    });
    assert.deepEqual(await get('/readyz'), { status: 503, text: 'not ready: the serving certificate expired\n' });
    assert.equal((await get('/healthz')).status, 200);
    problem = undefined;
    assert.deepEqual(await get('/readyz'), { status: 200, text: 'ok\n' });
  } finally {
    await other.close();
  }
});

test('a new serving certificate is used for new connections without a restart', async () => {
  const { issueServingCertificate } = await import('./serving-ca.ts');
  const ca = { certPem: caPem, keyPem: Buffer.from(secret.data['tls.key'], 'base64').toString() };
  const next = await issueServingCertificate(ca, ['127.0.0.1'], new Date());
  webhook.setCertificate(next.certPem, next.keyPem);
  const serial = await new Promise<string>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: webhook.port, path: '/healthz', ca: caPem, agent: false }, (res) => {
      resolve((res.socket as import('node:tls').TLSSocket).getPeerCertificate().serialNumber);
      res.resume();
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(serial.toLowerCase(), new X509Certificate(next.certPem).serialNumber.toLowerCase());
});
