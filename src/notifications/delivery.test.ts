// Delivery to the two targets: a JSON webhook (Slack/Teams `text`) and an executable (no shell).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configuredTargets, deliver, type Notification } from './delivery.ts';
import { processGone, pollUntil } from '../../test/rig/processes.ts';

const n: Notification = { kind: 'IssuanceFailing', state: 'firing', namespace: 'default', name: 'web', message: 'issuance failed 3 times in a row; "quoted" $(not run)', at: '2026-06-01T00:00:00Z' };

test('webhook: one JSON POST with text and details; a non-2xx answer is an error naming the host only', async () => {
  const bodies: unknown[] = [];
  let status = 200;
  const server = http.createServer((req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      bodies.push({ type: req.headers['content-type'], body: JSON.parse(b) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    await deliver({ webhookUrl: `http://127.0.0.1:${port}/services/T000/B000/secret-token` }, n, 'webhook');
    assert.deepEqual(bodies, [{
      type: 'application/json',
      body: { text: `[certsmith] IssuanceFailing: Certificate default/web: ${n.message}`, certsmith: { kind: 'IssuanceFailing', state: 'firing', certificate: { namespace: 'default', name: 'web' }, message: n.message, at: n.at } },
    }]);
    status = 500;
    await assert.rejects(deliver({ webhookUrl: `http://127.0.0.1:${port}/services/T000/B000/secret-token` }, n, 'webhook'), (e: Error) => {
      assert.match(e.message, new RegExp(`notification webhook http://127.0.0.1:${port}: HTTP 500`));
      assert.doesNotMatch(e.message, /secret-token/, 'the URL path (often a credential) stays out of errors');
      return true;
    });
  } finally {
    server.close();
  }
});

test('exec: the program runs without a shell, with the details in its environment', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-notify-'));
  try {
    const out = join(dir, 'env.txt');
    const hook = join(dir, 'hook.sh');
    writeFileSync(hook, `#!/bin/sh\nprintf '%s|%s|%s/%s|%s' "$CERTSMITH_NOTIFICATION" "$CERTSMITH_NOTIFICATION_STATE" "$CERTSMITH_NAMESPACE" "$CERTSMITH_CERTIFICATE" "$CERTSMITH_MESSAGE" > ${out}\n`, { mode: 0o755 });
    await deliver({ exec: hook }, n, 'exec');
    assert.equal(readFileSync(out, 'utf8'), `IssuanceFailing|firing|default/web|${n.message}`, 'the message arrives verbatim, nothing in it is run');
    writeFileSync(hook, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    await assert.rejects(deliver({ exec: hook }, n, 'exec'), /notification hook .*hook\.sh: Command failed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('exec: a hook that hangs is killed at the timeout with what it started', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-notify-'));
  try {
    const pidFile = join(dir, 'child.pid');
    const hook = join(dir, 'hang.sh');
    writeFileSync(hook, `#!/bin/sh\nsleep 300 &\necho $! > ${pidFile}\nwait\n`, { mode: 0o755 });
    const started = Date.now();
    await assert.rejects(deliver({ exec: hook, timeoutMs: 500 }, n, 'exec'), /notification hook .*hang\.sh: killed after 0\.5s/);
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
    const child = Number(readFileSync(pidFile, 'utf8').trim());
    await pollUntil('the hook\'s child to be gone', () => processGone(child), 5_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a private key quoted in the message (a deploy hook\'s output, its BEGIN line cut off) reaches neither target', async () => {
  const cut = '…3zZN6o2LLjo0CgYBmmZkd9TmIiZy1JAjhuWDLQNTL1T8Vzo49onGx\nji+YhDr9ZaQBCO/JvFDHGWkzJa14IdIdF+fKxGSHrKx8Ub2hs0C8\n-----END RSA PRIVATE KEY-----\nreload failed';
  const leaky: Notification = { ...n, kind: 'DeployHookFailed', message: `Deploy hook for revision 1 exited with status 1: ${cut}` };
  const want = 'Deploy hook for revision 1 exited with status 1: …[private key redacted]\nreload failed';
  let body = '';
  const server = http.createServer((req, res) => {
    req.on('data', (d) => (body += d));
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-notify-'));
  try {
    const out = join(dir, 'message.txt');
    const hook = join(dir, 'hook.sh');
    writeFileSync(hook, `#!/bin/sh\nprintf '%s' "$CERTSMITH_MESSAGE" > ${out}\n`, { mode: 0o755 });
    const targets = { webhookUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, exec: hook };
    for (const t of configuredTargets(targets)) await deliver(targets, leaky, t);
    const sent = JSON.parse(body) as { text: string; certsmith: { message: string } };
    assert.equal(sent.certsmith.message, want);
    assert.equal(sent.text, `[certsmith] DeployHookFailed: Certificate default/web: ${want}`);
    assert.equal(readFileSync(out, 'utf8'), want);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
