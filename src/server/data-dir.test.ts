// The data dir and its token are refused at start unless they are the service user's alone
// (issue 12, finding 1: any existing token file was accepted, whatever its owner or mode).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDataDir, DataDirError, ensureAccessToken } from './data-dir.ts';
import { ensureServingCertificate } from './tls.ts';
import { writeKubeconfig } from './kubeconfig.ts';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

function withDir(fn: (dir: string) => void) {
  return () => {
    const base = mkdtempSync(join(tmpdir(), 'certsmith-datadir-'));
    try {
      const dir = join(base, 'data');
      mkdirSync(dir, { mode: 0o700 });
      fn(dir);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  };
}

test('a private data dir with a private token is accepted, and the token reused', withDir((dir) => {
  checkDataDir(dir);
  const t = ensureAccessToken(dir);
  checkDataDir(dir);
  assert.equal(ensureAccessToken(dir), t);
  // readable by the group is no risk to the token (its own mode is 0600); writable would be
  chmodSync(dir, 0o750);
  checkDataDir(dir);
}));

test('a data dir writable by group or others is refused, naming the path and the rule', withDir((dir) => {
  for (const mode of [0o770, 0o707, 0o777]) {
    chmodSync(dir, mode);
    assert.throws(() => checkDataDir(dir), (e: Error) => e.message.includes(dir) && /must not be writable by group or others/.test(e.message), mode.toString(8));
  }
}));

test('a token readable or writable by anyone but its owner is refused, not used', withDir((dir) => {
  const token = join(dir, 'token');
  writeFileSync(token, 'planted\n', { mode: 0o644 });
  chmodSync(token, 0o644);
  assert.throws(() => checkDataDir(dir), /API token .*token has mode 0644: it must be readable and writable by its owner only/);
  assert.throws(() => ensureAccessToken(dir), /has mode 0644/);
  chmodSync(token, 0o600);
  assert.equal(ensureAccessToken(dir), 'planted');
}));

test('a token that is a symlink is refused', withDir((dir) => {
  writeFileSync(join(dir, 'elsewhere'), 'planted\n', { mode: 0o600 });
  symlinkSync(join(dir, 'elsewhere'), join(dir, 'token'));
  assert.throws(() => ensureAccessToken(dir), /is a symlink/);
  assert.throws(() => checkDataDir(dir), /is a symlink/);
}));

test('a data dir or token owned by another account is refused', { skip: isRoot ? false : 'needs root to chown to another account' }, withDir((dir) => {
  const token = join(dir, 'token');
  writeFileSync(token, 'planted\n', { mode: 0o600 });
  chownSync(token, NOBODY, NOBODY);
  assert.throws(() => checkDataDir(dir), /API token .* is owned by uid 65534, but certsmith runs as uid 0: the token must belong to the service user/);
  assert.throws(() => ensureAccessToken(dir), /owned by uid 65534/);
  assert.equal(readFileSync(token, 'utf8'), 'planted\n');
  rmSync(token);
  chownSync(dir, NOBODY, NOBODY);
  assert.throws(() => checkDataDir(dir), (e: Error) => e.message.includes(dir) && /owned by uid 65534, but certsmith runs as uid 0: the data dir must belong to the service user/.test(e.message));
}));

test('a state.db, or its -wal or -shm, that is a symlink or owned by another account is refused, naming it; the file is left as it is', { skip: isRoot ? false : 'needs root to chown to another account' }, withDir((dir) => {
  for (const name of ['state.db', 'state.db-wal', 'state.db-shm']) {
    const path = join(dir, name);
    writeFileSync(path, 'rows\n', { mode: 0o600 });
    chownSync(path, NOBODY, NOBODY);
    assert.throws(() => checkDataDir(dir), (e: Error) => e instanceof DataDirError && e.message === `${path} is owned by uid 65534, but certsmith runs as uid 0: the store's files must belong to the service user (chown it to the service user)`, name);
    assert.equal(readFileSync(path, 'utf8'), 'rows\n');
    rmSync(path);
    writeFileSync(join(dir, 'elsewhere'), '', { mode: 0o600 });
    symlinkSync(join(dir, 'elsewhere'), path);
    assert.throws(() => checkDataDir(dir), (e: Error) => e instanceof DataDirError && e.message === `${path} is a symlink: certsmith follows no link below its data dir (put the file itself there)`, name);
    rmSync(path);
    rmSync(join(dir, 'elsewhere'));
  }
  checkDataDir(dir);
}));

// Nothing below the data dir is written through a symlink (the kubeconfig carries the token,
// the pki folder the serving CA's key): a link planted there is replaced, its target untouched.
test('the kubeconfig and the serving key and certificates are written as new files: a symlink at their path is replaced, never followed', async () => {
  const base = mkdtempSync(join(tmpdir(), 'certsmith-datadir-links-'));
  try {
    const dir = join(base, 'data');
    mkdirSync(join(dir, 'pki'), { recursive: true, mode: 0o700 });
    const victim = join(base, 'victim.txt');
    writeFileSync(victim, 'precious\n', { mode: 0o644 });
    const planted = ['kubeconfig', 'pki/ca.key', 'pki/ca.crt', 'pki/serving.key', 'pki/serving.crt', 'token'];
    for (const p of planted.filter((p) => p !== 'token')) symlinkSync(victim, join(dir, p));
    const tls = await ensureServingCertificate(dir, { hosts: ['127.0.0.1'] });
    writeKubeconfig(join(dir, 'kubeconfig'), { server: 'https://127.0.0.1:6443', caPem: tls.caPem, token: 't' });
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
    assert.equal(statSync(victim).mode & 0o777, 0o644);
    for (const p of ['kubeconfig', 'pki/ca.key', 'pki/serving.key']) {
      const st = lstatSync(join(dir, p));
      assert.ok(st.isFile(), `${p} is a file of its own`);
      assert.equal(st.mode & 0o777, 0o600, p);
    }
    assert.deepEqual(readdirSync(dir).filter((e) => e.includes('.tmp-')), [], 'no temporary file left');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a pki folder that is a symlink is refused, naming it', async () => {
  const base = mkdtempSync(join(tmpdir(), 'certsmith-datadir-links-'));
  try {
    const dir = join(base, 'data');
    mkdirSync(dir, { mode: 0o700 });
    mkdirSync(join(base, 'elsewhere'));
    symlinkSync(join(base, 'elsewhere'), join(dir, 'pki'));
    await assert.rejects(ensureServingCertificate(dir), (e: Error) => e instanceof DataDirError && e.message.includes(`${join(dir, 'pki')} is a symlink`));
    assert.deepEqual(readdirSync(join(base, 'elsewhere')), []);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
