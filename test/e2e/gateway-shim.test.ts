// gateway-shim as a cert-manager user drives it: kubectl applies a Gateway annotated
// cert-manager.io/cluster-issuer to `certsmith server` (Gateway API on by default there); its TLS
// listeners become Ready Certificates, one per certificateRef, whose Secrets openssl accepts;
// a listener dropped deletes its Certificate; deleting the Gateway takes the rest away.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isReady, run, startServer, waitFor, type CommandResult, type RunningServer } from './harness.ts';

const kubectlBin = process.env.KUBECTL ?? 'kubectl';

interface Obj {
  metadata: { name: string; namespace?: string; uid: string; annotations?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[] };
  spec?: Record<string, any>;
  status?: Record<string, any>;
  data?: Record<string, string>;
  involvedObject?: { kind: string; name: string };
  reason?: string;
  type?: string;
  message?: string;
}

let server: RunningServer;
let work: string;
let validateFlags: string[] = [];

const kubectl = (args: string[], input?: string): Promise<CommandResult> =>
  run(kubectlBin, ['--kubeconfig', server.kubeconfig, ...args], { input, timeoutMs: 30_000 });

async function getJSON<T = Obj>(args: string[]): Promise<T> {
  const r = await kubectl([...args, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

const issuers = `
apiVersion: v1
kind: Namespace
metadata: { name: cert-manager }
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: root, namespace: cert-manager }
spec: { secretName: root-ca, commonName: gateway-shim test CA, isCA: true, privateKey: { algorithm: ECDSA }, issuerRef: { name: selfsigned, kind: ClusterIssuer } }
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: ca }
spec: { ca: { secretName: root-ca } }
`;

const gateway = (extraListeners: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: default
  annotations:
    cert-manager.io/cluster-issuer: ca
    cert-manager.io/private-key-algorithm: ECDSA
spec:
  gatewayClassName: test
  listeners:
    - { name: http, port: 80, protocol: HTTP }
    - name: a
      hostname: a.example.test
      port: 443
      protocol: HTTPS
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, group: "", name: a-tls }] }
    - name: passthrough
      hostname: p.example.test
      port: 8443
      protocol: TLS
      tls: { mode: Passthrough }
${extraListeners}`;

const listenerB = `
    - name: b
      hostname: b.example.test
      port: 443
      protocol: HTTPS
      tls: { certificateRefs: [{ name: b-tls }] }
    - name: www-a
      hostname: www.a.example.test
      port: 443
      protocol: HTTPS
      tls: { mode: Terminate, certificateRefs: [{ kind: Secret, name: a-tls }] }
`;

/** The DNS SANs openssl reads from the Secret's certificate, after checking the chain against ca.crt. */
async function verifiedSANs(secretName: string): Promise<string[]> {
  const secret = await getJSON(['get', 'secret', secretName, '-n', 'default']);
  const file = (k: string) => {
    const p = join(work, `${secretName}.${k}`);
    writeFileSync(p, Buffer.from(secret.data![k], 'base64'), { mode: 0o600 });
    return p;
  };
  const crt = file('tls.crt');
  const verify = await run('openssl', ['verify', '-CAfile', file('ca.crt'), crt]);
  assert.equal(verify.code, 0, `openssl verify ${secretName}: ${verify.stdout}${verify.stderr}`);
  const certPub = await run('openssl', ['x509', '-in', crt, '-noout', '-pubkey']);
  const keyPub = await run('openssl', ['pkey', '-in', file('tls.key'), '-pubout']);
  assert.equal(certPub.stdout, keyPub.stdout, `${secretName}: tls.key matches tls.crt`);
  const ext = await run('openssl', ['x509', '-in', crt, '-noout', '-ext', 'subjectAltName']);
  assert.equal(ext.code, 0, ext.stderr);
  return [...ext.stdout.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1]).sort();
}

before(async () => {
  const version = await run(kubectlBin, ['version', '--client', '-o', 'json']);
  assert.equal(version.code, 0, `${kubectlBin} version: ${version.stderr}`);
  if (parseInt(JSON.parse(version.stdout).clientVersion.minor, 10) < 27) validateFlags = ['--validate=false'];
  work = mkdtempSync(join(tmpdir(), 'certsmith-gateway-shim-'));
  server = await startServer();
  const applied = await kubectl(['apply', ...validateFlags, '-f', '-'], issuers);
  assert.equal(applied.code, 0, applied.stderr);
  await waitFor('ClusterIssuer ca Ready', async () => isReady(await getJSON(['get', 'clusterissuer', 'ca'])));
});

after(async () => {
  if (server) {
    const code = await server.stop();
    server.cleanup();
    assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

test('an annotated Gateway gets a Ready Certificate per certificateRef of its TLS listeners; a dropped listener and the Gateway take theirs away', async () => {
  const applied = await kubectl(['apply', ...validateFlags, '-f', '-'], gateway(listenerB));
  assert.equal(applied.code, 0, applied.stderr);
  const gw = await getJSON(['get', 'gateway', 'edge', '-n', 'default']);

  const mine = async () => (await getJSON<{ items: Obj[] }>(['get', 'certificates', '-n', 'default'])).items
    .filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === gw.metadata.uid));
  const certs = await waitFor('two Ready Certificates from the Gateway', async () => {
    const list = await mine();
    return list.length === 2 && list.every(isReady) ? list : undefined;
  }, 60_000);
  const a = certs.find((c) => c.metadata.name === 'a-tls')!;
  assert.ok(a, 'a Certificate named after the secret');
  assert.deepEqual(a.spec!.issuerRef, { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.equal(a.spec!.privateKey.algorithm, 'ECDSA');
  assert.deepEqual(a.metadata.ownerReferences, [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'edge', uid: gw.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  // two listeners naming a-tls share its Certificate; the HTTP and Passthrough listeners have none
  assert.deepEqual(await verifiedSANs('a-tls'), ['a.example.test', 'www.a.example.test']);
  assert.deepEqual(await verifiedSANs('b-tls'), ['b.example.test']);
  const events = await getJSON<{ items: Obj[] }>(['get', 'events', '-n', 'default']);
  const created = events.items.filter((e) => e.involvedObject?.kind === 'Gateway' && e.involvedObject.name === 'edge' && e.reason === 'CreateCertificate');
  assert.deepEqual(created.map((e) => e.message).sort(), ['Successfully created Certificate "a-tls"', 'Successfully created Certificate "b-tls"']);

  // listeners b and www-a removed: b-tls goes, a-tls follows with one host and is issued again
  const firstRevision = a.status!.revision as number;
  const edited = await kubectl(['apply', ...validateFlags, '-f', '-'], gateway(''));
  assert.equal(edited.code, 0, edited.stderr);
  await waitFor('b-tls deleted and a-tls re-issued for a.example.test alone', async () => {
    const list = await mine();
    const cur = list.find((c) => c.metadata.name === 'a-tls');
    return list.length === 1 && cur && isReady(cur) && cur.status!.revision > firstRevision ? cur : undefined;
  }, 60_000);
  assert.deepEqual(await verifiedSANs('a-tls'), ['a.example.test']);

  const deleted = await kubectl(['delete', 'gateway', 'edge', '-n', 'default']);
  assert.equal(deleted.code, 0, deleted.stderr);
  await waitFor('the Gateway\'s Certificates deleted', async () => ((await mine()).length === 0 ? true : undefined), 30_000);
});

test('a listener with a cross-namespace certificateRef: a BadConfig Warning on the Gateway, and no Certificate for it', async () => {
  const applied = await kubectl(['apply', ...validateFlags, '-f', '-'], `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: crossns, namespace: default, annotations: { cert-manager.io/cluster-issuer: ca } }
spec:
  gatewayClassName: test
  listeners:
    - { name: x, hostname: x.example.test, port: 443, protocol: HTTPS, tls: { certificateRefs: [{ name: x-tls, namespace: cert-manager }] } }
`);
  assert.equal(applied.code, 0, applied.stderr);
  const warning = await waitFor('a BadConfig event on Gateway crossns', async () => {
    const events = await getJSON<{ items: Obj[] }>(['get', 'events', '-n', 'default']);
    return events.items.find((e) => e.involvedObject?.name === 'crossns' && e.reason === 'BadConfig');
  });
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message!, /cross-namespace secret references are not allowed/);
  for (const ns of ['default', 'cert-manager']) {
    const list = await getJSON<{ items: Obj[] }>(['get', 'certificates', '-n', ns]);
    assert.deepEqual(list.items.filter((c) => c.metadata.name === 'x-tls'), []);
  }
});
