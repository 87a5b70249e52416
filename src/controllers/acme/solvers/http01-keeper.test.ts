// The HTTP-01 keeper outlives the certsmith that started it, is adopted by the next one, and
// goes away when released with nothing to serve or when nobody adopts it within the grace period.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keeperSocketPath, privateKeeperDir, startHTTP01Keeper } from './http01-keeper.ts';
import { getToken, rawRequest } from './testing/http01-probe.ts';
import { freePort } from '../../../../test/rig/ports.ts';

async function until(what: string, fn: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(what);
}

test('a token survives the controller that presented it; the next one adopts the keeper; release with no token stops it', async () => {
  const port = await freePort();
  const first = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000 });
  await first.present('tok1', 'tok1.thumb');
  assert.deepEqual(await getToken(port, 'tok1'), { status: 200, body: 'tok1.thumb' });
  assert.equal((await getToken(port, 'other')).status, 404);
  // certsmith "killed": its control connection just drops, the keeper keeps serving
  const sock = keeperSocketPath('127.0.0.1', port);
  await first.close(); // tok1 is still presented: release does not stop the keeper
  assert.deepEqual(await getToken(port, 'tok1'), { status: 200, body: 'tok1.thumb' });
  // the restarted certsmith adopts it (no second bind) and cleans up
  const second = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000 });
  await second.present('tok2', 'tok2.thumb');
  assert.equal((await getToken(port, 'tok2')).body, 'tok2.thumb');
  await second.cleanUp('tok1');
  await second.cleanUp('tok2');
  await second.close();
  await until('keeper gone after release with no token', async () => !fs.existsSync(sock) && (await getToken(port, 'x').then(() => false, () => true)));
});

test('a keeper nobody adopts exits after its grace period', async () => {
  const port = await freePort();
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 300 });
  await k.present('t', 't.k');
  await k.close();
  assert.equal((await getToken(port, 't')).status, 200);
  await until('keeper gone after the grace period', async () => getToken(port, 't').then(() => false, () => true));
});

test('the control socket lives in a directory only this user can enter, so no other local account can stand in for the keeper', async () => {
  const port = await freePort();
  const sock = keeperSocketPath('127.0.0.1', port);
  const dir = path.dirname(sock);
  assert.notEqual(dir, os.tmpdir(), 'not in the shared temp dir itself');
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 300 });
  try {
    const st = fs.lstatSync(dir);
    assert.ok(st.isDirectory() && !st.isSymbolicLink());
    assert.equal(st.uid, process.getuid!());
    assert.equal(st.mode & 0o777, 0o700);
    assert.equal(fs.lstatSync(sock).mode & 0o077, 0, 'the socket itself: owner only');
  } finally {
    await k.close();
  }
});

test('a keeper directory someone else prepared (open to others, or a symlink) is refused, naming it; nothing is sent through it', async () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'certsmith-keeper-dir-'));
  try {
    const open = path.join(parent, 'open');
    fs.mkdirSync(open, { mode: 0o777 });
    fs.chmodSync(open, 0o777);
    assert.throws(() => privateKeeperDir(open), (e: Error) => e.message.includes(open) && /not private/.test(e.message));
    const elsewhere = path.join(parent, 'elsewhere');
    fs.mkdirSync(elsewhere, { mode: 0o700 });
    const link = path.join(parent, 'link');
    fs.symlinkSync(elsewhere, link);
    assert.throws(() => privateKeeperDir(link), (e: Error) => e.message.includes(link) && /symlink/.test(e.message));
    if (process.getuid?.() === 0) {
      const theirs = path.join(parent, 'theirs');
      fs.mkdirSync(theirs, { mode: 0o700 });
      fs.chownSync(theirs, 65534, 65534);
      assert.throws(() => privateKeeperDir(theirs), (e: Error) => e.message.includes(theirs) && /owned by uid 65534/.test(e.message));
    }
    // missing: made, 0700
    const fresh = path.join(parent, 'fresh');
    assert.equal(privateKeeperDir(fresh), fresh);
    assert.equal(fs.lstatSync(fresh).mode & 0o777, 0o700);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});

test('the control socket lives under $TMPDIR, which the systemd unit points at its kept runtime directory', () => {
  const unit = fs.readFileSync(path.join(import.meta.dirname, '..', '..', '..', '..', 'deploy', 'systemd', 'certsmith.service'), 'utf8');
  // the unit keeps the keeper (KillMode=process) and gives every start the same TMPDIR, kept across restarts
  assert.match(unit, /^KillMode=process$/m);
  assert.match(unit, /^RuntimeDirectory=certsmith$/m);
  assert.match(unit, /^RuntimeDirectoryPreserve=yes$/m);
  assert.match(unit, /^Environment=TMPDIR=%t\/certsmith$/m);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = '/run/certsmith';
  try {
    assert.equal(path.dirname(keeperSocketPath('0.0.0.0', 80)), `/run/certsmith/certsmith-${process.getuid?.() ?? ''}`);
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
});

// The keeper runs the listener's own code (http01-listener.ts, from its source text): the same
// host check, headers and connection bounds as in process.
test('the keeper answers for the Challenge\'s host only, uncached, as the in-process listener does', async () => {
  const port = await freePort();
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000 });
  try {
    await k.present('kTok', 'kTok.thumb', 'keeper.example.test');
    const get = (host: string) => rawRequest(port, `GET /.well-known/acme-challenge/kTok HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const ok = await get('keeper.example.test');
    assert.deepEqual([ok.status, ok.body], [200, 'kTok.thumb']);
    assert.match(ok.head, /cache-control: no-cache, no-store, must-revalidate/i);
    assert.equal((await get('attacker.example')).status, 404);
    await k.cleanUp('kTok');
  } finally {
    await k.close();
  }
});
