import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { writeKubeconfig, loadClientConfig, KubeconfigError } from './kubeconfig.ts';
import { ensureAccessToken } from './data-dir.ts';

function withDir(fn: (dir: string) => void) {
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-kubeconfig-'));
    const saved = process.env.KUBECONFIG;
    try {
      fn(dir);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('writes a 0600 kubeconfig named certsmith that reads back', withDir((dir) => {
  const path = join(dir, 'kubeconfig');
  writeKubeconfig(path, { server: 'https://127.0.0.1:6443', caPem, token: 't0k' });
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const doc = YAML.parse(readFileSync(path, 'utf8'));
  assert.equal(doc['current-context'], 'certsmith');
  assert.equal(doc.clusters[0].name, 'certsmith');
  assert.equal(doc.users[0].name, 'certsmith');
  assert.deepEqual(loadClientConfig({ kubeconfig: path }), {
    server: 'https://127.0.0.1:6443', caPem, token: 't0k', insecure: undefined, namespace: 'default', source: path,
  });
}));

test('the socket of certsmith server goes in a cluster extension that reads back, resolved against the kubeconfig', withDir((dir) => {
  const path = join(dir, 'kubeconfig');
  writeKubeconfig(path, { server: 'https://127.0.0.1:6443', caPem, token: 't0k', socketPath: join(dir, 'api.sock') });
  const doc = YAML.parse(readFileSync(path, 'utf8'));
  assert.deepEqual(doc.clusters[0].cluster.extensions, [{ name: 'certsmith.io/api-socket', extension: { path: join(dir, 'api.sock') } }]);
  assert.equal(loadClientConfig({ kubeconfig: path }).socketPath, join(dir, 'api.sock'));
  doc.clusters[0].cluster.extensions[0].extension.path = 'api.sock';
  writeFileSync(path, YAML.stringify(doc));
  assert.equal(loadClientConfig({ kubeconfig: path }).socketPath, join(dir, 'api.sock'));
}));

test('resolves --kubeconfig, then the first existing $KUBECONFIG entry; CA files are relative to the kubeconfig', withDir((dir) => {
  writeFileSync(join(dir, 'ca.pem'), caPem);
  const other = join(dir, 'other');
  writeFileSync(other, YAML.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'k', cluster: { server: 'https://kube.test:443/', 'certificate-authority': 'ca.pem', 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'abc' } }],
    contexts: [{ name: 'c', context: { cluster: 'k', user: 'u', namespace: 'certs' } }],
  }));
  process.env.KUBECONFIG = `${join(dir, 'missing')}:${other}`;
  const cfg = loadClientConfig();
  assert.equal(cfg.server, 'https://kube.test:443');
  assert.equal(cfg.caPem, caPem);
  assert.equal(cfg.insecure, true);
  assert.equal(cfg.namespace, 'certs');
  assert.equal(cfg.token, 'abc');
  const mine = join(dir, 'mine');
  writeKubeconfig(mine, { server: 'https://127.0.0.1:1', caPem, token: 'x' });
  assert.equal(loadClientConfig({ kubeconfig: mine }).server, 'https://127.0.0.1:1');
  assert.throws(() => loadClientConfig({ kubeconfig: join(dir, 'nope') }), (e: unknown) => e instanceof KubeconfigError && /no kubeconfig at/.test((e as Error).message));
}));

test('the access token is random per data dir, 0600, and stable across restarts', withDir((dir) => {
  const a = ensureAccessToken(join(dir, 'one'));
  assert.ok(a.length >= 40);
  assert.equal(ensureAccessToken(join(dir, 'one')), a);
  assert.notEqual(ensureAccessToken(join(dir, 'two')), a);
  assert.equal(statSync(join(dir, 'one', 'token')).mode & 0o777, 0o600);
}));

// A file whose current-context names a context defined elsewhere (kubectl merges the files of
// $KUBECONFIG; certsmith reads one) said "has no current context", which it has.
test('a current-context that names no context in the file says which, and that files are not merged', withDir((dir) => {
  const path = join(dir, 'prefs');
  writeFileSync(path, 'apiVersion: v1\nkind: Config\ncurrent-context: certsmith\n');
  assert.throws(() => loadClientConfig({ kubeconfig: path }), (e: Error) => e instanceof KubeconfigError
    && e.message === `kubeconfig ${path}: its current-context "certsmith" is not defined in it (certsmith reads one kubeconfig file: the first of $KUBECONFIG that exists; it does not merge them as kubectl does)`);
  writeFileSync(path, 'apiVersion: v1\nkind: Config\n');
  assert.throws(() => loadClientConfig({ kubeconfig: path }), /has no current-context/);
}));
