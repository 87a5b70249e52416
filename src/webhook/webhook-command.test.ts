// `certsmith webhook` as a process, started the way the e2e test and deploy/webhook.yaml start it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KubeObject } from '../api/meta.ts';
import { NamespaceType, SecretType } from '../api/resources.ts';
import { startTestApiServer } from '../server/testing/test-api-server.ts';
import { HttpStore } from '../store/http/http-store.ts';

const certsmith = resolve(import.meta.dirname, '../../test/rig/certsmith-source.mjs');
const dir = mkdtempSync(join(tmpdir(), 'certsmith-webhook-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const kubeconfigFor = (server: string) => {
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }], users: [{ name: 'u', user: {} }], contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  return path;
};

function run(args: string[], until?: RegExp): { done: Promise<{ code: number | null; out: string; err: string }>; seen: Promise<string>; stop(): void } {
  const child = spawn(process.execPath, [certsmith, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onSeen: (s: string) => void = () => {};
  let onGone: (e: Error) => void = () => {};
  const seen = new Promise<string>((res, rej) => { onSeen = res; onGone = rej; });
  const look = () => { if (until && until.test(out)) onSeen(out); };
  child.stdout.on('data', (d) => { out += d; look(); });
  child.stderr.on('data', (d) => (err += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const done = new Promise<{ code: number | null; out: string; err: string }>((res) => child.on('close', (code) => {
    clearTimeout(killer);
    onGone(new Error(`exited ${code} before ${until}: ${out}${err}`));
    res({ code, out, err });
  }));
  seen.catch(() => {});
  return { done, seen, stop: () => child.kill('SIGTERM') };
}

test('certsmith webhook: creates its CA Secret, logs "webhook serving", answers over TLS, stops on SIGTERM', async () => {
  const { api } = await startTestApiServer('webhook-cli');
  const store = new HttpStore({ server: api.url, qps: 0 });
  after(() => store.close());
  await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wh' } });
  const proc = run(['webhook', '--listen', '127.0.0.1:0', '--namespace', 'wh', '--ca-secret-name', 'wh-ca', '--dns-names', '127.0.0.1,localhost', '--kubeconfig', kubeconfigFor(api.url)], /webhook serving/);
  after(() => proc.stop());
  const out = await proc.seen;
  const port = Number(/serving on https:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  assert.ok(port > 0, out);
  const secret = await store.get<KubeObject & { data: Record<string, string> }>(SecretType, 'wh', 'wh-ca');
  assert.equal(secret?.metadata.annotations?.['cert-manager.io/allow-direct-injection'], 'true');
  const ca = Buffer.from(secret!.data['ca.crt'], 'base64').toString();
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x', operation: 'CREATE', kind: { group: 'cert-manager.io', version: 'v1', kind: 'Issuer' }, object: { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'default' }, spec: {} } } });
  const answer = await new Promise<any>((res, rej) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/validate', method: 'POST', ca, headers: { 'Content-Type': 'application/json' }, agent: false }, (r) => {
      let t = '';
      r.on('data', (d) => (t += d));
      r.on('end', () => res(JSON.parse(t)));
    });
    req.on('error', rej);
    req.end(body);
  });
  assert.equal(answer.response.allowed, false);
  assert.match(answer.response.status.message, /Issuer\.cert-manager\.io "i" is invalid: spec: Required value/);
  assert.doesNotMatch(out, /PRIVATE KEY/, 'the CA key is never logged');
  proc.stop();
  assert.equal((await proc.done).code, 0);
});

test('certsmith webhook: exits non-zero with the reason when the API cannot be reached', async () => {
  // a port that was free a moment ago: nothing listens there
  const port = await new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
  const { code, err } = await run(['webhook', '--listen', '127.0.0.1:0', '--kubeconfig', kubeconfigFor(`http://127.0.0.1:${port}`)]).done;
  assert.notEqual(code, 0);
  assert.match(err, /cannot set up the serving CA in Secret certsmith\/certsmith-webhook-ca on http:\/\/127\.0\.0\.1:\d+ .*cannot reach/);
});

test('certsmith webhook: bad flags are refused naming the flag', async () => {
  const kc = kubeconfigFor('http://127.0.0.1:1');
  const cases = [
    [['--listen', 'nowhere'], /--listen "nowhere": expected HOST:PORT/],
    [['--secure-port', '99999'], /--secure-port "99999": expected a port number/],
    [['--dns-names', ' , '], /--dns-names " , ": expected a comma-separated list/],
  ] as const;
  const results = await Promise.all(cases.map(([args]) => run(['webhook', ...args, '--kubeconfig', kc]).done));
  cases.forEach(([, message], i) => {
    assert.notEqual(results[i].code, 0);
    assert.match(results[i].err, message);
  });
});
