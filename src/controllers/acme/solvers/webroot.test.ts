import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanUpWebroot, presentWebroot } from './webroot.ts';

const TOKEN = 'evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA';

describe('webroot token files', () => {
  let tmp: string;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'certsmith-webroot-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('writes the key authorization 0644 under .well-known/acme-challenge and removes it', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'r-'));
    const old = process.umask(0o077);
    try {
      await presentWebroot(root, TOKEN, `${TOKEN}.thumb`);
    } finally {
      process.umask(old);
    }
    const file = path.join(root, '.well-known', 'acme-challenge', TOKEN);
    assert.equal(fs.readFileSync(file, 'utf8'), `${TOKEN}.thumb`);
    assert.equal(fs.statSync(file).mode & 0o777, 0o644);
    assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o755);
    await cleanUpWebroot(root, TOKEN);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), []);
    // cleaning up twice, or in a webroot that never had the folders, is fine
    await cleanUpWebroot(root, TOKEN);
    await cleanUpWebroot(fs.mkdtempSync(path.join(tmp, 'empty-')), TOKEN);
  });

  test('an existing .well-known keeps its owner and mode', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'r-'));
    fs.mkdirSync(path.join(root, '.well-known'), { mode: 0o711 });
    fs.chmodSync(path.join(root, '.well-known'), 0o711);
    await presentWebroot(root, TOKEN, 'k');
    assert.equal(fs.statSync(path.join(root, '.well-known')).mode & 0o777, 0o711);
  });

  test('a symlinked folder below the webroot is refused, never followed', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'r-'));
    const elsewhere = fs.mkdtempSync(path.join(tmp, 'elsewhere-'));
    fs.mkdirSync(path.join(root, '.well-known'));
    fs.symlinkSync(elsewhere, path.join(root, '.well-known', 'acme-challenge'));
    // the message names the real path and the webroot's own flag
    await assert.rejects(presentWebroot(root, TOKEN, 'k'), (e: Error) =>
      e.message.startsWith(`refusing ${path.join(root, '.well-known', 'acme-challenge')}: it is a symlink`) && e.message.includes('below --acme-http01-webroot') && !e.message.includes('--secrets-dir'));
    assert.deepEqual(fs.readdirSync(elsewhere), []);
    fs.symlinkSync(elsewhere, path.join(root, 'link'));
    fs.rmSync(path.join(root, '.well-known'), { recursive: true });
    fs.symlinkSync(elsewhere, path.join(root, '.well-known'));
    await assert.rejects(presentWebroot(root, TOKEN, 'k'), /symlink/);
    await assert.rejects(cleanUpWebroot(root, TOKEN), /symlink/);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  test('a webroot that cannot be written is named by its path in the error, not by a descriptor path', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'ro-'));
    fs.chmodSync(root, 0o555);
    // root ignores mode bits: a read-only bind mount makes the folder unwritable even for root
    const { execFileSync } = await import('node:child_process');
    execFileSync('mount', ['--bind', '-o', 'ro', root, root]);
    try {
      execFileSync('mount', ['-o', 'remount,bind,ro', root, root]);
      await assert.rejects(presentWebroot(root, TOKEN, 'k'), (e: Error) => e.message.includes(path.join(root, '.well-known')) && !e.message.includes('/proc/self/fd'));
    } finally {
      execFileSync('umount', [root]);
    }
  });

  test('a symlink in the token file\'s place is replaced, not written through', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'r-'));
    const target = path.join(tmp, 'precious');
    fs.writeFileSync(target, 'keep me');
    fs.mkdirSync(path.join(root, '.well-known', 'acme-challenge'), { recursive: true });
    fs.symlinkSync(target, path.join(root, '.well-known', 'acme-challenge', TOKEN));
    await presentWebroot(root, TOKEN, 'key-auth');
    assert.equal(fs.readFileSync(target, 'utf8'), 'keep me');
    assert.equal(fs.lstatSync(path.join(root, '.well-known', 'acme-challenge', TOKEN)).isFile(), true);
    fs.rmSync(path.join(root, '.well-known', 'acme-challenge', TOKEN));
    fs.symlinkSync(target, path.join(root, '.well-known', 'acme-challenge', TOKEN));
    await cleanUpWebroot(root, TOKEN);
    assert.equal(fs.readFileSync(target, 'utf8'), 'keep me');
  });

  test('a token that is not base64url never becomes a path', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'r-'));
    for (const bad of ['../../../../etc/passwd-aaaaaaaaaaaa', 'a/b-cccccccccccccccccc', '', 'short']) {
      await assert.rejects(presentWebroot(root, bad, 'k'), /not a base64url ACME token/);
      await assert.rejects(cleanUpWebroot(root, bad), /not a base64url ACME token/);
    }
  });
});
