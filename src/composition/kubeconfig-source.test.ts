// One row per way a shell can be set up: the CLI and `certsmith controller` resolve through this
// one function, so each row is also "both reach the same cluster".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveKubeconfig, serviceAccountDir, type KubeconfigSource } from './kubeconfig-source.ts';

const HOME = '/home/u';
const CWD = '/work/site';
const homeConfig = '/home/u/.kube/config';
const own = '/work/site/.certsmith/kubeconfig';
const token = `${serviceAccountDir}/token`;

const rows: Array<{ name: string; flag?: string; env?: Record<string, string>; files: string[]; want: KubeconfigSource | 'none' }> = [
  { name: 'the flag wins over everything', flag: 'k.yaml', env: { KUBECONFIG: '/a', KUBERNETES_SERVICE_HOST: '10.0.0.1' }, files: ['/a', homeConfig, own, token],
    want: { kind: 'file', path: '/work/site/k.yaml', origin: '--kubeconfig' } },
  { name: 'a flag naming a missing file is not passed over', flag: '/missing', files: [homeConfig, own],
    want: { kind: 'file', path: '/missing', origin: '--kubeconfig' } },
  { name: '$KUBECONFIG over ~/.kube/config, the in-cluster account and certsmith server', env: { KUBECONFIG: '/a', KUBERNETES_SERVICE_HOST: '10.0.0.1' }, files: ['/a', homeConfig, own, token],
    want: { kind: 'file', path: '/a', origin: '$KUBECONFIG' } },
  { name: '$KUBECONFIG: the first file of the list that exists', env: { KUBECONFIG: '/none:/b:/c' }, files: ['/b', '/c'],
    want: { kind: 'file', path: '/b', origin: '$KUBECONFIG' } },
  { name: '$KUBECONFIG with no file present: its first entry (an error, not another cluster)', env: { KUBECONFIG: 'rel:/x' }, files: [homeConfig, own],
    want: { kind: 'file', path: '/work/site/rel', origin: '$KUBECONFIG' } },
  { name: 'an empty $KUBECONFIG counts as unset', env: { KUBECONFIG: '' }, files: [homeConfig],
    want: { kind: 'file', path: homeConfig, origin: '~/.kube/config' } },
  { name: '~/.kube/config over the in-cluster account, as kubectl', env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, files: [homeConfig, token, own],
    want: { kind: 'file', path: homeConfig, origin: '~/.kube/config' } },
  { name: '~/.kube/config over certsmith server\'s kubeconfig in this folder', files: [homeConfig, own],
    want: { kind: 'file', path: homeConfig, origin: '~/.kube/config' } },
  { name: 'in a pod: the service account', env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, files: [token, own],
    want: { kind: 'in-cluster', serviceAccountRoot: '' } },
  { name: 'a service host without the token file is not a pod', env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, files: [own],
    want: { kind: 'file', path: own, origin: 'certsmith server' } },
  { name: 'only certsmith server\'s kubeconfig', files: [own],
    want: { kind: 'file', path: own, origin: 'certsmith server' } },
  { name: 'nothing at all', files: [], want: 'none' },
];

const UID = 1000;
/** every file in the rows is the caller's, 0600, in a folder of theirs (0700) */
const entry = (uid: number, mode: number, kind: 'file' | 'dir' | 'link') => ({ uid, mode, isFile: () => kind === 'file', isDirectory: () => kind === 'dir' });
const ownFolder = '/work/site/.certsmith';

for (const r of rows) {
  test(`kubeconfig resolution: ${r.name}`, () => {
    const files = new Set(r.files);
    const lstat = (p: string) => (p === ownFolder ? entry(UID, 0o700, 'dir') : files.has(p) ? entry(UID, 0o600, 'file') : undefined);
    const got = resolveKubeconfig({ flag: r.flag, env: r.env ?? {}, home: HOME, cwd: CWD, exists: (p) => files.has(p), uid: UID, lstat });
    if (r.want === 'none') {
      assert.equal(got.kind, 'none');
      assert.match((got as { message: string }).message, /--kubeconfig.*\$KUBECONFIG.*~\/\.kube\/config.*pod.*certsmith server/);
    } else {
      assert.deepEqual(got, r.want);
    }
  });
}

test('the current folder\'s kubeconfig is not used when another account could have put it there or may change it', () => {
  const cases: Array<[string, Record<string, ReturnType<typeof entry>>, RegExp]> = [
    ['the file belongs to another account', { [ownFolder]: entry(UID, 0o700, 'dir'), [own]: entry(1001, 0o600, 'file') }, /kubeconfig belongs to uid 1001, not to you \(uid 1000\)/],
    ['the folder belongs to another account', { [ownFolder]: entry(1001, 0o755, 'dir'), [own]: entry(UID, 0o600, 'file') }, /\.certsmith belongs to uid 1001/],
    ['the folder is writable by others', { [ownFolder]: entry(UID, 0o777, 'dir'), [own]: entry(UID, 0o600, 'file') }, /may be changed by other accounts \(mode 777\)/],
    ['the file is group-writable', { [ownFolder]: entry(UID, 0o700, 'dir'), [own]: entry(UID, 0o620, 'file') }, /mode 620/],
    ['the file is a symlink', { [ownFolder]: entry(UID, 0o700, 'dir'), [own]: entry(UID, 0o777, 'link') }, /is not a file \(a symlink\?\)/],
  ];
  for (const [name, stats, why] of cases) {
    const got = resolveKubeconfig({ env: {}, home: HOME, cwd: CWD, exists: (p) => p === own, uid: UID, lstat: (p) => stats[p] });
    assert.equal(got.kind, 'none', name);
    const message = (got as { message: string }).message;
    assert.match(message, why, name);
    assert.match(message, /pass --kubeconfig to use it anyway/, name);
  }
});
