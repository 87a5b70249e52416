// kubectl, as an operator drives it, against `certsmith server --apply examples/` through the
// kubeconfig the server writes. Runs with whichever kubectl the machine has (KUBECTL overrides):
// a current one, or Debian's v1.20; assertions avoid output details that differ between them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import https from 'node:https';
import YAML from 'yaml';
import { waitFor, isReady } from './harness.ts';
import { kubectlBin, kubectlSession, startKubectlSession, type KubeJSON, type ServerKubectlSession } from './kubectl-session.ts';

let s: ServerKubectlSession;

const leafManifest = (name: string) => `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ${name}, namespace: default }
spec: { secretName: ${name}-tls, dnsNames: [${name}.example.test], issuerRef: { name: example-ca } }
`;

before(async () => {
  s = await startKubectlSession({ workPrefix: 'certsmith-kubectl-', serverArgs: ['--apply', 'examples/'] });
  await waitFor('the example Certificates Ready', async () => {
    const r = await s.kubectl(['get', 'certificates', '-A', '-o', 'json']);
    if (r.code !== 0) return undefined;
    const items = (JSON.parse(r.stdout) as { items: KubeJSON[] }).items;
    return items.length >= 5 && items.every(isReady) ? true : undefined;
  });
});

after(async () => {
  if (s) await s.close();
});

test('kubectl apply -f examples/ on the objects the server loaded at start, then again: nothing is created twice', async () => {
  const first = await s.kubectl(['apply', ...s.validateFlags, '-f', 'examples/']);
  assert.equal(first.code, 0, first.stderr);
  // --apply records kubectl's last-applied configuration as kubectl does: kubectl finds nothing to
  // change and nothing missing
  assert.doesNotMatch(first.stderr, /missing the kubectl\.kubernetes\.io\/last-applied-configuration annotation/);
  for (const name of ['clusterissuer.cert-manager.io/selfsigned', 'issuer.cert-manager.io/example-ca', 'certificate.cert-manager.io/web-rsa']) {
    assert.match(first.stdout, new RegExp(`^${name} unchanged$`, 'm'));
  }
  assert.doesNotMatch(first.stdout, / created$/m);

  const second = await s.kubectl(['apply', ...s.validateFlags, '-f', 'examples/']);
  assert.equal(second.code, 0, second.stderr);
  // a Secret's stringData is never stored, so kubectl always sees it as a change, as on a real cluster
  assert.match(second.stdout, /^secret\/keystore-password (unchanged|configured)$/m);
  for (const line of second.stdout.trim().split('\n').filter((l) => !l.startsWith('secret/'))) {
    assert.match(line, / unchanged$/, second.stdout);
  }
  const certs = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-A']);
  assert.equal(certs.items.length, 5);
  for (const c of certs.items) assert.equal(c.status?.revision, 1, `${c.metadata.name} was issued once`);
});

test('kubectl get certificates -A prints cert-manager\'s columns', async () => {
  const r = await s.kubectl(['get', 'certificates', '-A']);
  assert.equal(r.code, 0, r.stderr);
  const [header, ...rows] = r.stdout.trim().split('\n');
  assert.deepEqual(header.split(/\s+/), ['NAMESPACE', 'NAME', 'READY', 'SECRET', 'AGE']);
  assert.equal(rows.length, 5);
  assert.match(r.stdout, /^default\s+web-rsa\s+True\s+web-rsa-tls\s+\d+s$/m);
  assert.match(r.stdout, /^default\s+example-ca\s+True\s+example-ca\s+\d+s$/m);
});

test('kubectl get certificate -o yaml gives the object with its Ready condition', async () => {
  const r = await s.kubectl(['get', 'certificate', 'web-rsa', '-n', 'default', '-o', 'yaml']);
  assert.equal(r.code, 0, r.stderr);
  const obj = YAML.parse(r.stdout);
  assert.equal(obj.apiVersion, 'cert-manager.io/v1');
  assert.equal(obj.kind, 'Certificate');
  assert.equal(obj.metadata.name, 'web-rsa');
  assert.equal(obj.spec.secretName, 'web-rsa-tls');
  const ready = obj.status.conditions.find((c: { type: string }) => c.type === 'Ready');
  assert.equal(ready.status, 'True');
  assert.equal(ready.reason, 'Ready');
});

test('kubectl describe certificate shows spec, status and the Certificate\'s Events', async () => {
  const r = await s.kubectl(['describe', 'certificate', 'web-rsa', '-n', 'default']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Name:\s+web-rsa$/m);
  assert.match(r.stdout, /^Spec:$/m);
  assert.match(r.stdout, /^\s+Secret Name:\s+web-rsa-tls$/m);
  assert.match(r.stdout, /^Status:$/m);
  assert.match(r.stdout, /^\s+Revision:\s+1$/m);
  const events = r.stdout.slice(r.stdout.search(/^Events:/m));
  assert.match(events, /^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message$/m);
  assert.match(events, /Normal\s+Issuing\s+.*The certificate has been successfully issued/);
  assert.match(events, /Normal\s+Requested\s+.*"web-rsa-1"/);
  // events of other Certificates are filtered out by the involvedObject field selectors
  assert.doesNotMatch(events, /api-ecdsa|java-app/);
});

test('kubectl get events prints kube-apiserver\'s Event columns, and -o wide its source, first seen, count and name', async () => {
  const r = await s.kubectl(['get', 'events', '-n', 'default', '--field-selector', 'involvedObject.name=web-rsa,reason=Requested']);
  assert.equal(r.code, 0, r.stderr);
  const [header, ...rows] = r.stdout.trim().split('\n');
  assert.deepEqual(header.split(/\s{2,}/), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
  assert.equal(rows.length, 1, r.stdout);
  assert.match(rows[0], /^\d+s\s+Normal\s+Requested\s+certificate\/web-rsa\s+Created new CertificateRequest resource "web-rsa-1"$/);

  const wide = await s.kubectl(['get', 'events', '-n', 'default', '-o', 'wide', '--field-selector', 'involvedObject.name=web-rsa,reason=Requested']);
  assert.equal(wide.code, 0, wide.stderr);
  const [wideHeader, wideRow] = wide.stdout.trim().split('\n');
  assert.deepEqual(wideHeader.split(/\s{2,}/), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
  // no subobject: kubectl leaves the cell empty
  assert.match(wideRow, /^\d+s\s+Normal\s+Requested\s+certificate\/web-rsa\s+cert-manager-certificates-request-manager\s+Created new CertificateRequest resource "web-rsa-1"\s+\d+s\s+1\s+web-rsa\.[0-9a-f]+$/);
});

test('kubectl get services, ingresses and webhook configurations prints kube-apiserver\'s columns', async () => {
  await s.apply(`apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec:
  clusterIP: 10.0.0.10
  selector: { tier: front, app: web }
  ports: [{ name: http, port: 80, targetPort: 8080 }, { name: dns, port: 53, protocol: UDP }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: web, namespace: default }
spec:
  ingressClassName: nginx
  tls: [{ hosts: [a.example.test], secretName: web-ing-tls }]
  rules:
  - host: a.example.test
    http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }] }
  - host: b.example.test
    http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }] }
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: { name: tables-test }
webhooks: []
`);
  const table = async (args: string[]) => {
    const r = await s.kubectl(['get', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim().split('\n').map((l) => l.split(/\s{2,}/));
  };
  const svc = await table(['service', 'web', '-n', 'default', '-o', 'wide']);
  assert.deepEqual(svc[0], ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
  assert.deepEqual([...svc[1].slice(0, 5), svc[1][6]], ['web', 'ClusterIP', '10.0.0.10', '<none>', '80/TCP,53/UDP', 'app=web,tier=front']);
  const ing = await table(['ingress', 'web', '-n', 'default']);
  assert.deepEqual(ing[0], ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE']);
  // no load balancer has given it an address: the cell is empty
  assert.match(ing[1].join('|'), /^web\|nginx\|a\.example\.test,b\.example\.test\|80, 443\|\d+s$/);
  const vwc = await table(['validatingwebhookconfiguration', 'tables-test']);
  assert.deepEqual(vwc[0], ['NAME', 'WEBHOOKS', 'AGE']);
  assert.deepEqual(vwc[1].slice(0, 2), ['tables-test', '0']);
  assert.equal((await s.kubectl(['delete', 'validatingwebhookconfiguration', 'tables-test'])).code, 0);
});

test('kubectl get secrets shows TYPE and DATA', async () => {
  const r = await s.kubectl(['get', 'secrets', '-n', 'default']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split('\n')[0].split(/\s+/), ['NAME', 'TYPE', 'DATA', 'AGE']);
  assert.match(r.stdout, /^web-rsa-tls\s+kubernetes\.io\/tls\s+3\s+\d+s$/m);
  assert.match(r.stdout, /^keystore-password\s+Opaque\s+1\s+\d+s$/m);
  // tls.crt, tls.key, ca.crt, keystore.p12, truststore.p12, keystore.jks, truststore.jks
  assert.match(r.stdout, /^java-app-tls\s+kubernetes\.io\/tls\s+7\s+/m);
});

test('kubectl get certificaterequests,orders,challenges -A lists several kinds at once', async () => {
  const r = await s.kubectl(['get', 'certificaterequests,orders,challenges', '-A']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout.split('\n')[0], /^NAMESPACE\s+NAME\s+APPROVED\s+DENIED\s+READY\s+ISSUER\s+REQUESTER\s+AGE$/);
  for (const name of ['example-ca-1', 'web-rsa-1', 'api-ecdsa-1', 'mesh-ed25519-1', 'java-app-1']) {
    assert.match(r.stdout, new RegExp(`^default\\s+certificaterequest\\.cert-manager\\.io/${name}\\s+True\\s+True\\s`, 'm'));
  }
  const short = await s.kubectl(['get', 'cr', '-n', 'default', '-o', 'name']);
  assert.equal(short.code, 0, short.stderr);
  assert.equal(short.stdout.trim().split('\n').length, 5);
});

test('kubectl api-resources lists the cert-manager kinds with their short names', async () => {
  const r = await s.kubectl(['api-resources']);
  assert.equal(r.code, 0, r.stderr);
  const row = (plural: string) => r.stdout.split('\n').find((l) => l.split(/\s+/)[0] === plural)?.trim().split(/\s+/);
  assert.deepEqual(row('certificates'), ['certificates', 'cert,certs', 'cert-manager.io/v1', 'true', 'Certificate']);
  assert.deepEqual(row('certificaterequests'), ['certificaterequests', 'cr,crs', 'cert-manager.io/v1', 'true', 'CertificateRequest']);
  // short names as cert-manager's CRDs declare them since v1.18
  assert.deepEqual(row('issuers'), ['issuers', 'iss', 'cert-manager.io/v1', 'true', 'Issuer']);
  assert.deepEqual(row('clusterissuers'), ['clusterissuers', 'ciss', 'cert-manager.io/v1', 'false', 'ClusterIssuer']);
  assert.deepEqual(row('orders'), ['orders', 'acme.cert-manager.io/v1', 'true', 'Order']);
  assert.deepEqual(row('challenges'), ['challenges', 'acme.cert-manager.io/v1', 'true', 'Challenge']);
  assert.deepEqual(row('secrets'), ['secrets', 'v1', 'true', 'Secret']);
});

test('kubectl get --watch prints a line for a Certificate applied and one modified while it runs', async () => {
  const child = spawn(kubectlBin, ['--kubeconfig', s.server.kubeconfig, 'get', 'certificates', '-A', '--watch'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise((r) => child.on('close', r));
  try {
    // the initial list comes first; only then is the watch open
    await waitFor(`the initial list from kubectl --watch (stderr: ${err})`, async () => (/^default\s+web-rsa\s/m.test(out) ? true : undefined), 15_000);
    const applied = await s.kubectl(['apply', ...s.validateFlags, '-f', '-'], leafManifest('watched'));
    assert.equal(applied.code, 0, applied.stderr);
    await waitFor('a watch line for the new Certificate', async () => (/^default\s+watched\s+True\s+watched-tls\s/m.test(out) ? true : undefined), 15_000);

    const before = out.split('\n').length;
    const labelled = await s.kubectl(['label', 'certificate', 'api-ecdsa', '-n', 'default', 'tier=frontend']);
    assert.equal(labelled.code, 0, labelled.stderr);
    await waitFor('a watch line for the modified Certificate', async () =>
      out.split('\n').slice(before - 1).some((l) => /^default\s+api-ecdsa\s+True\s/.test(l)) ? true : undefined, 10_000);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test('kubectl delete certificate removes what it owns by cascade', async () => {
  const cert = await s.getJSON(['get', 'certificate', 'mesh-ed25519', '-n', 'default']);
  const owned = async () => {
    const secrets = (await s.getJSON<{ items: KubeJSON[] }>(['get', 'secrets', '-n', 'default'])).items.map((o) => ({ kind: 'secret', o }));
    const requests = (await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificaterequests', '-n', 'default'])).items.map((o) => ({ kind: 'certificaterequest', o }));
    return [...secrets, ...requests].filter(({ o }) => o.metadata.ownerReferences?.some((r) => r.uid === cert.metadata.uid));
  };
  const ownedBefore = await owned();
  assert.ok(ownedBefore.some((x) => x.kind === 'certificaterequest' && x.o.metadata.name === 'mesh-ed25519-1'), 'the CertificateRequest is owned by its Certificate');

  const r = await s.kubectl(['delete', 'certificate', 'mesh-ed25519', '-n', 'default']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /certificate\.cert-manager\.io "mesh-ed25519" deleted/);
  const gone = await s.kubectl(['get', 'certificate', 'mesh-ed25519', '-n', 'default']);
  assert.notEqual(gone.code, 0);
  assert.match(gone.stderr, /NotFound|not found/);
  await waitFor('the owned objects gone by cascade', async () => ((await owned()).length === 0 ? true : undefined), 10_000);
  // as cert-manager by default: the issued Secret carries no owner reference and outlives its Certificate
  const secret = await s.kubectl(['get', 'secret', 'mesh-ed25519-tls', '-n', 'default', '-o', 'name']);
  if (!ownedBefore.some((x) => x.o.metadata.name === 'mesh-ed25519-tls')) assert.equal(secret.stdout.trim(), 'secret/mesh-ed25519-tls');
});

function rawRequest(method: string, path: string, token: string | undefined, body?: string): Promise<{ status: number; body: any }> {
  const kc = YAML.parse(readFileSync(s.server.kubeconfig, 'utf8'));
  const ca = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) };
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, s.server.url), { method, ca, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('no token or a wrong one: 401 Unauthorized for kubectl and raw requests, and nothing changes', async () => {
  const before = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-A']);
  const kc = YAML.parse(readFileSync(s.server.kubeconfig, 'utf8'));
  kc.users[0].user.token = 'not-the-token';
  const bad = join(s.server.dataDir, 'wrong-token-kubeconfig');
  writeFileSync(bad, YAML.stringify(kc), { mode: 0o600 });

  const intruder = await kubectlSession({ kubeconfig: bad });
  const get = await intruder.kubectl(['get', 'certificates', '-A']);
  assert.notEqual(get.code, 0);
  assert.match(get.stderr, /Unauthorized/);
  const del = await intruder.kubectl(['delete', 'certificate', 'web-rsa', '-n', 'default']);
  assert.notEqual(del.code, 0);
  assert.match(del.stderr, /Unauthorized/);
  const apply = await intruder.kubectl(['apply', '--validate=false', '-f', '-'], leafManifest('intruder'));
  assert.notEqual(apply.code, 0);
  assert.match(apply.stderr, /Unauthorized/);

  const create = JSON.stringify(YAML.parse(leafManifest('intruder')));
  for (const token of [undefined, 'not-the-token', '']) {
    const post = await rawRequest('POST', '/apis/cert-manager.io/v1/namespaces/default/certificates', token, create);
    assert.equal(post.status, 401);
    assert.equal(post.body.kind, 'Status');
    assert.equal(post.body.reason, 'Unauthorized');
    const remove = await rawRequest('DELETE', '/apis/cert-manager.io/v1/namespaces/default/certificates/web-rsa', token);
    assert.equal(remove.status, 401);
  }

  const afterwards = await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificates', '-A']);
  const summary = (l: { items: KubeJSON[] }) => l.items.map((c) => `${c.metadata.name}@${c.metadata.resourceVersion}`).sort();
  assert.deepEqual(summary(afterwards), summary(before));
});
