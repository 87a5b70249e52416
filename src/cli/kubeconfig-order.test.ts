// From the same shell, a CLI command and `certsmith controller` reach the same API server. Here
// ~/.kube/config names one server and ./.certsmith/kubeconfig (certsmith server's) another:
// both commands must go to the first, as kubectl would. Neither server runs, so each command's
// refusal names the address it tried.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../test/e2e/harness.ts';
import { freePort } from '../../test/rig/ports.ts';

const certsmithBin = fileURLToPath(new URL('../../test/rig/certsmith-source.mjs', import.meta.url));

function kubeconfig(path: string, port: number) {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 'not-a-secret' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
}

test('the CLI and certsmith controller resolve the kubeconfig in one order: ~/.kube/config before ./.certsmith/kubeconfig', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-kubeconfig-order-'));
  try {
    const [homePort, ownPort] = [await freePort(), await freePort()];
    const home = join(dir, 'home');
    const site = join(dir, 'site');
    kubeconfig(join(home, '.kube', 'config'), homePort);
    kubeconfig(join(site, '.certsmith', 'kubeconfig'), ownPort);
    const env = { HOME: home, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' };

    const cli = await run(process.execPath, [certsmithBin, 'get', 'certificates'], { cwd: site, env, timeoutMs: 30_000 });
    assert.notEqual(cli.code, 0);
    const controller = await run(process.execPath, [certsmithBin, 'controller', '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0'], { cwd: site, env, timeoutMs: 30_000 });
    assert.notEqual(controller.code, 0);
    for (const [who, r] of [['certsmith get', cli], ['certsmith controller', controller]] as const) {
      assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${homePort}`), `${who} tried ~/.kube/config's server:\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, new RegExp(`127\\.0\\.0\\.1:${ownPort}`), `${who} did not go to ./.certsmith/kubeconfig's`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
