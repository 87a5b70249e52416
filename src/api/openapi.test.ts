import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as R from './resources.ts';
import { openAPIV3Index, openAPIV3Document, componentName } from './openapi.ts';

test('index lists every served group-version with a hashed URL that resolves to its document', () => {
  const idx = openAPIV3Index();
  assert.deepEqual(Object.keys(idx.paths).sort(), [
    'api/v1', 'apis/acme.cert-manager.io/v1', 'apis/admissionregistration.k8s.io/v1', 'apis/apiextensions.k8s.io/v1',
    'apis/apiregistration.k8s.io/v1', 'apis/cert-manager.io/v1', 'apis/coordination.k8s.io/v1', 'apis/gateway.networking.k8s.io/v1',
    'apis/networking.k8s.io/v1',
  ]);
  assert.match(idx.paths['apis/cert-manager.io/v1'].serverRelativeURL, /^\/openapi\/v3\/apis\/cert-manager\.io\/v1\?hash=[0-9A-F]+$/);
  assert.equal(openAPIV3Document('example.com', 'v1'), undefined);
});

test('component schemas carry Kubernetes names and group-version-kind, and PATCH advertises fieldValidation', () => {
  const doc = openAPIV3Document('cert-manager.io', 'v1') as any;
  const cert = doc.components.schemas['io.cert-manager.v1.Certificate'];
  assert.deepEqual(cert['x-kubernetes-group-version-kind'], [{ group: 'cert-manager.io', kind: 'Certificate', version: 'v1' }]);
  assert.ok(cert.properties.spec.properties.renewal.properties.windows);
  assert.ok(doc.components.schemas['io.cert-manager.v1.ClusterIssuerList']);
  const patch = doc.paths['/apis/cert-manager.io/v1/namespaces/{namespace}/certificates/{name}'].patch;
  assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'cert-manager.io', kind: 'Certificate', version: 'v1' });
  assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation'));
  assert.ok(doc.paths['/apis/cert-manager.io/v1/clusterissuers/{name}/status']);
  assert.equal(componentName(R.Order), 'io.cert-manager.acme.v1.Order');
  const core = openAPIV3Document('', 'v1') as any;
  assert.deepEqual(core.components.schemas['io.k8s.api.core.v1.Secret']['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Secret', version: 'v1' }]);
  const lease = openAPIV3Document('coordination.k8s.io', 'v1') as any;
  assert.ok(lease.components.schemas['io.k8s.api.coordination.v1.Lease']);
  // every $ref resolves inside its own document
  for (const d of [doc, core, lease, openAPIV3Document('acme.cert-manager.io', 'v1')]) {
    for (const m of JSON.stringify(d).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) assert.ok((d as any).components.schemas[m[1]], m[1]);
  }
});

// A minimal API face (discovery + OpenAPI + create) to see what the real kubectl does with the documents.
function fakeAPIServer(seen: string[]) {
  const resources = (group: string) => R.resourceTypes.filter((t) => t.group === group).map((t) => ({
    name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, shortNames: t.shortNames,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  }));
  const groups = [...new Set(R.resourceTypes.map((t) => t.group).filter(Boolean))];
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x');
    seen.push(`${req.method} ${url.pathname}${url.search}`);
    const send = (code: number, body: unknown) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    const p = url.pathname;
    if (p === '/version') return send(200, { major: '1', minor: '32', gitVersion: 'v1.32.0' });
    if (p === '/openapi/v3') return send(200, openAPIV3Index());
    if (p.startsWith('/openapi/v3/')) {
      const key = p.slice('/openapi/v3/'.length);
      const [g, v] = key.startsWith('api/') ? ['', key.slice(4)] : key.slice(5).split('/');
      const d = openAPIV3Document(g, v);
      return d ? send(200, d) : send(404, {});
    }
    if (p === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (p === '/apis') {
      return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => ({ name: g, versions: [{ groupVersion: `${g}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${g}/v1`, version: 'v1' } })) });
    }
    if (p === '/api/v1') return send(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: resources('') });
    const gm = /^\/apis\/([^/]+)\/v1$/.exec(p);
    if (gm) return send(200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${gm[1]}/v1`, resources: resources(gm[1]) });
    if (req.method === 'GET') return send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => send(201, JSON.parse(body)));
  });
}

test('kubectl apply uses the v3 documents and leaves validation to the server (fieldValidation=Strict), never needing v2', async () => {
  const seen: string[] = [];
  const server = fakeAPIServer(seen);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'openapi-kubectl-'));
  try {
    writeFileSync(join(dir, 'kubeconfig'), `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "http://127.0.0.1:${port}" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u, namespace: default } }]
current-context: x
`);
    writeFileSync(join(dir, 'cert.yaml'), `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: web }
spec:
  secretName: web-tls
  dnsNames: [web.example.com]
  issuerRef: { name: ca }
  renewal: { policy: RenewBefore, windows: [{ cron: "0 1 * * *", windowDuration: 2h }] }
---
apiVersion: v1
kind: Secret
metadata: { name: pw }
stringData: { password: x }
`);
    const out = await new Promise<string>((resolve, reject) => {
      execFile('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), 'apply', '-f', join(dir, 'cert.yaml')],
        { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
    });
    assert.match(out, /certificate\.cert-manager\.io\/web created/);
    assert.match(out, /secret\/pw created/);
    assert.ok(seen.some((s) => s.startsWith('GET /openapi/v3/apis/cert-manager.io/v1?hash=')), seen.join('\n'));
    assert.ok(!seen.some((s) => s.startsWith('GET /openapi/v2')), 'kubectl fell back to OpenAPI v2');
    const post = seen.find((s) => s.startsWith('POST /apis/cert-manager.io/v1/namespaces/default/certificates'));
    assert.ok(post && post.includes('fieldValidation=Strict'), seen.join('\n'));
    assert.ok(seen.some((s) => s.startsWith('POST /api/v1/namespaces/default/secrets?') && s.includes('fieldValidation=Strict')), seen.join('\n'));
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
