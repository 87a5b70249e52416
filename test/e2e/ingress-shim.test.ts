// ingress-shim as a cert-manager user drives it: kubectl applies an Ingress annotated
// cert-manager.io/cluster-issuer to `certsmith server`; its tls entries become Ready Certificates
// whose Secrets openssl accepts; editing the Ingress re-issues; deleting it takes them away.
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
spec: { secretName: root-ca, commonName: ingress-shim test CA, isCA: true, privateKey: { algorithm: ECDSA }, issuerRef: { name: selfsigned, kind: ClusterIssuer } }
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: ca }
spec: { ca: { secretName: root-ca } }
`;

const ingress = (aHosts: string[]) => `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: default
  annotations:
    cert-manager.io/cluster-issuer: ca
    cert-manager.io/private-key-algorithm: ECDSA
spec:
  rules:
    - host: a.example.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
  tls:
    - { hosts: [${aHosts.join(', ')}], secretName: a-tls }
    - { hosts: [b.example.test], secretName: b-tls }
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
  work = mkdtempSync(join(tmpdir(), 'certsmith-ingress-shim-'));
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

test('an annotated Ingress gets a Ready Certificate per tls entry; edits re-issue; deleting it deletes them', async () => {
  const applied = await kubectl(['apply', ...validateFlags, '-f', '-'], ingress(['a.example.test']));
  assert.equal(applied.code, 0, applied.stderr);
  const ing = await getJSON(['get', 'ingress', 'web', '-n', 'default']);

  const certs = await waitFor('two Ready Certificates from the Ingress', async () => {
    const list = await getJSON<{ items: Obj[] }>(['get', 'certificates', '-n', 'default']);
    const mine = list.items.filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === ing.metadata.uid));
    return mine.length === 2 && mine.every(isReady) ? mine : undefined;
  }, 60_000);
  const a = certs.find((c) => c.metadata.name === 'a-tls')!;
  assert.ok(a, 'a Certificate named after the secret');
  assert.deepEqual(a.spec!.issuerRef, { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  assert.equal(a.spec!.privateKey.algorithm, 'ECDSA');
  assert.deepEqual(a.metadata.ownerReferences, [{ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'web', uid: ing.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(await verifiedSANs('a-tls'), ['a.example.test']);
  assert.deepEqual(await verifiedSANs('b-tls'), ['b.example.test']);
  const events = await getJSON<{ items: Obj[] }>(['get', 'events', '-n', 'default']);
  const created = events.items.filter((e) => e.involvedObject?.kind === 'Ingress' && e.involvedObject.name === 'web' && e.reason === 'CreateCertificate');
  assert.deepEqual(created.map((e) => e.message).sort(), ['Successfully created Certificate "a-tls"', 'Successfully created Certificate "b-tls"']);

  // a host added to the first tls entry: the Certificate follows and is issued again with it
  const firstRevision = a.status!.revision as number;
  const edited = await kubectl(['apply', ...validateFlags, '-f', '-'], ingress(['a.example.test', 'www.a.example.test']));
  assert.equal(edited.code, 0, edited.stderr);
  await waitFor('a-tls re-issued with the new host', async () => {
    const c = await getJSON(['get', 'certificate', 'a-tls', '-n', 'default']);
    return isReady(c) && c.status!.revision > firstRevision && (c.spec!.dnsNames as string[]).includes('www.a.example.test') ? c : undefined;
  }, 60_000);
  assert.deepEqual(await verifiedSANs('a-tls'), ['a.example.test', 'www.a.example.test']);

  // the Ingress deleted: its Certificates go with it (owner references, cascading)
  const deleted = await kubectl(['delete', 'ingress', 'web', '-n', 'default']);
  assert.equal(deleted.code, 0, deleted.stderr);
  await waitFor('the Ingress\'s Certificates deleted', async () => {
    const list = await getJSON<{ items: Obj[] }>(['get', 'certificates', '-n', 'default']);
    return list.items.every((c) => !['a-tls', 'b-tls'].includes(c.metadata.name)) ? true : undefined;
  }, 30_000);
});

test('a bad annotation: a BadConfig Warning on the Ingress naming it, and no Certificate', async () => {
  const bad = ingress(['bad.example.test']).replace('name: web', 'name: bad').replace(/a-tls/, 'bad-a-tls').replace(/b-tls/, 'bad-b-tls')
    .replace('cert-manager.io/private-key-algorithm: ECDSA', 'cert-manager.io/duration: abc');
  const applied = await kubectl(['apply', ...validateFlags, '-f', '-'], bad);
  assert.equal(applied.code, 0, applied.stderr);
  const warning = await waitFor('a BadConfig event on Ingress bad', async () => {
    const events = await getJSON<{ items: Obj[] }>(['get', 'events', '-n', 'default']);
    return events.items.find((e) => e.involvedObject?.name === 'bad' && e.reason === 'BadConfig');
  });
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message!, /cert-manager\.io\/duration/);
  const list = await getJSON<{ items: Obj[] }>(['get', 'certificates', '-n', 'default']);
  assert.deepEqual(list.items.filter((c) => c.metadata.name.startsWith('bad-')), []);
});
