// The commands people type every day, with the machine's kubectl (v1.32; KUBECTL overrides)
// against a real `certsmith server --apply examples/` (issue 19). Each test checks the outcome
// as the server stores it, not only kubectl's exit status: a cluster and the embedded server
// must answer the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { isReady, run, waitFor } from './harness.ts';
import { kubectlBin, startKubectlSession, type KubeJSON, type ServerKubectlSession } from './kubectl-session.ts';

let s: ServerKubectlSession;
/** kubectl as a user runs it: asserting success, returning stdout */
const ok = async (args: string[], input?: string): Promise<string> => {
  const r = await s.kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const b64 = (text: string) => Buffer.from(text).toString('base64');

before(async () => {
  s = await startKubectlSession({ workPrefix: 'certsmith-kubectl-matrix-', serverArgs: ['--apply', 'examples/'] });
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

test('kubectl create secret generic|tls|docker-registry and create namespace (protobuf bodies)', async () => {
  assert.match(await ok(['create', 'secret', 'generic', 'tsig', '--from-literal=key=abc', '--from-literal=algorithm=hmac-sha256']), /^secret\/tsig created$/m);
  const tsig = await s.getJSON(['get', 'secret', 'tsig']);
  assert.deepEqual(tsig.data, { key: b64('abc'), algorithm: b64('hmac-sha256') });
  assert.equal(tsig.type, 'Opaque');

  const key = join(s.work, 'tls.key');
  const crt = join(s.work, 'tls.crt');
  const gen = await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=tls.example.test', '-days', '1', '-keyout', key, '-out', crt]);
  assert.equal(gen.code, 0, gen.stderr);
  await ok(['create', 'secret', 'tls', 'byo-tls', '--cert', crt, '--key', key]);
  const tls = await s.getJSON(['get', 'secret', 'byo-tls']);
  assert.equal(tls.type, 'kubernetes.io/tls');
  assert.equal(Buffer.from(tls.data!['tls.crt'], 'base64').toString(), readFileSync(crt, 'utf8'));
  assert.equal(Buffer.from(tls.data!['tls.key'], 'base64').toString(), readFileSync(key, 'utf8'));

  await ok(['create', 'secret', 'docker-registry', 'regcred', '--docker-server=registry.example.test', '--docker-username=u', '--docker-password=p']);
  const reg = await s.getJSON(['get', 'secret', 'regcred']);
  assert.equal(reg.type, 'kubernetes.io/dockerconfigjson');
  assert.equal(JSON.parse(Buffer.from(reg.data!['.dockerconfigjson'], 'base64').toString()).auths['registry.example.test'].username, 'u');

  // the response to a protobuf create is protobuf too: -o json prints what kubectl decoded
  const printed = JSON.parse(await ok(['create', 'namespace', 'demo', '-o', 'json'])) as KubeJSON & { status: { phase: string } };
  assert.equal(printed.metadata.name, 'demo');
  assert.match(printed.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.equal(printed.status.phase, 'Active');
  assert.equal(await ok(['get', 'namespace', 'demo', '-o', 'jsonpath={.status.phase}']), 'Active');

  const dup = await s.kubectl(['create', 'secret', 'generic', 'tsig', '--from-literal=key=x']);
  assert.notEqual(dup.code, 0);
  assert.match(dup.stderr, /AlreadyExists|already exists/);
});

test('kubectl apply, client-side and server-side, then kubectl diff shows nothing', async () => {
  await ok(['apply', '-f', 'examples/']);
  const diff = await s.kubectl(['diff', '-f', 'examples/']);
  assert.equal(diff.code, 0, `kubectl diff right after apply: ${diff.stdout}${diff.stderr}`);
  assert.equal(diff.stdout, '');

  const leaf = (name: string, extra = '') => `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ${name}, namespace: demo, labels: { tier: matrix } }
spec: { secretName: ${name}-tls, dnsNames: [${name}.example.test], issuerRef: { name: selfsigned, kind: ClusterIssuer }${extra} }
`;
  assert.match(await ok(['apply', '-f', '-'], leaf('client')), /certificate\.cert-manager\.io\/client created/);
  assert.match(await ok(['apply', '-f', '-'], leaf('client')), /certificate\.cert-manager\.io\/client unchanged/);
  assert.match(await ok(['apply', '--server-side', '-f', '-'], leaf('server')), /certificate\.cert-manager\.io\/server serverside-applied/);
  const server = await s.getJSON(['get', 'certificate', 'server', '-n', 'demo']);
  assert.deepEqual(server.spec?.dnsNames, ['server.example.test']);

  // diff names a real change, and applying it makes the diff empty again
  const changed = leaf('client', ', duration: 720h');
  const pending = await s.kubectl(['diff', '-f', '-'], changed);
  assert.equal(pending.code, 1, pending.stderr);
  assert.match(pending.stdout, /^\+\s+duration: 720h$/m);
  await ok(['apply', '-f', '-'], changed);
  const settled = await s.kubectl(['diff', '-f', '-'], changed);
  assert.equal(settled.code, 0, settled.stdout);

  await ok(['wait', '--for=condition=Ready', 'certificate/client', 'certificate/server', '-n', 'demo', '--timeout=60s']);
  assert.equal(await ok(['get', 'certificate', 'client', '-n', 'demo', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']), 'True');
});

test('server-side apply: two managers, a conflict without --force-conflicts, managedFields, removal only of unshared fields', async () => {
  const manifest = (spec: string, labels = '') => `apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: shared, namespace: demo${labels} }
spec: { ${spec} }
`;
  const alice = ['apply', '--server-side', '--field-manager=alice', '-f', '-'];
  const bob = ['apply', '--server-side', '--field-manager=bob', '-f', '-'];
  await ok(alice, manifest('secretName: shared-tls, dnsNames: [shared.example.test], issuerRef: { name: selfsigned, kind: ClusterIssuer }, duration: 720h', ', labels: { owner: alice }'));
  await ok(bob, manifest('renewBefore: 100h, dnsNames: [shared.example.test]'));

  const conflict = await s.kubectl(bob, manifest('renewBefore: 100h, duration: 1000h'));
  assert.notEqual(conflict.code, 0);
  assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "alice": \.spec\.duration/);
  assert.equal(await ok(['get', 'certificate', 'shared', '-n', 'demo', '-o', 'jsonpath={.spec.duration}']), '720h', 'nothing changed');
  await ok([...bob.slice(0, 2), '--force-conflicts', ...bob.slice(2)], manifest('renewBefore: 100h, duration: 1000h, dnsNames: [shared.example.test]'));

  const shown = YAML.parse(await ok(['get', 'certificate', 'shared', '-n', 'demo', '-o', 'yaml', '--show-managed-fields']));
  const byManager = Object.fromEntries(shown.metadata.managedFields.map((e: { manager: string; operation: string; fieldsV1: object }) => [e.manager, e]));
  assert.equal(byManager.alice.operation, 'Apply');
  assert.deepEqual(Object.keys(byManager.alice.fieldsV1['f:spec']).sort(), ['f:dnsNames', 'f:issuerRef', 'f:secretName']);
  assert.deepEqual(Object.keys(byManager.bob.fieldsV1['f:spec']).sort(), ['f:dnsNames', 'f:duration', 'f:renewBefore']);
  assert.equal(shown.spec.duration, '1000h');
  const hidden = YAML.parse(await ok(['get', 'certificate', 'shared', '-n', 'demo', '-o', 'yaml']));
  assert.equal(hidden.metadata.managedFields, undefined, 'kubectl hides them unless asked');

  // alice stops applying dnsNames (bob still owns them) and her label (only hers)
  await ok(alice, manifest('secretName: shared-tls, issuerRef: { name: selfsigned, kind: ClusterIssuer }'));
  const after = await s.getJSON(['get', 'certificate', 'shared', '-n', 'demo']) as KubeJSON & { metadata: { labels?: Record<string, string> } };
  assert.deepEqual(after.spec?.dnsNames, ['shared.example.test']);
  assert.equal(after.metadata.labels?.owner, undefined);
  // a field changed by another kind of write (kubectl patch: operation Update) is that writer's now
  await ok(['patch', 'certificate', 'shared', '-n', 'demo', '--type=merge', '-p', '{"spec":{"secretName":"patched-tls"}}']);
  const taken = await s.kubectl(alice, manifest('secretName: shared-tls, issuerRef: { name: selfsigned, kind: ClusterIssuer }'));
  assert.notEqual(taken.code, 0);
  assert.match(taken.stderr, /conflict with "kubectl-patch": \.spec\.secretName/);
  await ok(['delete', 'certificate', 'shared', '-n', 'demo']);
});

test('kubectl get -o yaml|json|wide|name|jsonpath|custom-columns, -A, -l, --field-selector', async () => {
  const yaml = YAML.parse(await ok(['get', 'certificate', 'web-rsa', '-o', 'yaml']));
  assert.equal(yaml.kind, 'Certificate');
  assert.equal(yaml.spec.secretName, 'web-rsa-tls');
  const json = JSON.parse(await ok(['get', 'secret', 'tsig', '-o', 'json']));
  assert.equal(json.data.key, b64('abc'));

  const wide = await ok(['get', 'certificates', '-o', 'wide']);
  assert.deepEqual(wide.split('\n')[0].split(/\s+/), ['NAME', 'READY', 'SECRET', 'ISSUER', 'STATUS', 'AGE']);
  assert.match(wide, /^web-rsa\s+True\s+web-rsa-tls\s+example-ca\s+Certificate is up to date/m);

  assert.deepEqual((await ok(['get', 'certificates', '-n', 'demo', '-o', 'name'])).trim().split('\n'),
    ['certificate.cert-manager.io/client', 'certificate.cert-manager.io/server']);
  assert.equal(await ok(['get', 'certificates', '-n', 'demo', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.secretName};{end}']), 'client=client-tls;server=server-tls;');
  const columns = await ok(['get', 'certificates', '-n', 'demo', '-o', 'custom-columns=NAME:.metadata.name,DNS:.spec.dnsNames[0]']);
  assert.deepEqual(columns.trim().split('\n').map((l) => l.split(/\s+/)), [['NAME', 'DNS'], ['client', 'client.example.test'], ['server', 'server.example.test']]);

  const all = await ok(['get', 'certificates', '-A', '-l', 'tier=matrix', '-o', 'name']);
  assert.deepEqual(all.trim().split('\n'), ['certificate.cert-manager.io/client', 'certificate.cert-manager.io/server']);
  const everywhere = await ok(['get', 'certificates', '-A']);
  assert.match(everywhere, /^demo\s+client\s+True\s/m);
  assert.match(everywhere, /^default\s+web-rsa\s+True\s/m);
  assert.equal((await ok(['get', 'secrets', '--field-selector', 'type=kubernetes.io/dockerconfigjson', '-o', 'name'])).trim(), 'secret/regcred');
});

test('kubectl describe, events and explain', async () => {
  const described = await ok(['describe', 'secret', 'tsig']);
  assert.match(described, /^Name:\s+tsig$/m);
  assert.match(described, /^Type:\s+Opaque$/m);
  assert.match(described, /^key:\s+3 bytes$/m);
  assert.match(await ok(['describe', 'certificate', 'client', '-n', 'demo']), /^\s+Secret Name:\s+client-tls$/m);

  const events = await ok(['events', '-n', 'demo', '--for', 'certificate/client']);
  assert.match(events, /Normal\s+Issuing\s+Certificate\/client\s+The certificate has been successfully issued/);

  const explained = await ok(['explain', 'certificate.spec.privateKey']);
  assert.match(explained, /^KIND:\s+Certificate$/m);
  assert.match(explained, /^FIELD:\s+privateKey <Object>$/m);
  for (const field of ['algorithm', 'encoding', 'rotationPolicy', 'size']) assert.match(explained, new RegExp(`^\\s+${field}\\s+<`, 'm'));
  // the same from /openapi/v2 in protobuf, the document kubectl before 1.27 reads
  const fromV2 = await ok(['explain', 'certificate.spec.privateKey', '--output', 'plaintext-openapiv2']);
  assert.match(fromV2, /^KIND:\s+Certificate$/m);
  assert.match(fromV2, /^\s+rotationPolicy\s+<string>$/m);
  // the CRDs carry upstream's full schema: the solver pod template's core types are explained too (issue 15)
  const deep = await ok(['explain', 'issuer.spec.acme.solvers.http01.ingress.podTemplate.spec.affinity.nodeAffinity']);
  assert.match(deep, /^\s+requiredDuringSchedulingIgnoredDuringExecution\s+<Object>$/m);
  const refs = await ok(['explain', 'clusterissuer.spec.acme.solvers.http01.gatewayHTTPRoute.parentRefs']);
  assert.match(refs, /^\s+sectionName\s+<string>$/m);
  assert.match(refs, /^\s+name\s+<string> -required-$/m);
});

test('kubectl patch (merge, json, strategic on a Secret), label, annotate', async () => {
  await ok(['patch', 'secret', 'tsig', '-p', JSON.stringify({ data: { extra: b64('1') } })]);
  await ok(['patch', 'secret', 'tsig', '--type=merge', '-p', JSON.stringify({ data: { algorithm: null } })]);
  await ok(['patch', 'secret', 'tsig', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/data/key', value: b64('xyz') }])]);
  assert.deepEqual((await s.getJSON(['get', 'secret', 'tsig'])).data, { key: b64('xyz'), extra: b64('1') });

  await ok(['patch', 'certificate', 'client', '-n', 'demo', '--type=merge', '-p', '{"spec":{"renewBefore":"100h"}}']);
  assert.equal((await s.getJSON(['get', 'certificate', 'client', '-n', 'demo'])).spec?.renewBefore, '100h');

  await ok(['label', 'secret', 'tsig', 'team=dns']);
  await ok(['annotate', 'secret', 'tsig', 'example.test/owner=ops']);
  const labelled = await s.getJSON(['get', 'secret', 'tsig']) as KubeJSON & { metadata: { labels?: Record<string, string> } };
  assert.equal(labelled.metadata.labels?.team, 'dns');
  assert.equal(labelled.metadata.annotations?.['example.test/owner'], 'ops');
  await ok(['label', 'secret', 'tsig', 'team-']);
  assert.equal((await s.getJSON(['get', 'secret', 'tsig']) as { metadata: { labels?: Record<string, string> } }).metadata.labels?.team, undefined);
});

test('kubectl auth can-i, api-resources, api-versions', async () => {
  assert.equal((await ok(['auth', 'can-i', 'create', 'certificates'])).trim(), 'yes');
  assert.equal((await ok(['auth', 'can-i', 'delete', 'secrets', '-n', 'demo'])).trim(), 'yes');
  assert.equal((await ok(['auth', 'can-i', 'get', '/healthz'])).trim(), 'yes');
  assert.match(await ok(['auth', 'can-i', '--list']), /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);

  const resources = await ok(['api-resources']);
  assert.match(resources, /^selfsubjectaccessreviews\s+authorization\.k8s\.io\/v1\s+false\s+SelfSubjectAccessReview$/m);
  assert.match(resources, /^certificates\s+cert,certs\s+cert-manager\.io\/v1\s+true\s+Certificate$/m);
  const inCategory = (await ok(['api-resources', '--categories=cert-manager', '-o', 'name'])).trim().split('\n').sort();
  assert.deepEqual(inCategory, ['certificaterequests.cert-manager.io', 'certificates.cert-manager.io', 'challenges.acme.cert-manager.io',
    'clusterissuers.cert-manager.io', 'issuers.cert-manager.io', 'orders.acme.cert-manager.io']);

  const versions = (await ok(['api-versions'])).trim().split('\n');
  for (const v of ['v1', 'cert-manager.io/v1', 'acme.cert-manager.io/v1', 'authorization.k8s.io/v1', 'coordination.k8s.io/v1']) assert.ok(versions.includes(v), v);
});

test('kubectl get all and get cert-manager', async () => {
  // `all` is kube-apiserver's category of workloads; here pods and services carry it, and
  // cert-manager's kinds are not in it (their CRDs do not declare it)
  const none = await s.kubectl(['get', 'all', '-n', 'demo']);
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, '');
  assert.match(none.stderr, /No resources found in demo namespace/);
  await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: demo }\nspec: { ports: [{ port: 80 }], selector: { app: web } }\n');
  const all = await ok(['get', 'all', '-n', 'demo', '-o', 'name']);
  assert.equal(all.trim(), 'service/web');

  const cm = await ok(['get', 'cert-manager', '-n', 'demo', '-o', 'name']);
  const names = cm.trim().split('\n');
  for (const n of ['certificate.cert-manager.io/client', 'certificate.cert-manager.io/server', 'certificaterequest.cert-manager.io/client-1', 'clusterissuer.cert-manager.io/selfsigned']) {
    assert.ok(names.includes(n), `${n} in:\n${cm}`);
  }
  assert.ok(!names.some((n) => n.startsWith('service/') || n.startsWith('secret/')));
  const table = await ok(['get', 'cert-manager', '-A']);
  assert.match(table, /^default\s+certificate\.cert-manager\.io\/web-rsa\s+True\s+web-rsa-tls\s/m);
});

test('kubectl delete (name, -l, --all) and wait --for=delete', async () => {
  assert.match(await ok(['delete', 'secret', 'regcred']), /secret "regcred" deleted/);
  assert.notEqual((await s.kubectl(['get', 'secret', 'regcred'])).code, 0);

  await ok(['delete', 'certificate', '-n', 'demo', '-l', 'tier=matrix', '--wait=true']);
  assert.equal((await ok(['get', 'certificates', '-n', 'demo', '-o', 'name'])).trim(), '');
  await ok(['wait', '--for=delete', 'certificaterequest/client-1', '-n', 'demo', '--timeout=30s']);

  const file = join(s.work, 'bye.yaml');
  writeFileSync(file, 'apiVersion: v1\nkind: Secret\nmetadata: { name: bye, namespace: demo }\nstringData: { a: b }\n');
  await ok(['apply', '-f', file]);
  await ok(['delete', 'secrets', '--all', '-n', 'demo']);
  assert.equal((await ok(['get', 'secrets', '-n', 'demo', '-o', 'name'])).trim(), '');
});

test('kubectl apply --prune -l removes what left the manifests, and only that', async () => {
  // kubectl's default prune list is workload kinds (ConfigMap, Deployment, ...), which the embedded
  // server does not serve and which never include custom resources such as Certificates: pruning
  // Certificates needs --prune-allowlist on a cluster too
  const allow = ['--prune-allowlist=core/v1/Secret', '--prune-allowlist=cert-manager.io/v1/Certificate'];
  const dir = join(s.work, 'prune');
  mkdirSync(dir, { recursive: true });
  const labels = '{ app: prune-matrix }';
  const cert = (name: string) => `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: demo, labels: ${labels} }\nspec: { secretName: ${name}-tls, commonName: ${name}.example.test, dnsNames: [${name}.example.test], issuerRef: { name: selfsigned, kind: ClusterIssuer } }\n`;
  writeFileSync(join(dir, 'secret.yaml'), `apiVersion: v1\nkind: Secret\nmetadata: { name: prune-a, namespace: demo, labels: ${labels} }\nstringData: { v: a }\n`);
  writeFileSync(join(dir, 'keep.yaml'), cert('prune-keep'));
  writeFileSync(join(dir, 'gone.yaml'), cert('prune-gone'));
  await ok(['apply', '-f', dir]);
  // somebody else's object with the same label, not in the manifests' namespace, stays
  await ok(['create', 'secret', 'generic', 'prune-other', '-n', 'default', '--from-literal=v=x']);
  await ok(['label', 'secret', 'prune-other', '-n', 'default', 'app=prune-matrix']);
  rmSync(join(dir, 'gone.yaml'));
  const out = await ok(['apply', '--prune', '-l', 'app=prune-matrix', ...allow, '-f', dir]);
  assert.match(out, /certificate.cert-manager.io\/prune-gone pruned/);
  assert.doesNotMatch(out, /prune-keep pruned|prune-a pruned|prune-other pruned/);
  assert.equal((await ok(['get', 'certificates', '-n', 'demo', '-l', 'app=prune-matrix', '-o', 'name'])).trim(), 'certificate.cert-manager.io/prune-keep');
  assert.equal((await ok(['get', 'secrets', '-n', 'demo', '-l', 'app=prune-matrix', '-o', 'name'])).trim(), 'secret/prune-a');
  assert.equal((await ok(['get', 'secret', 'prune-other', '-n', 'default', '-o', 'name'])).trim(), 'secret/prune-other');
});

test('kubectl get -w streams a change as it happens', async () => {
  await s.apply('apiVersion: v1\nkind: Secret\nmetadata: { name: watched, namespace: demo }\nstringData: { v: "1" }\n');
  const child = spawn(kubectlBin, ['--kubeconfig', s.server.kubeconfig, 'get', 'secret', 'watched', '-n', 'demo', '-w', '-o', 'jsonpath={.metadata.labels.step}{"\\n"}'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    await waitFor('the initial line', () => out.split('\n').length >= 2, 15_000);
    await ok(['label', 'secret', 'watched', '-n', 'demo', 'step=two']);
    await waitFor('the labelled version streamed', () => out.includes('two'), 15_000);
  } finally {
    child.kill();
  }
});

test('kubectl edit with a scripted EDITOR changes the stored object', async () => {
  const editor = join(s.work, 'editor.sh');
  // what a person does in vi: change one field and save
  writeFileSync(editor, '#!/bin/sh\nsed -i "s/renewBefore: 360h0m0s/renewBefore: 240h0m0s/; s/renewBefore: 360h/renewBefore: 240h/" "$1"\n', { mode: 0o755 });
  const r = await run(kubectlBin, ['--kubeconfig', s.server.kubeconfig, 'edit', 'certificate', 'web-rsa', '-n', 'default'], { env: { ...process.env, EDITOR: editor, KUBE_EDITOR: editor }, timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /certificate.cert-manager.io\/web-rsa edited/);
  assert.equal(await ok(['get', 'certificate', 'web-rsa', '-n', 'default', '-o', 'jsonpath={.spec.renewBefore}']), '240h');
});

test('kubectl delete --cascade=orphan keeps the dependents, --cascade=foreground removes them first', async () => {
  const cert = (name: string) => `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${name}, namespace: demo }\nspec: { secretName: ${name}-tls, commonName: ${name}.example.test, dnsNames: [${name}.example.test], issuerRef: { name: selfsigned, kind: ClusterIssuer } }\n`;
  await s.apply(cert('orphaned') + '---\n' + cert('foreground'));
  for (const name of ['orphaned', 'foreground']) {
    await waitFor(`${name} Ready`, async () => isReady(await s.getJSON(['get', 'certificate', name, '-n', 'demo'])));
  }
  const requestsOf = async (name: string) => (await s.getJSON<{ items: KubeJSON[] }>(['get', 'certificaterequests', '-n', 'demo'])).items
    .filter((r) => r.metadata.name.startsWith(`${name}-`));
  assert.ok((await requestsOf('orphaned')).length >= 1);
  await ok(['delete', 'certificate', 'orphaned', '-n', 'demo', '--cascade=orphan']);
  const left = await requestsOf('orphaned');
  assert.ok(left.length >= 1, 'the CertificateRequest outlives its orphaning owner');
  assert.ok(left.every((r) => !(r.metadata.ownerReferences ?? []).some((o) => o.kind === 'Certificate')), 'and no longer names it as owner');

  assert.ok((await requestsOf('foreground')).length >= 1);
  await ok(['delete', 'certificate', 'foreground', '-n', 'demo', '--cascade=foreground', '--wait=true', '--timeout=30s']);
  assert.notEqual((await s.kubectl(['get', 'certificate', 'foreground', '-n', 'demo'])).code, 0);
  assert.equal((await requestsOf('foreground')).length, 0, 'dependents gone with the owner');
});

/** Debian's kubectl v1.20 (kubernetes-client), unpacked beside the machine's by test/provision.sh */
const kubectl120 = process.env.KUBECTL_1_20 ?? '/opt/certsmith-test/kubectl-1.20/kubectl';

test('kubectl v1.20: create secret, apply, get, describe, label, patch, wait, delete against the same server', async () => {
  assert.ok(existsSync(kubectl120), `no kubectl v1.20 at ${kubectl120}: test/provision.sh unpacks Debian's kubernetes-client there`);
  const k = (args: string[], input?: string) => run(kubectl120, ['--kubeconfig', s.server.kubeconfig, ...args], { input, timeoutMs: 30_000 });
  const must = async (args: string[], input?: string) => {
    const r = await k(args, input);
    assert.equal(r.code, 0, `kubectl v1.20 ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.match(await must(['version', '--client', '--short']), /v1\.20\./);
  await must(['create', 'secret', 'generic', 'old-kubectl', '-n', 'demo', '--from-literal=k=v']);
  assert.equal(Buffer.from(await must(['get', 'secret', 'old-kubectl', '-n', 'demo', '-o', 'jsonpath={.data.k}']), 'base64').toString(), 'v');
  // v1.20 validates against /openapi/v2
  await must(['apply', '-f', '-'], 'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: old-kubectl, namespace: demo }\nspec: { secretName: old-kubectl-tls, commonName: old.example.test, dnsNames: [old.example.test], issuerRef: { name: selfsigned, kind: ClusterIssuer } }\n');
  await must(['wait', '--for=condition=Ready', 'certificate/old-kubectl', '-n', 'demo', '--timeout=30s']);
  assert.match(await must(['get', 'certificates', '-n', 'demo']), /old-kubectl\s+True/);
  assert.match(await must(['describe', 'certificate', 'old-kubectl', '-n', 'demo']), /Secret Name:\s+old-kubectl-tls/);
  await must(['label', 'certificate', 'old-kubectl', '-n', 'demo', 'era=1.20']);
  await must(['patch', 'certificate', 'old-kubectl', '-n', 'demo', '--type=merge', '-p', '{"spec":{"renewBefore":"100h"}}']);
  const c = JSON.parse(await must(['get', 'certificate', 'old-kubectl', '-n', 'demo', '-o', 'json'])) as { metadata: { labels?: Record<string, string> }; spec: { renewBefore?: string } };
  assert.equal(c.metadata.labels?.era, '1.20');
  assert.equal(c.spec.renewBefore, '100h');
  await must(['delete', 'certificate', 'old-kubectl', '-n', 'demo']);
  await must(['delete', 'secret', 'old-kubectl', '-n', 'demo']);
});
