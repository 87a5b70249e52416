// One server per data dir (issue 15): a second `certsmith server` on the same data dir exits at
// once, before it writes anything (no kubeconfig rewrite, no --apply against the shared
// database); a server killed with -9 leaves no lock behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certsmithBin, run, startServer } from './harness.ts';

test('a second server on the same data dir exits at once; after kill -9 the data dir can be used again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-lock-'));
  const manifests = mkdtempSync(join(tmpdir(), 'certsmith-lock-apply-'));
  try {
    const first = await startServer({ dataDir });
    try {
      const kubeconfigBefore = readFileSync(first.kubeconfig, 'utf8');
      writeFileSync(join(manifests, 'issuer.yaml'), 'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: from-second, namespace: default}\nspec: {selfSigned: {}}\n');
      const started = Date.now();
      const second = await run(process.execPath, [
        certsmithBin, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0',
        '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0', '--apply', manifests,
      ], { timeoutMs: 20_000 });
      assert.notEqual(second.code, 0, second.stdout + second.stderr);
      assert.match(second.stderr, new RegExp(`data dir ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another certsmith server \\(pid ${first.process.pid}\\)`));
      assert.doesNotMatch(second.stdout, /listening/);
      assert.ok(Date.now() - started < 15_000);
      assert.equal(readFileSync(first.kubeconfig, 'utf8'), kubeconfigBefore, 'the kubeconfig was rewritten');
      const issuer = await first.cli(['get', 'issuer', 'from-second', '-n', 'default']);
      assert.notEqual(issuer.code, 0, 'the second server applied its manifests: ' + issuer.stdout);
    } finally {
      first.kill();
      await first.stop();
    }
    const again = await startServer({ dataDir });
    try {
      const got = await again.cli(['get', 'issuers', '-A']);
      assert.equal(got.code, 0, got.stderr);
      assert.doesNotMatch(again.output(), /made a new API token/, 'the token was there');
    } finally {
      await again.stop();
    }
    // restored without its token file: a new token, and the server says what that breaks
    rmSync(join(dataDir, 'token'));
    const restored = await startServer({ dataDir });
    try {
      assert.match(restored.output(), /made a new API token for a data dir whose store has none .*kubeconfigs from before get 401 Unauthorized/);
    } finally {
      await restored.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(manifests, { recursive: true, force: true });
  }
});
