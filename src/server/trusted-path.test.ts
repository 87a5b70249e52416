// A folder certsmith writes secrets below (--data-dir, --secrets-dir) is only as safe as the
// folders above it: whoever owns one of them, or may write it without the sticky bit, can swap
// the folder for a symlink to anywhere between two starts, and certsmith would write keys there.
// So each folder above must belong to root or certsmith's account and be writable by them alone
// (sticky folders like /tmp aside), and a symlink in the path must be theirs too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTrustedPath, TrustedPathError } from './trusted-path.ts';

const NOBODY = 65534;

test('a folder whose ancestors only root and certsmith control is accepted, existing or not, below a sticky /tmp too', () => {
  const base = mkdtempSync(join(tmpdir(), 'trusted-'));
  try {
    checkTrustedPath(join(base, 'live'), '--secrets-dir');
    mkdirSync(join(base, 'live'));
    checkTrustedPath(join(base, 'live'), '--secrets-dir');
    checkTrustedPath('/var/lib/certsmith/not-there-yet', '--secrets-dir');
    // a link made by root (the administrator's choice) is followed, and its target checked
    mkdirSync(join(base, 'target'));
    symlinkSync(join(base, 'target'), join(base, 'link'));
    checkTrustedPath(join(base, 'link'), '--secrets-dir');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a folder above owned by another account, or writable by others without the sticky bit, is refused, naming it and the rule', () => {
  const base = mkdtempSync(join(tmpdir(), 'trusted-'));
  try {
    const theirs = join(base, 'theirs');
    mkdirSync(theirs);
    chownSync(theirs, NOBODY, NOBODY);
    assert.throws(() => checkTrustedPath(join(theirs, 'live'), '--secrets-dir'), (e: Error) =>
      e instanceof TrustedPathError && e.message.startsWith(`--secrets-dir ${join(theirs, 'live')}: ${theirs} is owned by uid ${NOBODY}`));
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    assert.throws(() => checkTrustedPath(join(open, 'live'), '--data-dir'), (e: Error) =>
      e instanceof TrustedPathError && e.message.includes(`${open} is writable by others`));
    chmodSync(open, 0o1777);
    checkTrustedPath(join(open, 'live'), '--data-dir');
    // the folder itself, existing, owned by another account
    const planted = join(open, 'planted');
    mkdirSync(planted);
    chownSync(planted, NOBODY, NOBODY);
    assert.throws(() => checkTrustedPath(planted, '--secrets-dir'), /is owned by uid 65534/);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a symlink in the path made by another account is refused, and so is one pointing below a folder others control', () => {
  const base = mkdtempSync(join(tmpdir(), 'trusted-'));
  try {
    chmodSync(base, 0o1777);
    const victim = join(base, 'victim');
    mkdirSync(victim);
    const link = join(base, 'live');
    symlinkSync(victim, link);
    lchownSync(link, NOBODY, NOBODY);
    assert.throws(() => checkTrustedPath(link, '--secrets-dir'), (e: Error) =>
      e instanceof TrustedPathError && e.message.includes(`${link} is a symlink owned by uid ${NOBODY}`));
    const theirs = join(base, 'theirs');
    mkdirSync(join(theirs, 'inner'), { recursive: true });
    chownSync(theirs, NOBODY, NOBODY);
    symlinkSync(join(theirs, 'inner'), join(base, 'to-theirs'));
    assert.throws(() => checkTrustedPath(join(base, 'to-theirs'), '--secrets-dir'), new RegExp(`${theirs} is owned by uid ${NOBODY}`));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a file where a folder of the path should be is refused, naming it, as is a path that is a file', () => {
  const base = mkdtempSync(join(tmpdir(), 'trusted-'));
  try {
    const file = join(base, 'state.db');
    writeFileSync(file, '');
    assert.throws(() => checkTrustedPath(join(file, 'live'), '--data-dir'), (e: Error) =>
      e instanceof TrustedPathError && e.message === `--data-dir ${join(file, 'live')}: ${file} is not a folder`);
    assert.throws(() => checkTrustedPath(file, '--secrets-dir'), (e: Error) =>
      e instanceof TrustedPathError && e.message === `--secrets-dir ${file}: ${file} is not a folder`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
