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

for (const r of rows) {
  test(`kubeconfig resolution: ${r.name}`, () => {
    const files = new Set(r.files);
    const got = resolveKubeconfig({ flag: r.flag, env: r.env ?? {}, home: HOME, cwd: CWD, exists: (p) => files.has(p) });
    if (r.want === 'none') {
      assert.equal(got.kind, 'none');
      assert.match((got as { message: string }).message, /--kubeconfig.*\$KUBECONFIG.*~\/\.kube\/config.*pod.*certsmith server/);
    } else {
      assert.deepEqual(got, r.want);
    }
  });
}
