// Which API server a certsmith process talks to. The CLI commands and `certsmith controller`
// both ask this one function, so the two can never reach different clusters from the same
// shell. The order is kubectl's, with certsmith's own server as the last resort:
//   1. --kubeconfig FILE
//   2. $KUBECONFIG: the first file of the list that exists (several files are not merged)
//   3. ~/.kube/config
//   4. the in-cluster service account (in a pod: $KUBERNETES_SERVICE_HOST and its token file)
//   5. ./.certsmith/kubeconfig, written by `certsmith server` started in this folder
// kubectl uses the in-cluster account only when no kubeconfig file is found, and so does this.
// The last one is found by the folder a command runs in, so it is used only when it and its
// folder are the caller's and no one else may change them: a kubeconfig names the server the
// token goes to, and its tokenFile what is read (root running `certsmith get` in a folder another
// account prepared would send that account the API token).
import { existsSync, lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

export type KubeconfigSource =
  | { kind: 'file'; path: string; origin: '--kubeconfig' | '$KUBECONFIG' | '~/.kube/config' | 'certsmith server' }
  | { kind: 'in-cluster'; serviceAccountRoot: string }
  | { kind: 'none'; message: string };

export interface KubeconfigEnvironment {
  /** the --kubeconfig flag */
  flag?: string;
  env?: { KUBECONFIG?: string; KUBERNETES_SERVICE_HOST?: string; KUBERNETES_SERVICE_PORT?: string };
  home?: string;
  cwd?: string;
  exists?: (path: string) => boolean;
  /** prefix of the service account folder, for tests of the in-cluster path */
  serviceAccountRoot?: string;
  /** who is asking, and lstat, for tests of the current folder's kubeconfig */
  uid?: number;
  lstat?: (path: string) => OwnedEntry | undefined;
}

interface OwnedEntry { uid: number; mode: number; isFile(): boolean; isDirectory(): boolean }

/** Why `path` (a file, in a folder) may not be trusted, or undefined when it and the folder are the caller's alone. */
function untrusted(path: string, uid: number | undefined, lstat: (p: string) => OwnedEntry | undefined): string | undefined {
  if (uid === undefined) return undefined;
  for (const [p, kind] of [[dirname(path), 'folder'], [path, 'file']] as const) {
    const st = lstat(p);
    if (!st) return `${p} cannot be read`;
    if (kind === 'folder' ? !st.isDirectory() : !st.isFile()) return `${p} is not a ${kind} (a symlink?)`;
    if (st.uid !== uid) return `${p} belongs to uid ${st.uid}, not to you (uid ${uid})`;
    if (st.mode & 0o022) return `${p} may be changed by other accounts (mode ${(st.mode & 0o777).toString(8)})`;
  }
  return undefined;
}

export function resolveKubeconfig(o: KubeconfigEnvironment = {}): KubeconfigSource {
  const env = o.env ?? process.env;
  const exists = o.exists ?? existsSync;
  const cwd = o.cwd ?? process.cwd();
  // a missing file named by the flag or $KUBECONFIG is the caller's error ("no kubeconfig at"), never a reason to go elsewhere
  if (o.flag) return { kind: 'file', path: resolve(cwd, o.flag), origin: '--kubeconfig' };
  const entries = (env.KUBECONFIG ?? '').split(':').filter(Boolean);
  if (entries.length) {
    return { kind: 'file', path: resolve(cwd, entries.find((p) => exists(resolve(cwd, p))) ?? entries[0]), origin: '$KUBECONFIG' };
  }
  const home = join(o.home ?? homedir(), '.kube', 'config');
  if (exists(home)) return { kind: 'file', path: home, origin: '~/.kube/config' };
  const root = o.serviceAccountRoot ?? '';
  if (env.KUBERNETES_SERVICE_HOST && exists(`${root}${serviceAccountDir}/token`)) return { kind: 'in-cluster', serviceAccountRoot: root };
  const own = resolve(cwd, '.certsmith', 'kubeconfig');
  if (exists(own)) {
    const why = untrusted(own, 'uid' in o ? o.uid : process.getuid?.(), o.lstat ?? ((p) => lstatSync(p, { throwIfNoEntry: false })));
    if (why) return { kind: 'none', message: `not using ${own}: ${why}; a kubeconfig found in the current folder must be yours alone (it names the server your token is sent to); pass --kubeconfig to use it anyway` };
    return { kind: 'file', path: own, origin: 'certsmith server' };
  }
  return { kind: 'none', message: 'no cluster configuration: pass --kubeconfig, set $KUBECONFIG, create ~/.kube/config, run in a pod, or start "certsmith server" in this folder' };
}
