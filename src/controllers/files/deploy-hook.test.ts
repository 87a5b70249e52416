import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hookEnvironment, hookNames, hookRetryDelayMs, runDeployHook } from './deploy-hook.ts';
import { redactKeyMaterial } from '../../pki/redact-keys.ts';
import { showsKeyMaterial } from '../../pki/key-derived.ts';
import { HookLedger } from './hook-ledger.ts';
import { pidIn, processGone, pollUntil } from '../../../test/rig/processes.ts';

test('the hook gets names, paths and certbot\'s variables', async () => {
  const env = hookEnvironment({
    certificateName: 'web', namespace: 'default', secretName: 'web-tls', revision: 3,
    liveDir: '/etc/certsmith/live/default/web-tls', hasCA: true, names: ['a.example', 'b.example'],
  });
  const out = await runDeployHook('echo "$CERTSMITH_CERTIFICATE_NAME $CERTSMITH_REVISION $CERTSMITH_KEY_PATH $CERTSMITH_CA_PATH|$RENEWED_DOMAINS|$RENEWED_LINEAGE"', { env });
  assert.equal(out.ok, true);
  assert.equal(out.exitCode, 0);
  assert.equal(out.output, 'web 3 /etc/certsmith/live/default/web-tls/tls.key /etc/certsmith/live/default/web-tls/ca.crt|a.example b.example|/etc/certsmith/live/default/web-tls');
  assert.equal(env.CERTSMITH_FULLCHAIN_PATH, '/etc/certsmith/live/default/web-tls/fullchain.pem');
  assert.equal(env.CERTSMITH_COMBINED_PATH, '/etc/certsmith/live/default/web-tls/tls-combined.pem');
  assert.equal(hookEnvironment({ certificateName: 'x', namespace: 'n', secretName: 's', liveDir: '/d', hasCA: false, names: [] }).CERTSMITH_CA_PATH, '');
});

// certbot's RENEWED_DOMAINS holds the lineage's names as certbot reads them from the certificate
// (the subject's CN first, then the SANs, IP addresses included, each once): a certificate with
// only a commonName or IP addresses gave hooks an empty list. lego's hooks read LEGO_HOOK_*
// (lego 5; its CERT_PATH is the bundle, ISSUER_CERT_PATH the chain, PEM_PATH key and chain in
// one file) or, from lego 4, LEGO_CERT_*.
test('hooks get every name of the certificate, and lego\'s variables', () => {
  assert.deepEqual(hookNames({ commonName: 'web.example', dnsNames: ['a.example', 'web.example'], ipAddresses: ['192.0.2.1'] }), ['web.example', 'a.example', '192.0.2.1']);
  assert.deepEqual(hookNames({ commonName: 'only-cn.example' }), ['only-cn.example']);
  assert.deepEqual(hookNames({ ipAddresses: ['192.0.2.7', '2001:db8::1'] }), ['192.0.2.7', '2001:db8::1']);
  const env = hookEnvironment({ certificateName: 'web', namespace: 'default', secretName: 'web-tls', revision: 1, liveDir: '/l/default/web-tls', hasCA: false, names: ['web.example', 'a.example'] });
  assert.equal(env.RENEWED_DOMAINS, 'web.example a.example');
  assert.deepEqual(Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('LEGO_'))), {
    LEGO_HOOK_CERT_NAME: 'web.example', LEGO_HOOK_CERT_NAME_SANITIZED: 'web.example', LEGO_HOOK_CERT_DOMAINS: 'web.example,a.example',
    LEGO_HOOK_CERT_PATH: '/l/default/web-tls/fullchain.pem', LEGO_HOOK_CERT_KEY_PATH: '/l/default/web-tls/privkey.pem',
    LEGO_HOOK_ISSUER_CERT_PATH: '/l/default/web-tls/chain.pem', LEGO_HOOK_CERT_PEM_PATH: '/l/default/web-tls/tls-combined.pem',
    LEGO_CERT_DOMAIN: 'web.example', LEGO_CERT_PATH: '/l/default/web-tls/fullchain.pem', LEGO_CERT_KEY_PATH: '/l/default/web-tls/privkey.pem',
    LEGO_ISSUER_CERT_PATH: '/l/default/web-tls/chain.pem', LEGO_CERT_PEM_PATH: '/l/default/web-tls/tls-combined.pem',
  });
  // lego names a wildcard's files with '_' for '*'
  assert.equal(hookEnvironment({ certificateName: 'w', namespace: 'n', secretName: 's', liveDir: '/d', hasCA: false, names: ['*.example'] }).LEGO_HOOK_CERT_NAME_SANITIZED, '_.example');
});

test('a failing hook reports its status and the tail of its output, keys redacted', async () => {
  const out = await runDeployHook('for i in $(seq 1 200); do echo "line $i"; done; printf -- "-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----\\n" >&2; echo "nginx: [emerg] bad config"; exit 1', { env: {}, outputLimit: 200 });
  assert.equal(out.ok, false);
  assert.equal(out.exitCode, 1);
  // stdout and stderr are separate pipes: their relative order is not kept
  assert.match(out.output, /nginx: \[emerg\] bad config/);
  assert.match(out.output, /\[private key redacted\]/);
  assert.doesNotMatch(out.output, /MIIB|line 1\n/);
  assert.ok(out.output.length <= 201, `truncated: ${out.output.length}`);
  assert.equal(redactKeyMaterial('a -----BEGIN RSA PRIVATE KEY-----\nMIIE cut off'), 'a [private key redacted]', 'a key cut off at the end is still redacted');
});

test('a hook that prints a whole RSA key and fails: the output read cuts the key\'s BEGIN line, and no line of the key is reported', async () => {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-hook-key-'));
  try {
    writeFileSync(join(dir, 'key.pem'), pem, { mode: 0o600 });
    // as the files controller runs it: 512 bytes reported, twice that read, less than the key, so its BEGIN line is cut off
    const out = await runDeployHook(`cat ${join(dir, 'key.pem')}; exit 1`, { env: {}, outputLimit: 512 });
    assert.equal(out.ok, false);
    assert.match(out.output, /\[private key redacted\]/);
    assert.doesNotMatch(out.output, /PRIVATE KEY/);
    for (const line of pem.split('\n').slice(1, -2)) assert.ok(!out.output.includes(line.slice(8)), 'no line of the key');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a hook that prints its key through another program (prefixed, diffed) and fails: no piece of the key is reported', async () => {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const body = pem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-hook-key-'));
  try {
    writeFileSync(join(dir, 'tls.key'), pem, { mode: 0o600 });
    for (const command of ['sed "s/^/key> /" "$CERTSMITH_KEY_PATH"; exit 1', 'diff /dev/null "$CERTSMITH_KEY_PATH"; exit 1']) {
      const out = await runDeployHook(command, { env: { CERTSMITH_KEY_PATH: join(dir, 'tls.key'), PATH: process.env.PATH ?? '' }, outputLimit: 512 });
      assert.equal(out.ok, false);
      for (let i = 0; i + 12 <= body.length; i += 4) assert.ok(!out.output.includes(body.slice(i, i + 12)), `${command}: ${out.output}`);
      assert.match(out.output, /\[(private key )?redacted\]/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a hook that hangs is killed with its children after the timeout', async () => {
  const started = Date.now();
  const out = await runDeployHook('sleep 30 & sleep 30', { env: {}, timeoutMs: 300 });
  assert.equal(out.ok, false);
  assert.equal(out.timedOut, true);
  assert.ok(Date.now() - started < 10_000);
});

test('retry delays double from 1m and stop at 1h', () => {
  assert.deepEqual([1, 2, 3, 4, 6, 7, 8, 50].map((n) => hookRetryDelayMs(n) / 60_000), [1, 2, 4, 8, 32, 60, 60, 60]);
});

test('the ledger survives a restart and is written 0600', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-ledger-'));
  try {
    const a = HookLedger.in(dir);
    await Promise.all([a.set('default/a', { hash: 'h1', revision: 1, at: 'now' }), a.set('default/b', { hash: 'h2', at: 'now' })]);
    await a.delete('default/b');
    const b = HookLedger.in(dir);
    assert.deepEqual(b.keys(), ['default/a']);
    assert.equal(b.get('default/a')?.hash, 'h1');
    assert.equal(statSync(join(dir, '.hooks.json')).mode & 0o777, 0o600);
    assert.ok(JSON.parse(readFileSync(join(dir, '.hooks.json'), 'utf8'))['default/a']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the temporary file a kill -9 left mid-write is removed when the ledger is read at start; nothing else is', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-ledger-'));
  try {
    writeFileSync(join(dir, '.hooks.json.87aed85d.tmp'), '{"half": ');
    writeFileSync(join(dir, 'keep.tmp'), 'not ours');
    mkdirSync(join(dir, '.hooks.json.abcd.tmp'));
    HookLedger.in(dir);
    assert.deepEqual(readdirSync(dir).sort(), ['.hooks.json.abcd.tmp', 'keep.tmp']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});




test('stopping kills the hook\'s whole process group, also what ignores SIGTERM', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-hook-'));
  try {
    const pidFile = join(dir, 'child.pid');
    const stop = new AbortController();
    const running = runDeployHook(`sh -c 'trap "" TERM; sleep 300' & echo $! > ${pidFile}; wait`, { env: {}, signal: stop.signal, killGraceMs: 500 });
    await pollUntil('the hook\'s child', () => pidIn(pidFile) !== undefined, 10_000);
    const child = pidIn(pidFile)!;
    const started = Date.now();
    stop.abort();
    const out = await running;
    assert.equal(out.interrupted, true);
    assert.equal(out.ok, false);
    assert.ok(Date.now() - started < 5_000, 'stop does not wait for the hook');
    await pollUntil('the hook\'s child to be gone', () => processGone(child), 3_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a hook outlives no SIGKILL of certsmith: its watchdog kills the group', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-hook-'));
  try {
    const pidFile = join(dir, 'child.pid');
    // a certsmith stand-in that runs one hook and is then SIGKILLed
    const script = `import('${join(import.meta.dirname, 'deploy-hook.ts')}').then((m) => m.runDeployHook(${JSON.stringify(`sleep 300 & echo $! > ${pidFile}; wait`)}, { env: {} }));`;
    const certsmith = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: 'ignore' });
    await pollUntil('the hook\'s child', () => pidIn(pidFile) !== undefined, 20_000);
    const child = pidIn(pidFile)!;
    assert.equal(processGone(child), false);
    certsmith.kill('SIGKILL');
    await pollUntil('the orphaned hook\'s child to be gone', () => processGone(child), 5_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a hook whose environment cannot be passed (a NUL in a dnsName) fails with a reason instead of throwing', async () => {
  const env = hookEnvironment({ certificateName: 'x', namespace: 'n', secretName: 's', liveDir: '/d', hasCA: false, names: ['a.example', 'b\0.example'] });
  const out = await runDeployHook('echo ran', { env });
  assert.equal(out.ok, false);
  assert.match(out.output, /not run: \$RENEWED_DOMAINS contains a NUL character/);
});

test('a hook that ends by itself leaves what it started running, as it always did', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-hook-'));
  try {
    const pidFile = join(dir, 'child.pid');
    const out = await runDeployHook(`sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}`, { env: {} });
    assert.equal(out.ok, true);
    const child = pidIn(pidFile)!;
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(processGone(child), false, 'a daemon the hook started is not killed');
    process.kill(child, 'SIGKILL');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a hook whose output shows the key it was handed in any form (folded, base32, od -c) has those lines redacted; its own words stay', async () => {
  const pem = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-hook-key-'));
  try {
    const keyPath = join(dir, 'tls.key');
    writeFileSync(keyPath, pem, { mode: 0o600 });
    for (const dump of ['fold -w 16 "$K"', 'openssl pkey -in "$K" -outform DER | base32 -w 20', 'od -c "$K"']) {
      const out = await runDeployHook(`${dump}; echo "nginx: [emerg] cannot load key"; exit 1`, { env: { K: keyPath }, outputLimit: 512, keys: [pem] });
      assert.equal(out.ok, false);
      assert.match(out.output, /\[private key redacted\]/, dump);
      assert.ok(!showsKeyMaterial(out.output, [pem]), `${dump}: no piece of the key is left:\n${out.output}`);
      assert.match(out.output, /\nnginx: \[emerg\] cannot load key$/, `${dump}: the hook's own words stay`);
    }
    // output without the key is reported as it was
    const plain = await runDeployHook('echo "nginx: [emerg] cannot load certificate"; exit 1', { env: {}, outputLimit: 512, keys: [pem] });
    assert.equal(plain.output, 'nginx: [emerg] cannot load certificate');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
