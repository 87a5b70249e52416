// Node's compile cache trusts what it finds: the folder certsmith gives it must be one no other
// account can write (a local user planted a cache entry in /tmp/node-compile-cache, Node's own
// default, and the next `certsmith` root ran executed the user's code as root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateCompileCacheDir } from '../../bin/compile-cache.mjs';

const uid = process.getuid!();

function home(): string {
  return mkdtempSync(join(tmpdir(), 'certsmith-cache-home-'));
}

test('the cache goes to ~/.cache/certsmith (or $XDG_CACHE_HOME/certsmith), made 0700, never the temp folder', () => {
  const h = home();
  try {
    const dir = privateCompileCacheDir({ env: {}, uid, home: h });
    assert.equal(dir, join(h, '.cache', 'certsmith'));
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(privateCompileCacheDir({ env: { XDG_CACHE_HOME: join(h, 'xdg') }, uid, home: h }), join(h, 'xdg', 'certsmith'));
    // a relative XDG_CACHE_HOME is ignored, as the XDG spec says
    assert.equal(privateCompileCacheDir({ env: { XDG_CACHE_HOME: 'rel' }, uid, home: h }), join(h, '.cache', 'certsmith'));
  } finally {
    rmSync(h, { recursive: true, force: true });
  }
});

test('no cache in a folder someone else could have planted or may write: other owner, group or world writable, a symlink', () => {
  const h = home();
  try {
    const base = join(h, '.cache');
    mkdirSync(join(base, 'certsmith'), { recursive: true, mode: 0o700 });
    assert.equal(privateCompileCacheDir({ env: {}, uid: uid + 1, home: h }), undefined, 'owned by another account');
    chmodSync(join(base, 'certsmith'), 0o777);
    assert.equal(privateCompileCacheDir({ env: {}, uid, home: h }), undefined, 'world-writable');
    chmodSync(join(base, 'certsmith'), 0o770);
    assert.equal(privateCompileCacheDir({ env: {}, uid, home: h }), undefined, 'group-writable');
    rmSync(join(base, 'certsmith'), { recursive: true });
    const elsewhere = mkdtempSync(join(tmpdir(), 'certsmith-cache-elsewhere-'));
    symlinkSync(elsewhere, join(base, 'certsmith'));
    assert.equal(privateCompileCacheDir({ env: {}, uid, home: h }), undefined, 'a symlink');
    rmSync(elsewhere, { recursive: true, force: true });
    rmSync(join(base, 'certsmith'));
    chmodSync(base, 0o777);
    assert.equal(privateCompileCacheDir({ env: {}, uid, home: h }), undefined, 'the folder above it world-writable');
  } finally {
    rmSync(h, { recursive: true, force: true });
  }
});

test('NODE_COMPILE_CACHE set (the systemd unit\'s): Node uses it itself; without a home, no cache', () => {
  assert.equal(privateCompileCacheDir({ env: { NODE_COMPILE_CACHE: '/var/cache/certsmith' }, uid, home: '/root' }), undefined);
  assert.equal(privateCompileCacheDir({ env: {}, uid, home: '' }), undefined);
});
