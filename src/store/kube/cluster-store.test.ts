// The cluster backend: the store conformance suite against the embedded server over HTTPS,
// configured through client-node's KubeConfig from the kubeconfig the server writes; and the
// authentication methods real clusters use (client certificates, exec plugins), each against
// a TLS server on loopback that checks them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { runStoreConformance } from '../conformance.ts';
import { openSqliteStore } from '../sqlite/index.ts';
import { Certificate } from '../../api/resources.ts';
import { startApiServer } from '../../server/api-server.ts';
import { ensureServingCertificate } from '../../server/tls.ts';
import { writeKubeconfig } from '../../server/kubeconfig.ts';
import { openClusterStore, ClusterConfigError } from './cluster-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-clusterstore-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const token = 'cluster-token-0123456789';
const pki = await ensureServingCertificate(join(dir, 'serving'));

runStoreConformance('cluster backend (client-node KubeConfig) over https', async () => {
  const raw = openSqliteStore({ path: ':memory:' });
  const api = await startApiServer({ store: raw, tls: { certPem: pki.certPem, keyPem: pki.keyPem }, token });
  const kubeconfig = join(dir, `kubeconfig-${api.port}`);
  writeKubeconfig(kubeconfig, { server: api.url, caPem: pki.caPem, token });
  const { store } = await openClusterStore({ kubeconfig, qps: 0, burst: 0 });
  return {
    store,
    compact: async () => void raw.compact(0),
    async cleanup() {
      await store.close();
      await api.close();
      await raw.close();
    },
  };
});

function openssl(...args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, a serving certificate for 127.0.0.1 and a client certificate, made by openssl. */
function makePki() {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=test cluster CA', '-days', '1');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=apiserver');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'server.ext');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=system:serviceaccount:cert-manager:certsmith/O=system:serviceaccounts');
  openssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.crt', '-days', '1');
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { ca: read('ca.crt'), serverCert: read('server.crt'), serverKey: read('server.key'), clientCert: read('client.crt'), clientKey: read('client.key') };
}
const certs = makePki();

interface Seen { clientCN?: string; authorization?: string; path: string }

/** A loopback stand-in for a kube-apiserver that records who called, and answers an empty list. */
async function fakeApiServer(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = https.createServer({ cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
    seen.push({ clientCN: peer?.subject?.CN as string | undefined, authorization: req.headers.authorization, path: req.url ?? '' });
    if (!peer && !req.headers.authorization) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'CertificateList', apiVersion: 'cert-manager.io/v1', metadata: { resourceVersion: '42' }, items: [] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

function kubeconfigFile(name: string, doc: object): string {
  const path = join(dir, name);
  writeFileSync(path, YAML.stringify(doc), { mode: 0o600 });
  return path;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfigDoc(server: string, users: Array<{ name: string; user: object }>) {
  return {
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'certificate-authority-data': b64(certs.ca) } }],
    users,
    contexts: users.map((u) => ({ name: u.name, context: { cluster: 'c', user: u.name, namespace: 'cert-manager' } })),
    'current-context': users[0].name,
  };
}

test('a client certificate from the kubeconfig is presented; --context picks the user', async () => {
  const api = await fakeApiServer();
  try {
    const path = kubeconfigFile('kubeconfig-cert', kubeconfigDoc(api.url, [
      { name: 'token-user', user: { token: 'static-token' } },
      { name: 'cert-user', user: { 'client-certificate-data': b64(certs.clientCert), 'client-key-data': b64(certs.clientKey) } },
    ]));
    const conn = await openClusterStore({ kubeconfig: path, context: 'cert-user', qps: 0, burst: 0 });
    const list = await conn.store.list(Certificate, {});
    await conn.store.close();
    assert.equal(list.resourceVersion, '42');
    assert.equal(conn.namespace, 'cert-manager');
    assert.equal(api.seen.at(-1)?.clientCN, 'system:serviceaccount:cert-manager:certsmith');
    assert.equal(api.seen.at(-1)?.authorization, undefined);

    const byToken = await openClusterStore({ kubeconfig: path, qps: 0, burst: 0 });
    await byToken.store.list(Certificate, {});
    await byToken.store.close();
    assert.equal(api.seen.at(-1)?.authorization, 'Bearer static-token');
    assert.equal(api.seen.at(-1)?.clientCN, undefined);

    await assert.rejects(openClusterStore({ kubeconfig: path, context: 'nope', qps: 0, burst: 0 }), (e: Error) => e instanceof ClusterConfigError && /no context "nope"/.test(e.message));
  } finally {
    await api.close();
  }
});

test('an exec credential plugin is run for tokens, and asked again once its credentials may have changed', async () => {
  const api = await fakeApiServer();
  try {
    // each run hands out the next token, as a plugin does when the previous one expires
    const plugin = join(dir, 'exec-plugin.mjs');
    const counter = join(dir, 'exec-count');
    writeFileSync(counter, '0');
    writeFileSync(plugin, `import { readFileSync, writeFileSync } from 'node:fs';
const n = Number(readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1;
writeFileSync(${JSON.stringify(counter)}, String(n));
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-token-' + n } }));
`);
    const path = kubeconfigFile('kubeconfig-exec', kubeconfigDoc(api.url, [
      { name: 'exec-user', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' } } },
    ]));
    const conn = await openClusterStore({ kubeconfig: path, qps: 0, burst: 0, credentialRefreshMs: 0 });
    await conn.store.list(Certificate, {});
    const first = api.seen.at(-1)?.authorization;
    await conn.store.list(Certificate, {});
    const second = api.seen.at(-1)?.authorization;
    await conn.store.close();
    assert.match(first ?? '', /^Bearer exec-token-\d+$/);
    assert.match(second ?? '', /^Bearer exec-token-\d+$/);
    assert.notEqual(first, second, 'a rotated token is used by the next request');

    // with the default refresh interval the plugin is not run per request
    writeFileSync(counter, '0');
    const cached = await openClusterStore({ kubeconfig: path, qps: 0, burst: 0 });
    for (let i = 0; i < 3; i++) await cached.store.list(Certificate, {});
    await cached.store.close();
    assert.equal(readFileSync(counter, 'utf8'), '1');
    assert.deepEqual(api.seen.slice(-3).map((s) => s.authorization), ['Bearer exec-token-1', 'Bearer exec-token-1', 'Bearer exec-token-1']);
  } finally {
    await api.close();
  }
});

test('a missing kubeconfig is a configuration error that names the file', async () => {
  await assert.rejects(openClusterStore({ kubeconfig: join(dir, 'absent'), qps: 20, burst: 50 }), (e: Error) => e instanceof ClusterConfigError && e.message.includes(join(dir, 'absent')));
});

test('in a pod: the service account token, CA and namespace are used when no kubeconfig is named', async () => {
  const api = await fakeApiServer();
  const saved = { KUBECONFIG: process.env.KUBECONFIG, HOST: process.env.KUBERNETES_SERVICE_HOST, PORT: process.env.KUBERNETES_SERVICE_PORT };
  try {
    const root = join(dir, 'pod');
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'projected-sa-token');
    writeFileSync(join(sa, 'ca.crt'), certs.ca);
    writeFileSync(join(sa, 'namespace'), 'cert-manager');
    delete process.env.KUBECONFIG;
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = new URL(api.url).port;
    const conn = await openClusterStore({ qps: 0, burst: 0, serviceAccountRoot: root });
    await conn.store.list(Certificate, { namespace: 'cert-manager' });
    await conn.store.close();
    assert.equal(conn.source, 'in-cluster service account');
    assert.equal(conn.namespace, 'cert-manager');
    assert.equal(api.seen.at(-1)?.authorization, 'Bearer projected-sa-token');
    assert.equal(api.seen.at(-1)?.path, '/apis/cert-manager.io/v1/namespaces/cert-manager/certificates');
  } finally {
    for (const [k, v] of [['KUBECONFIG', saved.KUBECONFIG], ['KUBERNETES_SERVICE_HOST', saved.HOST], ['KUBERNETES_SERVICE_PORT', saved.PORT]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await api.close();
  }
});
