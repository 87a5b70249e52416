// The --files-owner account against the root-run files controller (issue 12, finding 1): an
// unprivileged account ("nobody", through runuser) swaps a directory below --secrets-dir for a
// symlink to a root-owned directory standing in for the data dir; the next publish, prune or
// removal must neither chown, chmod, write nor remove anything there.
//
// These need root (to run as certsmith does on a host and to become "nobody"); CI runs as
// root. As any other user they are skipped, since the attack cannot be staged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineageFiles, lineageHash } from './lineage-files.ts';
import { keyPair } from '../../../test/rig/key-pairs.ts';
import { listLineages, publishLineage, removeLineage } from './lineage.ts';
import { parseFileOwner } from '../../shared/file-owner.ts';

const isRoot = process.getuid?.() === 0;
const skip = isRoot ? false : 'needs root: certsmith runs as root on a host and the attacker is "nobody" (runuser)';

const b64 = (s: string) => Buffer.from(s).toString('base64');
// a leaf (`leaf<n>`) is a real certificate for key(n): only a fitting pair is published
const cert = (n: string) => (n.startsWith('leaf') ? keyPair(n.slice(4)).certPem : `-----BEGIN CERTIFICATE-----\n${Buffer.from(`cert-${n}`).toString('base64')}\n-----END CERTIFICATE-----\n`);
const key = (n: string) => keyPair(n).keyPem;
function files(n: string) {
  return lineageFiles({ 'tls.crt': b64(cert(`leaf${n}`)), 'tls.key': b64(key(n)) })!;
}

/** runs a shell command as nobody; true when it succeeded */
function asNobody(script: string): boolean {
  return spawnSync('runuser', ['-u', 'nobody', '--', '/bin/sh', '-c', script], { stdio: 'ignore' }).status === 0;
}

interface Stage {
  base: string;
  root: string;
  /** stands in for the data dir: root-owned, 0700, with a token */
  data: string;
  snapshot(): string;
}

function stage(): Stage {
  const base = mkdtempSync(join(tmpdir(), 'certsmith-attack-'));
  // nobody must be able to reach DIR, as a web server can
  chmodSync(base, 0o755);
  const root = join(base, 'live');
  const data = join(base, 'data');
  mkdirSync(join(data, '.web-tls.versions', '1-00000000000000aa'), { recursive: true, mode: 0o700 });
  mkdirSync(join(data, '.web-tls.versions', '.tmp-leftover'), { mode: 0o700 });
  writeFileSync(join(data, 'token'), 'admin-token\n', { mode: 0o600 });
  writeFileSync(join(data, '.web-tls.versions', '1-00000000000000aa', 'state.db'), 'precious');
  chmodSync(data, 0o700);
  const snapshot = () => {
    const lines: string[] = [];
    const walk = (p: string) => {
      const st = statSync(p);
      lines.push(`${p.slice(data.length) || '/'} ${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}${st.isFile() ? ` ${readFileSync(p, 'utf8')}` : ''}`);
      if (st.isDirectory()) for (const e of readdirSync(p).sort()) walk(join(p, e));
    };
    walk(data);
    return lines.join('\n');
  };
  return { base, root, data, snapshot };
}

const nobody = () => parseFileOwner('nobody:nogroup');
const ref = (root: string) => ({ root, namespace: 'default', name: 'web-tls' });

test('files owner cannot swap a namespace directory: folders are not theirs to rename', { skip }, async () => {
  const s = stage();
  try {
    const before = s.snapshot();
    const owner = nobody();
    const f1 = files('1');
    await publishLineage(ref(s.root), f1, lineageHash(f1, owner.text), { owner });
    // the attack as it worked before: rename the namespace folder away, put a symlink to the data dir in its place
    const swapped = asNobody(`mv ${s.root}/default ${s.root}/gone && ln -s ${s.data} ${s.root}/default`);
    const f2 = files('2');
    await publishLineage(ref(s.root), f2, lineageHash(f2, owner.text), { owner }).catch(() => {});
    assert.equal(s.snapshot(), before, 'the data dir is untouched');
    assert.equal(statSync(s.data).uid, 0);
    assert.equal(swapped, false, 'nobody could rename a folder below --secrets-dir');
    // nobody can still read what it serves, and change nothing else
    assert.ok(asNobody(`cat ${s.root}/default/web-tls/tls.key >/dev/null`), 'the files owner reads the key');
    assert.equal(asNobody(`touch ${s.root}/default/web-tls/planted`), false, 'nor write into a version');
  } finally {
    rmSync(s.base, { recursive: true, force: true });
  }
});

test('a layout handed to the files owner earlier: a namespace symlink is refused, never chowned, written or pruned through', { skip }, async () => {
  const s = stage();
  try {
    const owner = nobody();
    const f1 = files('1');
    await publishLineage(ref(s.root), f1, lineageHash(f1, owner.text), { owner });
    // what an earlier certsmith left: every folder owned by the files owner
    execFileSync('chown', ['-R', `${owner.uid}:${owner.gid}`, s.root]);
    execFileSync('chmod', ['-R', 'u+rwX,go-rwx', s.root]);
    const before = s.snapshot();
    assert.ok(asNobody(`mv ${s.root}/default ${s.root}/gone && ln -s ${s.data} ${s.root}/default`), 'the swap, staged as nobody');

    const f2 = files('2');
    const published = await publishLineage(ref(s.root), f2, lineageHash(f2, owner.text), { owner }).catch((e: Error) => e);
    assert.equal(s.snapshot(), before, 'publish neither chowned, chmodded nor wrote into the data dir');
    const removed = await removeLineage(ref(s.root)).catch((e: Error) => e);
    assert.equal(s.snapshot(), before, 'removal did not rm -rf through the symlink');
    assert.match(String(published), /refusing .*default: it is a symlink/);
    assert.match(String(removed), /refusing .*default: it is a symlink/);
    assert.deepEqual((await listLineages(s.root)).filter((l) => l.namespace === 'default'), [], 'lineages behind a symlink are not listed');
    // the earlier layout's root was taken back: nobody cannot swap anything in it any more
    assert.equal(statSync(s.root).uid, 0);
    assert.equal(statSync(s.root).mode & 0o777, 0o750);
  } finally {
    rmSync(s.base, { recursive: true, force: true });
  }
});

test('a versions folder swapped for a symlink: prune and removal unlink the link and leave its target alone', { skip }, async () => {
  const s = stage();
  try {
    const owner = nobody();
    const f1 = files('1');
    await publishLineage(ref(s.root), f1, lineageHash(f1, owner.text), { owner });
    execFileSync('chown', ['-R', `${owner.uid}:${owner.gid}`, join(s.root, 'default')]);
    const before = s.snapshot();
    const vdir = join(s.root, 'default', '.web-tls.versions');
    assert.ok(asNobody(`mv ${vdir} ${s.root}/default/.old && ln -s ${s.data} ${vdir}`), 'the swap, staged as nobody');

    // the namespace folder is taken back, then the versions symlink is refused
    const f2 = files('2');
    const published = await publishLineage(ref(s.root), f2, lineageHash(f2, owner.text), { owner, keep: 1 }).catch((e: Error) => e);
    assert.equal(s.snapshot(), before, 'prune did not remove versions in the symlink\'s target');
    assert.match(String(published), /refusing .*\.web-tls\.versions: it is a symlink/);
    assert.equal(statSync(join(s.root, 'default')).uid, 0, 'the namespace folder is ours again');

    assert.equal(await removeLineage(ref(s.root)), true);
    assert.equal(s.snapshot(), before, 'removal unlinked the symlink only');
    assert.equal(existsSync(vdir), false);
    assert.ok(existsSync(join(s.data, '.web-tls.versions', '1-00000000000000aa', 'state.db')));
  } finally {
    rmSync(s.base, { recursive: true, force: true });
  }
});
