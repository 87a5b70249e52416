// HttpStore against the embedded API server over HTTPS and over its Unix socket: the store
// conformance suite, plus what only the HTTP path has (auth, TLS trust, Status errors, tables,
// discovery, throttling, when the socket is trusted).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, linkSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import https from 'node:https';
import { runStoreConformance } from '../conformance.ts';
import { openSqliteStore } from '../sqlite/index.ts';
import type { KubeObject } from '../../api/meta.ts';
import { Certificate, SecretType } from '../../api/resources.ts';
import { StoreError } from '../store.ts';
import { withAdmission } from '../../server/admission.ts';
import { startApiServer } from '../../server/api-server.ts';
import { ensureServingCertificate } from '../../server/tls.ts';
import { HttpStore } from './http-store.ts';
import { TokenBucket } from './token-bucket.ts';

const token = 'test-token-0123456789';
const pkiDir = mkdtempSync(join(tmpdir(), 'certsmith-httpstore-'));
const pki = await ensureServingCertificate(pkiDir);

async function serve(admission = true, socketDir?: string) {
  const raw = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({
    store: admission ? withAdmission(raw) : raw, tls: { certPem: pki.certPem, keyPem: pki.keyPem }, token, ...(socketDir ? { socketPath: join(socketDir, 'api.sock') } : {}),
  });
  return { raw, api };
}

// the suite's fixtures are about storage semantics, not valid certificates: no admission here
function conformanceStore(over: 'https' | 'socket') {
  return async () => {
    const { raw, api } = await serve(false, over === 'socket' ? mkdtempSync(join(tmpdir(), 'certsmith-httpstore-sock-')) : undefined);
    // over the socket, nothing listens on the URL: every request must take the socket
    const store = over === 'socket'
      ? new HttpStore({ server: 'https://127.0.0.1:1', caPem: pki.caPem, token, qps: 0, socketPath: api.socketPath })
      : new HttpStore({ server: api.url, caPem: pki.caPem, token, qps: 0 });
    return {
      store,
      compact: async () => void raw.compact(0),
      async cleanup() {
        await store.close();
        await api.close();
        await raw.close();
        if (api.socketPath) rmSync(dirname(api.socketPath), { recursive: true, force: true });
      },
    };
  };
}
runStoreConformance('http over https', conformanceStore('https'));
runStoreConformance('http over the unix socket', conformanceStore('socket'));

const shared = await serve();
after(async () => {
  await shared.api.close();
  await shared.raw.close();
  rmSync(pkiDir, { recursive: true, force: true });
});

function raw(path: string, opts: { token?: string; method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, shared.api.url), {
      ca: pki.caPem, method: opts.method ?? 'GET',
      headers: { ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
    }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode!, body });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const cert = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
  spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], issuerRef: { name: 'ca' }, ...spec },
});

test('a wrong or missing token is 401 and writes nothing; health probes need none', async () => {
  const wrong = new HttpStore({ server: shared.api.url, caPem: pki.caPem, token: 'nope' });
  await assert.rejects(wrong.create(Certificate, cert('unauth')), (e: unknown) => e instanceof StoreError && e.code === 401 && e.reason === 'Unauthorized');
  await wrong.close();
  const none = await raw('/apis/cert-manager.io/v1/namespaces/default/certificates', { method: 'POST', body: JSON.stringify(cert('unauth2')) });
  assert.equal(none.status, 401);
  assert.equal(none.body.kind, 'Status');
  assert.equal(await shared.raw.get(Certificate, 'default', 'unauth'), undefined);
  assert.equal(await shared.raw.get(Certificate, 'default', 'unauth2'), undefined);
  assert.equal((await raw('/readyz')).status, 200);
});

test('TLS: the server is trusted through the CA only', async () => {
  const untrusting = new HttpStore({ server: shared.api.url, token });
  await assert.rejects(untrusting.list(Certificate), /TLS verification failed|self-signed|certificate/i);
  await untrusting.close();
});

test('an invalid object is 422 with a cause per field, through HttpStore and dry-run alike', async () => {
  const store = new HttpStore({ server: shared.api.url, caPem: pki.caPem, token });
  for (const dryRun of [true, false]) {
    await assert.rejects(store.create(Certificate, cert('bad', { duration: '30m', issuerRef: {} }), { dryRun }), (e: unknown) => {
      assert.ok(e instanceof StoreError);
      assert.equal(e.code, 422);
      assert.equal(e.reason, 'Invalid');
      assert.match(e.message, /^Certificate\.cert-manager\.io "bad" is invalid: /);
      assert.deepEqual(e.causes.map((c) => c.field).sort(), ['spec.duration', 'spec.issuerRef.name']);
      return true;
    });
  }
  const ok = await store.create(Certificate, cert('dry'), { dryRun: true });
  assert.equal(ok.metadata.name, 'dry');
  assert.equal(await shared.raw.get(Certificate, 'default', 'dry'), undefined, 'dry run stores nothing');
  await store.close();
});

test('patch content types, 415 for others, and apply needs a fieldManager', async () => {
  const store = new HttpStore({ server: shared.api.url, caPem: pki.caPem, token });
  await store.create(Certificate, cert('patched'));
  const path = '/apis/cert-manager.io/v1/namespaces/default/certificates/patched';
  // a custom resource has no strategic merge on a cluster (kube-apiserver's patch handler for CRDs)
  const strategic = await raw(path, { token, method: 'PATCH', body: JSON.stringify({ spec: { secretName: 'smp' } }), headers: { 'Content-Type': 'application/strategic-merge-patch+json' } });
  assert.equal(strategic.status, 415);
  assert.deepEqual(strategic.body, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'UnsupportedMediaType', code: 415,
    message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
  });
  const merged = await raw(path, { token, method: 'PATCH', body: JSON.stringify({ spec: { secretName: 'smp' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(merged.status, 200);
  assert.equal(merged.body.spec.secretName, 'smp');
  const invalid = await raw(path, { token, method: 'PATCH', body: JSON.stringify({ spec: { duration: '1m' } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(invalid.status, 422);
  assert.equal(invalid.body.details.causes[0].field, 'spec.duration');
  const xml = await raw(path, { token, method: 'PATCH', body: '<x/>', headers: { 'Content-Type': 'application/xml' } });
  assert.equal(xml.status, 415);
  const yamlApply = 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: patched }\nspec: { secretName: via-yaml }\n';
  const noManager = await raw(path, { token, method: 'PATCH', body: yamlApply, headers: { 'Content-Type': 'application/apply-patch+yaml' } });
  assert.equal(noManager.status, 400);
  // the create above was recorded under the client's User-Agent (certsmith), as kube-apiserver records it
  const conflicting = await raw(path + '?fieldManager=test', { token, method: 'PATCH', body: yamlApply, headers: { 'Content-Type': 'application/apply-patch+yaml' } });
  assert.equal(conflicting.status, 409, JSON.stringify(conflicting.body));
  assert.match(conflicting.body.message, /conflict with "certsmith" using cert-manager\.io\/v1: \.spec\.secretName/);
  const applied = await raw(path + '?fieldManager=test&force=true', { token, method: 'PATCH', body: yamlApply, headers: { 'Content-Type': 'application/apply-patch+yaml' } });
  assert.equal(applied.status, 200, JSON.stringify(applied.body));
  assert.equal(applied.body.spec.secretName, 'via-yaml');
  await store.close();
});

test('tables for kubectl get, discovery and the wrong method', async () => {
  const store = new HttpStore({ server: shared.api.url, caPem: pki.caPem, token });
  await store.create(Certificate, cert('tabled'));
  await store.create(SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } });
  const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
  const t = await raw('/apis/cert-manager.io/v1/namespaces/default/certificates', { token, headers: { Accept: accept } });
  assert.equal(t.body.kind, 'Table');
  assert.deepEqual(t.body.columnDefinitions.map((c: any) => c.name), ['Name', 'Ready', 'Secret', 'Issuer', 'Status', 'Age']);
  const row = t.body.rows.find((r: any) => r.cells[0] === 'tabled');
  assert.equal(row.cells[2], 'tabled-tls');
  assert.equal(row.object.metadata.name, 'tabled');
  const s = await raw('/api/v1/namespaces/default/secrets', { token, headers: { Accept: accept } });
  assert.deepEqual(s.body.columnDefinitions.map((c: any) => c.name), ['Name', 'Type', 'Data', 'Age']);
  assert.deepEqual(s.body.rows[0].cells.slice(0, 3), ['s', 'kubernetes.io/tls', 2]);

  const groups = await raw('/apis', { token });
  assert.deepEqual(groups.body.groups.map((g: any) => g.name).sort(), [
    'acme.cert-manager.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io',
    'cert-manager.io', 'coordination.k8s.io', 'gateway.networking.k8s.io', 'networking.k8s.io',
  ]);
  const res = await raw('/apis/cert-manager.io/v1', { token });
  const certs = res.body.resources.find((r: any) => r.name === 'certificates');
  assert.deepEqual(certs.shortNames, ['cert', 'certs']);
  assert.equal(certs.namespaced, true);
  assert.ok(res.body.resources.some((r: any) => r.name === 'certificates/status'));
  const core = await raw('/api/v1', { token });
  assert.ok(core.body.resources.some((r: any) => r.name === 'secrets' && r.kind === 'Secret'));
  assert.equal((await raw('/apis/cert-manager.io/v1/namespaces/default/certificates/tabled', { token, method: 'POST', body: '{}' })).status, 405);
  assert.equal((await raw('/apis/cert-manager.io/v1/namespaces/default/widgets', { token })).status, 404);
  await store.close();
});

test('a watch from a compacted revision ends with an ERROR event carrying a 410 Status', async () => {
  const store = new HttpStore({ server: shared.api.url, caPem: pki.caPem, token });
  const first: KubeObject = await store.create(Certificate, cert('gone-a'));
  await store.create(Certificate, cert('gone-b'));
  shared.raw.compact(0);
  const res = await raw(`/apis/cert-manager.io/v1/namespaces/default/certificates?watch=true&resourceVersion=${Number(first.metadata.resourceVersion) - 1}`, { token });
  const lines = typeof res.body === 'string' ? res.body.trim().split('\n').map((l) => JSON.parse(l)) : [res.body];
  assert.equal(lines.at(-1).type, 'ERROR');
  assert.equal(lines.at(-1).object.code, 410);
  await store.close();
});

test('the token bucket lets a burst through, then paces to the QPS', async () => {
  const bucket = new TokenBucket(50, 5);
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) await bucket.take();
  assert.ok(Date.now() - t0 < 30, 'the burst is immediate');
  const t1 = Date.now();
  await Promise.all(Array.from({ length: 5 }, () => bucket.take()));
  const paced = Date.now() - t1;
  assert.ok(paced >= 80 && paced < 400, `5 more at 50 qps take ~100ms, took ${paced}ms`);
  const unlimited = new TokenBucket(0, 0);
  for (let i = 0; i < 1000; i++) await unlimited.take();
});

test('a watch honours timeoutSeconds and sends a bookmark when asked', async () => {
  const store = new HttpStore({ server: shared.api.url, caPem: pki.caPem, token });
  const c: KubeObject = await store.create(Certificate, cert('bookmarked'));
  const t0 = Date.now();
  const res = await raw(`/apis/cert-manager.io/v1/namespaces/default/certificates?watch=1&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=${c.metadata.resourceVersion}`, { token });
  const elapsed = Date.now() - t0;
  assert.ok(elapsed >= 900 && elapsed < 5000, `ended after ${elapsed}ms`);
  const events = (typeof res.body === 'string' ? res.body.trim().split('\n').map((l) => JSON.parse(l)) : [res.body]);
  assert.ok(events.some((e: any) => e.type === 'BOOKMARK' && e.object.metadata.resourceVersion), JSON.stringify(events));
  await store.close();
});

test('the socket is used only when no one else could have put it there and a server answers on it; else HTTPS', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-httpstore-trust-'));
  const open = join(dir, 'open');
  mkdirSync(open, { mode: 0o700 });
  const raw = openSqliteStore({ path: ':memory:' });
  const inOpen = await startApiServer({ store: raw, token, socketPath: join(open, 'api.sock') });
  chmodSync(open, 0o777); // now a folder like /tmp: anyone could have bound a socket there
  // a socket file no server listens on, as one killed leaves it: a second name for a socket outlives its close
  const stopped = await startApiServer({ store: raw, token, socketPath: join(dir, 'stopped.sock') });
  const stale = join(dir, 'stale.sock');
  linkSync(stopped.socketPath!, stale);
  await stopped.close();
  assert.ok(lstatSync(stale).isSocket());
  await shared.raw.create(Certificate, cert('over-https'));
  try {
    const seen = async (socketPath: string | undefined, server = shared.api.url) => {
      const store = new HttpStore({ server, caPem: pki.caPem, token, socketPath });
      try {
        return (await store.list(Certificate, { namespace: 'default' })).items.length;
      } finally {
        await store.close();
      }
    };
    // the socket's server has no Certificates, the HTTPS one has some: the count says which answered
    assert.equal(await seen(join(dir, 'nothing-there.sock')) > 0, true, 'no socket: HTTPS');
    assert.equal(await seen(stale) > 0, true, 'a socket no server listens on: HTTPS');
    assert.equal(await seen(inOpen.socketPath) > 0, true, 'a socket in a folder others can write: HTTPS, the token is not sent to it');
    chmodSync(open, 0o700);
    if (process.getuid?.() === 0) {
      // another account's socket in that account's own private folder (one it made where a stopped server's data dir was)
      chownSync(open, 65534, 65534);
      chownSync(inOpen.socketPath!, 65534, 65534);
      assert.equal(await seen(inOpen.socketPath) > 0, true, "another account's socket: HTTPS, the token is not sent to it");
      chownSync(open, 0, 0);
      chownSync(inOpen.socketPath!, 0, 0);
    }
    assert.equal(await seen(inOpen.socketPath), 0, 'the same socket in a private folder is used');
    const unreachable = new HttpStore({ server: 'https://127.0.0.1:1', caPem: pki.caPem, token, socketPath: join(dir, 'nothing-there.sock') });
    await assert.rejects(unreachable.list(Certificate), /cannot reach https:\/\/127\.0\.0\.1:1: connection refused/);
    await unreachable.close();
  } finally {
    await inOpen.close();
    await raw.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// A server that takes the connection and never speaks (hung, or a port that is not the API's):
// each command waited 60 s per attempt and then said "TLS verification failed" (the regex for
// TLS errors matched "certificates" in the request's path). A TLS handshake gets 10 s, as
// kubectl's client gives it, whatever the request timeout, and a timeout says it was one.
test('a server that never answers: the TLS handshake times out on its own, and the error names a timeout, not TLS verification', async () => {
  const net = await import('node:net');
  const silent = net.createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const port = (silent.address() as import('node:net').AddressInfo).port;
  try {
    const handshake = new HttpStore({ server: `https://127.0.0.1:${port}`, insecure: true, timeoutMs: 0, handshakeTimeoutMs: 300 });
    const t0 = Date.now();
    const err = await handshake.list(Certificate, { namespace: 'default' }).then(() => undefined, (e: Error) => e);
    assert.ok(err, 'no answer is an error');
    assert.ok(Date.now() - t0 < 5_000, `the handshake was given up after ${Date.now() - t0} ms`);
    assert.match(err.message, /TLS handshake.*300ms|timed out/i, err.message);
    assert.doesNotMatch(err.message, /verification/);
    await handshake.close();
    const request = new HttpStore({ server: `https://127.0.0.1:${port}`, insecure: true, timeoutMs: 300 });
    const err2 = await request.list(Certificate, { namespace: 'default' }).then(() => undefined, (e: Error) => e);
    assert.match(err2?.message ?? '', /no answer .* within 300ms/);
    assert.doesNotMatch(err2?.message ?? '', /verification/);
    await request.close();
  } finally {
    silent.close();
  }
});
