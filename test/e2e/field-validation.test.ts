// Unknown fields through kubectl, as kube-apiserver treats them for structural CRDs (issue 15):
// kubectl sends fieldValidation=Strict, so a typo'd manifest is refused with kube's wording and
// nothing is stored; Warn stores the pruned object and prints kube's warnings; Ignore prunes
// silently. Server-side apply and `certsmith apply` behave the same.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from './harness.ts';
import { kubectlSession, type KubectlSession } from './kubectl-session.ts';

let server: RunningServer;
let s: KubectlSession;
let dir: string;

before(async () => {
  server = await startServer({ args: ['--no-controllers'] });
  s = await kubectlSession(server);
  dir = mkdtempSync(join(tmpdir(), 'certsmith-fv-'));
});
after(async () => {
  await server?.stop();
  server?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const typoCert = (name: string) => `apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: ${name}
  namespace: default
spec:
  secretName: ${name}-tls
  renewbefore: 360h
  dnsNames: [${name}.example.com]
  issuerRef: {name: missing}
  privateKey:
    algoritm: ECDSA
`;

const strictMessage = 'strict decoding error: unknown field "spec.privateKey.algoritm", unknown field "spec.renewbefore"';

async function notStored(name: string) {
  const got = await s.kubectl(['get', 'certificate', name, '-n', 'default', '-o', 'name']);
  assert.notEqual(got.code, 0, `${name} was stored: ${got.stdout}`);
  assert.match(got.stderr, /NotFound|not found/);
}

test('kubectl apply of a typo\'d Certificate is refused with kube\'s strict decoding error and nothing is stored', async () => {
  const r = await s.kubectl(['apply', '-f', '-'], typoCert('typo'));
  assert.notEqual(r.code, 0, r.stdout);
  assert.match(r.stderr, /Error from server \(BadRequest\)/);
  assert.ok(r.stderr.includes(`Certificate in version "v1" cannot be handled as a Certificate: ${strictMessage}`), r.stderr);
  await notStored('typo');
});

test('kubectl create and replace are strict too', async () => {
  const created = await s.kubectl(['create', '-f', '-'], typoCert('typo-create'));
  assert.notEqual(created.code, 0, created.stdout);
  assert.ok(created.stderr.includes(strictMessage), created.stderr);
  await notStored('typo-create');
  const good = await s.kubectl(['create', '-f', '-'], typoCert('replaced').replace(/^ {2}renewbefore.*\n/m, '').replace(/^ {4}algoritm.*\n/m, '    algorithm: ECDSA\n'));
  assert.equal(good.code, 0, good.stderr);
  const replaced = await s.kubectl(['replace', '-f', '-'], typoCert('replaced'));
  assert.notEqual(replaced.code, 0, replaced.stdout);
  assert.ok(replaced.stderr.includes(strictMessage), replaced.stderr);
});

test('--validate=warn stores the pruned object and prints kube\'s warnings', async () => {
  const r = await s.kubectl(['apply', '--validate=warn', '-f', '-'], typoCert('warned'));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /certificate.cert-manager.io\/warned created/);
  assert.match(r.stderr, /Warning: unknown field "spec.privateKey.algoritm"/);
  assert.match(r.stderr, /Warning: unknown field "spec.renewbefore"/);
  const stored = await s.getJSON(['get', 'certificate', 'warned', '-n', 'default']);
  assert.equal(stored.spec!.renewbefore, undefined);
  assert.equal(stored.spec!.privateKey?.algoritm, undefined);
  assert.equal(stored.spec!.secretName, 'warned-tls');
});

test('--validate=ignore (and =false) prunes silently', async () => {
  for (const [flag, name] of [['--validate=ignore', 'ignored'], ['--validate=false', 'unvalidated']]) {
    const r = await s.kubectl(['apply', flag, '-f', '-'], typoCert(name));
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /unknown field/);
    const stored = await s.getJSON(['get', 'certificate', name, '-n', 'default']);
    assert.equal(stored.spec!.renewbefore, undefined);
  }
});

test('kubectl apply --server-side is strict', async () => {
  const r = await s.kubectl(['apply', '--server-side', '-f', '-'], typoCert('ssa'));
  assert.notEqual(r.code, 0, r.stdout);
  assert.ok(r.stderr.includes(strictMessage), r.stderr);
  await notStored('ssa');
});

test('kubectl patch (which sends no fieldValidation: Warn) prunes with warnings; unknown metadata and Secret fields are refused', async () => {
  const merge = await s.kubectl(['patch', 'certificate', 'warned', '-n', 'default', '--type=merge', '-p', '{"spec":{"duration":"2160h","renewbefore":"1h"}}']);
  assert.equal(merge.code, 0, merge.stderr);
  assert.match(merge.stderr, /Warning: unknown field "spec.renewbefore"/);
  const json = await s.kubectl(['patch', 'certificate', 'warned', '-n', 'default', '--type=json', '-p', '[{"op":"add","path":"/spec/renewbefore","value":"1h"}]']);
  assert.equal(json.code, 0, json.stderr);
  assert.match(json.stderr, /Warning: unknown field "spec.renewbefore"/);
  const stored = await s.getJSON(['get', 'certificate', 'warned', '-n', 'default']);
  assert.equal(stored.spec!.duration, '2160h');
  assert.equal(stored.spec!.renewbefore, undefined);
  const meta = await s.kubectl(['apply', '-f', '-'], `apiVersion: v1
kind: Secret
metadata: {name: typo-secret, namespace: default, lables: {a: b}}
strinData: {a: b}
`);
  assert.notEqual(meta.code, 0, meta.stdout);
  assert.ok(meta.stderr.includes('strict decoding error: unknown field "metadata.lables", unknown field "strinData"'), meta.stderr);
});

test('certsmith apply is strict by default; --validate=warn and =ignore prune', async () => {
  const file = join(dir, 'typo.yaml');
  writeFileSync(file, typoCert('cli-typo'));
  const strict = await server.cli(['apply', '-f', file]);
  assert.notEqual(strict.code, 0, strict.stdout);
  assert.ok(strict.stderr.includes(`Certificate default/cli-typo: ${strictMessage}`), strict.stderr);
  await notStored('cli-typo');
  const warn = await server.cli(['apply', '--validate=warn', '-f', file]);
  assert.equal(warn.code, 0, warn.stderr);
  assert.match(warn.stderr, /Warning: unknown field "spec.renewbefore"/);
  const stored = await s.getJSON(['get', 'certificate', 'cli-typo', '-n', 'default']);
  assert.equal(stored.spec!.renewbefore, undefined);
  writeFileSync(file, typoCert('cli-ignored'));
  const ignore = await server.cli(['apply', '--validate=ignore', '-f', file]);
  assert.equal(ignore.code, 0, ignore.stderr);
  assert.doesNotMatch(ignore.stderr, /unknown field/);
  const bad = await server.cli(['apply', '--validate=maybe', '-f', file]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--validate/);
});
