// Which API server a certsmith process talks to. The CLI commands and `certsmith controller`
// both ask this one function, so the two can never reach different clusters from the same
// shell. The order is kubectl's, with certsmith's own server as the last resort:
//   1. --kubeconfig FILE
//   2. $KUBECONFIG: the first file of the list that exists (several files are not merged)
//   3. ~/.kube/config
//   4. the in-cluster service account (in a pod: $KUBERNETES_SERVICE_HOST and its token file)
//   5. ./.certsmith/kubeconfig, written by `certsmith server` started in this folder
// kubectl uses the in-cluster account only when no kubeconfig file is found, and so does this.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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
  if (exists(own)) return { kind: 'file', path: own, origin: 'certsmith server' };
  return { kind: 'none', message: 'no cluster configuration: pass --kubeconfig, set $KUBECONFIG, create ~/.kube/config, run in a pod, or start "certsmith server" in this folder' };
}
