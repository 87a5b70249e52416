import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, lstatSync, mkdirSync, writeFileSync, symlinkSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { filesOwnerTag, lineageFiles, lineageHash } from './lineage-files.ts';
import { keyPair } from '../../../test/rig/key-pairs.ts';
import { currentVersion, listLineages, publishLineage, removeLineage, isSafeLineageName } from './lineage.ts';
import { parseFileOwner } from '../../shared/file-owner.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
// a leaf (`leaf<n>`) is a real certificate for key(n): only a fitting pair is published
const cert = (n: string) => (n.startsWith('leaf') ? keyPair(n.slice(4)).certPem : `-----BEGIN CERTIFICATE-----\n${Buffer.from(`cert-${n}`).toString('base64')}\n-----END CERTIFICATE-----\n`);
const key = (n: string) => keyPair(n).keyPem;

function secretData(n: string, extra: Record<string, string> = {}) {
  return { 'tls.crt': b64(cert(`leaf${n}`) + cert('intermediate')), 'tls.key': b64(key(n)), 'ca.crt': b64(cert('root')), ...extra };
}

function withRoot(fn: (root: string) => Promise<void>) {
  return async () => {
    const root = mkdtempSync(join(tmpdir(), 'certsmith-lineage-'));
    try {
      await fn(join(root, 'live'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}

test('a Secret becomes cert-manager and certbot file names, keys 0600', () => {
  const files = lineageFiles(secretData('1', { 'keystore.p12': b64('p12'), 'truststore.p12': b64('trust'), 'key.der': b64('der') }))!;
  const byName = Object.fromEntries(files.map((f) => [f.name, f]));
  assert.deepEqual(Object.keys(byName).sort(), ['ca.crt', 'cert.pem', 'chain.pem', 'fullchain.pem', 'key.der', 'keystore.p12', 'privkey.pem', 'tls-combined.pem', 'tls.crt', 'tls.key', 'truststore.p12']);
  assert.equal(byName['fullchain.pem'].content.toString(), cert('leaf1') + cert('intermediate'));
  assert.equal(byName['cert.pem'].content.toString(), cert('leaf1'));
  assert.equal(byName['chain.pem'].content.toString(), cert('intermediate'));
  assert.equal(byName['tls-combined.pem'].content.toString(), key('1') + cert('leaf1') + cert('intermediate'));
  for (const n of ['tls.key', 'privkey.pem', 'tls-combined.pem', 'key.der', 'keystore.p12']) assert.equal(byName[n].mode, 0o600, n);
  for (const n of ['tls.crt', 'ca.crt', 'fullchain.pem', 'truststore.p12']) assert.equal(byName[n].mode, 0o644, n);
  assert.equal(lineageFiles({ 'tls.crt': b64(cert('x')) }), undefined, 'no key, no files');
  assert.equal(lineageFiles({ 'tls.crt': b64('garbage'), 'tls.key': b64(key('x')) }), undefined, 'no certificate, no files');
  assert.equal(lineageFiles({ 'tls.crt': b64(cert('leaf1')), 'tls.key': b64(key('2')) }), undefined, 'a key that does not fit the certificate, no files');
  const rootIssued = lineageFiles({ 'tls.crt': b64(cert('leaf1')), 'tls.key': b64(key('1')) })!;
  assert.equal(rootIssued.find((f) => f.name === 'chain.pem')?.content.length, 0, 'chain.pem is there, empty, when tls.crt holds the leaf alone (as certbot writes it)');
  assert.notEqual(lineageHash(files), lineageHash(files, '33:33'), 'another owner is another version');
});

test('no private key in a file others may read: a tls.crt holding a key is not mirrored, a ca.crt holding one is written with its certificates alone', () => {
  // seen: a combined PEM (certificate then key, as certbot and HAProxy users keep it) in an adopted
  // Secret's tls.crt, and a CA key pasted into ca.crt, were mirrored 0644 (0750 folders with --files-owner)
  assert.equal(lineageFiles({ 'tls.crt': b64(cert('leaf1') + key('1')), 'tls.key': b64(key('1')) }), undefined, 'tls.crt with the key in it: re-issued first (InvalidCertificate), no files');
  assert.equal(lineageFiles({ 'tls.crt': b64(key('1') + cert('leaf1')), 'tls.key': b64(key('1')) }), undefined, 'the key before the certificate');
  const files = lineageFiles(secretData('1', { 'ca.crt': b64(cert('root') + key('ca') + cert('root2')) }))!;
  const ca = files.find((f) => f.name === 'ca.crt')!;
  assert.equal(ca.content.toString(), cert('root') + cert('root2'));
  assert.equal(ca.mode, 0o644);
  for (const f of files.filter((x) => x.mode !== 0o600)) assert.doesNotMatch(f.content.toString('latin1'), /PRIVATE KEY/, f.name);
});

test('publishes a version behind a symlink with 0700 folders, skips unchanged content, keeps three versions', withRoot(async (root) => {
  const ref = { root, namespace: 'default', name: 'web-tls' };
  const live = join(root, 'default', 'web-tls');
  const publish = (n: string) => {
    const files = lineageFiles(secretData(n))!;
    return publishLineage(ref, files, lineageHash(files));
  };
  const first = await publish('1');
  assert.equal(first.changed, true);
  assert.equal(readlinkSync(live), join('.web-tls.versions', first.version));
  assert.equal(readFileSync(join(live, 'tls.key'), 'utf8'), key('1'));
  for (const d of [root, join(root, 'default'), join(root, 'default', '.web-tls.versions'), join(root, 'default', '.web-tls.versions', first.version)]) {
    assert.equal(statSync(d).mode & 0o777, 0o700, d);
  }
  assert.equal(statSync(join(live, 'tls.key')).mode & 0o777, 0o600);
  assert.equal(statSync(join(live, 'tls-combined.pem')).mode & 0o777, 0o600);
  assert.equal(statSync(join(live, 'fullchain.pem')).mode & 0o777, 0o644);

  const again = await publish('1');
  assert.deepEqual(again, { changed: false, version: first.version });

  const versions: string[] = [first.version];
  for (const n of ['2', '3', '4', '5']) versions.push((await publish(n)).version);
  assert.equal(readFileSync(join(live, 'tls.key'), 'utf8'), key('5'));
  assert.deepEqual(readdirSync(join(root, 'default', '.web-tls.versions')).sort(), versions.slice(-3).sort());
  assert.deepEqual(readdirSync(join(root, 'default')).sort(), ['.web-tls.versions', 'web-tls'], 'no temporary links left');
  assert.equal((await currentVersion(ref))?.version, versions[4]);
  assert.deepEqual(await listLineages(root), [{ namespace: 'default', name: 'web-tls' }]);

  assert.equal(await removeLineage(ref), true);
  assert.equal(existsSync(live), false);
  assert.equal(existsSync(join(root, 'default', '.web-tls.versions')), false);
  assert.equal(await removeLineage(ref), false);
}));

test('a real folder at the live path is someone else\'s: not replaced, not removed', withRoot(async (root) => {
  const ref = { root, namespace: 'default', name: 'mine' };
  mkdirSync(join(root, 'default', 'mine'), { recursive: true });
  writeFileSync(join(root, 'default', 'mine', 'tls.crt'), 'hand-made');
  const files = lineageFiles(secretData('1'))!;
  await assert.rejects(publishLineage(ref, files, lineageHash(files)), /not a symlink certsmith made/);
  assert.equal(await removeLineage(ref), false);
  assert.equal(readFileSync(join(root, 'default', 'mine', 'tls.crt'), 'utf8'), 'hand-made');
}));

test('a symlink pointing elsewhere is not taken for a version of ours', withRoot(async (root) => {
  mkdirSync(join(root, 'default'), { recursive: true });
  symlinkSync('/etc', join(root, 'default', 'web'));
  assert.equal(await currentVersion({ root, namespace: 'default', name: 'web' }), undefined);
}));

test('names that could leave the folder are refused', () => {
  for (const [ns, name] of [['default', '..'], ['default', '../x'], ['..', 'x'], ['default', '.hidden'], ['Default', 'x'], ['default', 'a/b'], ['', 'x']]) {
    assert.equal(isSafeLineageName(ns, name), false, `${ns}/${name}`);
  }
  assert.equal(isSafeLineageName('default', 'web-tls.example.com'), true);
});

test('files owner: numbers, names from passwd/group, primary group', withRoot(async (root) => {
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:34:www-data:/var/www:/usr/sbin/nologin\n');
  writeFileSync(join(root, 'group'), 'root:x:0:\nssl-cert:x:110:\n');
  const files = { passwd: join(root, 'passwd'), group: join(root, 'group') };
  assert.deepEqual(parseFileOwner('1000:1001', files), { uid: 1000, gid: 1001, text: '1000:1001' });
  assert.deepEqual(parseFileOwner('www-data:ssl-cert', files), { uid: 33, gid: 110, text: '33:110' });
  assert.deepEqual(parseFileOwner('www-data', files), { uid: 33, gid: 34, text: '33:34' });
  assert.throws(() => parseFileOwner('nobody-here', files), /no user named "nobody-here"/);
  assert.throws(() => parseFileOwner('1000', files), /give the group too/);
  assert.throws(() => parseFileOwner('a:b:c', files), /expected USER/);
}));

// The files owner is the account a server reads its key as, which the README counts as not
// trusted: files it owned it could rewrite (a CA of its own appended to a ca.crt a root-run
// service trusts). So everything stays certsmith's; the owner's group reads (keys 0640), which
// is also Debian's ssl-cert convention (--files-owner root:ssl-cert).
test('with an owner, everything stays ours and the owner\'s group reads: folders 0750, keys 0640, certificates 0644 (certsmith runs as root on a host)', withRoot(async (root) => {
  const ref = { root, namespace: 'default', name: 'owned' };
  const owner = { uid: 4242, gid: 4343, text: '4242:4343' };
  const files = lineageFiles(secretData('1'))!;
  await publishLineage(ref, files, lineageHash(files, filesOwnerTag(owner)), { owner });
  const me = process.getuid!();
  for (const d of [root, join(root, 'default'), join(root, 'default', '.owned.versions'), join(root, 'default', 'owned')]) {
    const st = statSync(d);
    assert.deepEqual([st.uid, st.gid, st.mode & 0o7777], [me, 4343, 0o750], d);
  }
  for (const [f, mode] of [['tls.key', 0o640], ['privkey.pem', 0o640], ['tls-combined.pem', 0o640], ['tls.crt', 0o644], ['fullchain.pem', 0o644], ['ca.crt', 0o644]] as const) {
    const st = statSync(join(root, 'default', 'owned', f));
    assert.deepEqual([st.uid, st.gid, st.mode & 0o7777], [me, 4343, mode], f);
  }
  const link = lstatSync(join(root, 'default', 'owned'));
  assert.equal(link.uid, me, 'the live link stays ours');
}));

test('a folder made before --files-owner was given is opened to the owner\'s group, read-only', withRoot(async (root) => {
  const ref = { root, namespace: 'default', name: 'later' };
  const files = lineageFiles(secretData('1'))!;
  await publishLineage(ref, files, lineageHash(files));
  assert.equal(statSync(root).mode & 0o777, 0o700);
  const owner = { uid: 4242, gid: 4343, text: '4242:4343' };
  await publishLineage(ref, files, lineageHash(files, filesOwnerTag(owner)), { owner });
  const me = process.getuid!();
  for (const d of [root, join(root, 'default'), join(root, 'default', '.later.versions'), join(root, 'default', 'later')]) {
    const st = statSync(d);
    assert.deepEqual([st.uid, st.gid, st.mode & 0o7777], [me, 4343, 0o750], d);
  }
  const key = statSync(join(root, 'default', 'later', 'tls.key'));
  assert.deepEqual([key.uid, key.gid, key.mode & 0o777], [me, 4343, 0o640]);
}));

test('a live version in a folder an earlier certsmith handed to the files owner is written again as ours', withRoot(async (root) => {
  const ref = { root, namespace: 'default', name: 'old' };
  const owner = { uid: 4242, gid: 4343, text: '4242:4343' };
  const files = lineageFiles(secretData('1'))!;
  const first = await publishLineage(ref, files, lineageHash(files, filesOwnerTag(owner)), { owner });
  execFileSync('chown', ['-R', '4242:4343', root]);
  const again = await publishLineage(ref, files, lineageHash(files, filesOwnerTag(owner)), { owner });
  assert.equal(again.changed, true);
  assert.notEqual(again.version, first.version);
  const st = statSync(join(root, 'default', 'old'));
  assert.deepEqual([st.uid, st.mode & 0o777], [process.getuid!(), 0o750]);
  assert.deepEqual(await publishLineage(ref, files, lineageHash(files, filesOwnerTag(owner)), { owner }), { changed: false, version: again.version });
}));

test('a Secret name as long as a file name allows (245 characters, with ".versions") is published, and renewed, like any other', withRoot(async (root) => {
  for (const length of [236, 237, 239, 245]) {
    const name = `${'a'.repeat(59)}.`.repeat(5).slice(0, length - 1) + 'z';
    assert.equal(name.length, length);
    const ref = { root, namespace: 'default', name };
    for (const n of ['1', '2']) {
      const files = lineageFiles(secretData(n))!;
      const published = await publishLineage(ref, files, lineageHash(files));
      assert.equal(published.changed, true, `${length} characters, version ${n}`);
      assert.equal(readFileSync(join(root, 'default', name, 'tls.key'), 'utf8'), key(n));
    }
    assert.equal(readdirSync(join(root, 'default', `.${name}.versions`)).length, 2, `${length} characters: two versions, nothing left over`);
  }
  assert.deepEqual(readdirSync(join(root, 'default')).filter((e) => e.includes('.link-')), [], 'no temporary link left');
}));
