// Issue 16 end to end, as a single-host user would run it: `certsmith server --secrets-dir DIR
// --deploy-hook CMD --notify-webhook URL --notify-exec PATH`, with a deploy hook that fails (and,
// as a careless reload script might, prints the private key first). DeployHookFailed reaches the
// loopback receiver and the exec hook once; once the hook is fixed and `certsmith renew` runs it
// again successfully, the resolved notice arrives once. No notification carries key material.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, waitFor } from './harness.ts';
import { startNotificationReceiver } from './notification-receiver.ts';

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
  privateKey: { algorithm: RSA, size: 2048, rotationPolicy: Never }
  issuerRef: { name: selfsigned, kind: ClusterIssuer }
`;

/** Every piece of the key a leak could show: the PEM, each base64 line of it, and the Secret's base64 of the PEM. */
function keyFragments(pem: string): string[] {
  const lines = pem.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));
  return [pem.trim(), Buffer.from(pem).toString('base64'), ...lines];
}

/** Stops the server and the receiver, removes their folders, and checks the server exited cleanly. */
async function stopAll(server: Awaited<ReturnType<typeof startServer>>, receiver: { stop(): Promise<void> }, root: string): Promise<void> {
  const code = await server.stop();
  await receiver.stop();
  rmSync(server.dataDir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
  assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
}

test('a failing deploy hook is announced once and resolved once after a renewal it succeeds for; no key in any notice', { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'certsmith-e2e-notify-hook-'));
  const live = join(root, 'live');
  const ok = join(root, 'hook-ok');
  writeFileSync(ok, 'no\n');
  writeFileSync(join(root, 'manifests.yaml'), manifests);
  // the reload "fails" until the test writes yes into hook-ok; it prints the key before deciding
  const hookScript = join(root, 'reload.sh');
  writeFileSync(hookScript, `#!/bin/sh\ncat "$CERTSMITH_KEY_PATH"\nif [ "$(cat '${ok}')" != yes ]; then echo "reload of $CERTSMITH_CERTIFICATE_NAME failed" >&2; exit 1; fi\necho reloaded\n`, { mode: 0o755 });
  const execLog = join(root, 'notify-exec');
  mkdirSync(execLog);
  const notifyExec = join(root, 'notify.sh');
  writeFileSync(notifyExec, `#!/bin/sh\necho "$CERTSMITH_NOTIFICATION_STATE $CERTSMITH_NOTIFICATION" >> '${execLog}/log'\nprintf '%s' "$CERTSMITH_MESSAGE" >> '${execLog}/messages'\n`, { mode: 0o755 });
  const execSeen = () => (existsSync(join(execLog, 'log')) ? readFileSync(join(execLog, 'log'), 'utf8').trim().split('\n') : []);

  const receiver = await startNotificationReceiver();
  const server = await startServer({
    args: ['--secrets-dir', live, '--deploy-hook', hookScript, '--notify-webhook', receiver.url, '--notify-exec', notifyExec, '--apply', join(root, 'manifests.yaml')],
  });
  try {
    const firing = await waitFor('DeployHookFailed at the receiver', () => receiver.got.find((g) => g.kind === 'DeployHookFailed'), 30_000);
    assert.equal(firing.state, 'firing');
    assert.equal(`${firing.namespace}/${firing.name}`, 'default/web');
    assert.match(firing.text, /^\[certsmith\] DeployHookFailed: Certificate default\/web: Deploy hook for revision 1 exited with status 1/);
    assert.match(firing.message, /reload of web failed/, 'the hook\'s own words reach the person');
    await waitFor('DeployHookFailed from the exec hook', () => execSeen().includes('firing DeployHookFailed'), 15_000);

    // the key of revision 1, which the hook printed, is in no notice
    const key1 = readFileSync(join(live, 'default', 'web-tls', 'tls.key'), 'utf8');
    const assertNoKey = (key: string, when: string) => {
      const bodies = [...receiver.got.map((g) => g.raw), existsSync(join(execLog, 'messages')) ? readFileSync(join(execLog, 'messages'), 'utf8') : ''];
      for (const body of bodies) {
        assert.doesNotMatch(body, /PRIVATE KEY-----/, `${when}: a key block in ${body.slice(0, 200)}`);
        for (const f of keyFragments(key)) assert.ok(!body.includes(f), `${when}: key material "${f.slice(0, 20)}…" in a notification: ${body}`);
      }
    };
    assertNoKey(key1, 'after the failure');

    writeFileSync(ok, 'yes\n');
    const renew = await server.cli(['renew', 'web', '-n', 'default']);
    assert.equal(renew.code, 0, renew.stderr);
    await waitFor('the resolved notice at the receiver', () => receiver.seen('web').includes('resolved DeployHookFailed'), 30_000);
    await waitFor('the resolved notice from the exec hook', () => execSeen().includes('resolved DeployHookFailed'), 15_000);
    const events = await server.cli(['get', 'events', '-n', 'default', '-o', 'json']);
    assert.match(events.stdout, /DeployHookSucceeded/);

    // a moment for anything that would announce again
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`[deploy hook] receiver: ${receiver.seen('web').join(', ')}; exec: ${execSeen().join(', ')}`);
    assert.deepEqual(receiver.seen('web'), ['firing DeployHookFailed', 'resolved DeployHookFailed'], 'each once, and nothing else');
    assert.deepEqual(execSeen(), ['firing DeployHookFailed', 'resolved DeployHookFailed']);
    assert.equal(receiver.got.length, 2);
    assertNoKey(key1, 'at the end');
  } finally {
    await stopAll(server, receiver, root);
  }
});

test('targets are apart: an exec hook that fails does not make the webhook hear a notice twice, and a deleted Certificate resolves what it had firing', { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'certsmith-e2e-notify-apart-'));
  const live = join(root, 'live');
  writeFileSync(join(root, 'manifests.yaml'), manifests);
  const hookScript = join(root, 'reload.sh');
  writeFileSync(hookScript, '#!/bin/sh\necho "reload failed" >&2\nexit 1\n', { mode: 0o755 });
  const execOk = join(root, 'exec-ok');
  writeFileSync(execOk, 'no\n');
  const execLog = join(root, 'exec.log');
  const notifyExec = join(root, 'notify.sh');
  // the exec target is down (exit 1) until the test writes yes
  writeFileSync(notifyExec, `#!/bin/sh\n[ "$(cat '${execOk}')" = yes ] || exit 1\necho "$CERTSMITH_NOTIFICATION_STATE $CERTSMITH_NOTIFICATION" >> '${execLog}'\n`, { mode: 0o755 });
  const execSeen = () => (existsSync(execLog) ? readFileSync(execLog, 'utf8').trim().split('\n') : []);
  const receiver = await startNotificationReceiver();
  const server = await startServer({
    args: ['--secrets-dir', live, '--deploy-hook', hookScript, '--notify-webhook', receiver.url, '--notify-exec', notifyExec, '--apply', join(root, 'manifests.yaml')],
  });
  try {
    await waitFor('DeployHookFailed at the receiver', () => receiver.seen('web').includes('firing DeployHookFailed'), 30_000);
    // the exec target is retried with backoff (5 s, 10 s): the webhook must not hear it again meanwhile
    await new Promise((r) => setTimeout(r, 7_000));
    assert.deepEqual(receiver.seen('web'), ['firing DeployHookFailed'], 'once, though the exec target failed');
    writeFileSync(execOk, 'yes\n');
    await waitFor('the exec target told once it is back', () => execSeen().includes('firing DeployHookFailed'), 30_000);
    const annotated = JSON.parse((await server.cli(['get', 'certificate', 'web', '-n', 'default', '-o', 'json'])).stdout) as { metadata: { annotations: Record<string, string> } };
    assert.equal(annotated.metadata.annotations['notifications.certsmith.io/firing'], 'DeployHookFailed');

    const del = await server.cli(['delete', 'certificate', 'web', '-n', 'default']);
    assert.equal(del.code, 0, del.stderr);
    await waitFor('resolved at the receiver', () => receiver.seen('web').includes('resolved DeployHookFailed'), 15_000);
    await waitFor('resolved from the exec hook', () => execSeen().includes('resolved DeployHookFailed'), 15_000);
    assert.deepEqual(receiver.seen('web'), ['firing DeployHookFailed', 'resolved DeployHookFailed']);
    assert.deepEqual(execSeen(), ['firing DeployHookFailed', 'resolved DeployHookFailed']);
  } finally {
    await stopAll(server, receiver, root);
  }
});
