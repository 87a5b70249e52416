// Issue 12 on a real `certsmith server`: a data dir or token that is not the service user's
// alone stops the start with a message naming the path and the rule; deploy hooks die with
// the server, even with a SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certsmithBin, run, startServer, waitFor } from './harness.ts';
import { processGone } from '../rig/processes.ts';

function serverArgs(dataDir: string): string[] {
  return [certsmithBin, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0'];
}

test('certsmith server refuses a data dir writable by others, and a token readable by others', async () => {
  const base = mkdtempSync(join(tmpdir(), 'certsmith-e2e-datadir-'));
  try {
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    // a server that starts would run until the timeout kills it
    const r1 = await run(process.execPath, serverArgs(open), { timeoutMs: 20_000 });
    assert.equal(r1.code, 1, r1.stderr);
    assert.match(r1.stderr, new RegExp(`data dir ${open} has mode 0777: it must not be writable by group or others`));

    const planted = join(base, 'planted');
    mkdirSync(planted, { mode: 0o700 });
    writeFileSync(join(planted, 'token'), 'chosen-by-someone-else\n', { mode: 0o644 });
    chmodSync(join(planted, 'token'), 0o644);
    const r2 = await run(process.execPath, serverArgs(planted), { timeoutMs: 20_000 });
    assert.equal(r2.code, 1, r2.stderr);
    assert.match(r2.stderr, new RegExp(`API token ${join(planted, 'token')} has mode 0644: it must be readable and writable by its owner only`));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

const manifests = `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: web, namespace: default }
spec:
  secretName: web-tls
  dnsNames: [web.example.test]
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: selfsigned, kind: ClusterIssuer, group: cert-manager.io }
`;


for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`a ${signal} to certsmith server ends a running deploy hook and what it started`, { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'certsmith-e2e-hook-'));
    const pidFile = join(root, 'child.pid');
    writeFileSync(join(root, 'manifests.yaml'), manifests);
    const hook = `sleep 300 & echo $! > ${pidFile}; wait`;
    const server = await startServer({ args: ['--secrets-dir', join(root, 'live'), '--deploy-hook', hook, '--apply', join(root, 'manifests.yaml')] });
    try {
      const child = await waitFor('the hook\'s child', () => {
        const n = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
        return n > 0 ? n : undefined;
      });
      const started = Date.now();
      if (signal === 'SIGKILL') server.kill();
      else await server.stop();
      await waitFor('the hook\'s child to be gone', () => processGone(child), 15_000);
      // before, SIGTERM waited for the hook (its 5 minute timeout) and SIGKILL left it running
      assert.ok(Date.now() - started < 15_000);
    } finally {
      server.kill();
      await server.stop();
      server.cleanup();
      rmSync(root, { recursive: true, force: true });
    }
  });
}
