// The kubeconfig the embedded server hands out, and the client side that reads any
// kubeconfig (ours or a real cluster's) into what HttpStore needs. Every CLI command loads
// this file: what only the server needs (the token, node:crypto) lives in data-dir.ts.
import { readFileSync, existsSync, mkdirSync } from 'node:fs';
import { replaceFile } from './private-files.ts';
import { dirname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type * as YAMLModule from 'yaml';

export interface ClientConfig {
  server: string;
  caPem?: string;
  token?: string;
  insecure?: boolean;
  namespace?: string;
  /** the Unix socket the same server also answers on (certsmith server's own kubeconfig names it) */
  socketPath?: string;
  /** the file this came from, for messages */
  source: string;
}

const contextName = 'certsmith';

/**
 * The cluster extension that names the embedded server's Unix socket. Kubeconfig extensions
 * are for tools to add to; kubectl and client-go readers keep and otherwise ignore them.
 */
export const socketExtensionName = 'certsmith.io/api-socket';

export function writeKubeconfig(path: string, cfg: { server: string; caPem: string; token: string; namespace?: string; socketPath?: string }): void {
  const cluster = {
    server: cfg.server,
    'certificate-authority-data': Buffer.from(cfg.caPem).toString('base64'),
    ...(cfg.socketPath ? { extensions: [{ name: socketExtensionName, extension: { path: cfg.socketPath } }] } : {}),
  };
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: contextName, cluster }],
    users: [{ name: contextName, user: { token: cfg.token } }],
    contexts: [{ name: contextName, context: { cluster: contextName, user: contextName, namespace: cfg.namespace ?? 'default' } }],
    'current-context': contextName,
    preferences: {},
  };
  mkdirSync(dirname(path), { recursive: true });
  // JSON, which is YAML: kubectl and every kubeconfig reader take it, and the CLI reads it without
  // loading a YAML parser (a large share of each command's start-up time)
  replaceFile(path, JSON.stringify(doc, null, 2) + '\n', 0o600);
}

export class KubeconfigError extends Error {}

/** Resolves --kubeconfig, then $KUBECONFIG (first existing entry), then ./.certsmith/kubeconfig. */
export function kubeconfigPath(explicit?: string): string {
  if (explicit) return resolve(explicit);
  const env = process.env.KUBECONFIG;
  if (env) {
    const entries = env.split(':').filter(Boolean);
    const found = entries.find((p) => existsSync(p));
    if (found) return resolve(found);
    if (entries.length) return resolve(entries[0]);
  }
  return resolve('.certsmith', 'kubeconfig');
}

/** JSON (what certsmith server writes) without the YAML parser; YAML (kubectl's own files) loads it. */
function parseKubeconfig(text: string): unknown {
  if (text.trimStart().startsWith('{')) {
    try {
      return JSON.parse(text);
    } catch {} // YAML's flow style starts with '{' too: the YAML parser decides
  }
  const yaml = createRequire(import.meta.url)('yaml') as typeof YAMLModule;
  return yaml.parse(text);
}

export function loadClientConfig(opts: { kubeconfig?: string } = {}): ClientConfig {
  const path = kubeconfigPath(opts.kubeconfig);
  if (!existsSync(path)) {
    throw new KubeconfigError(`no kubeconfig at ${path}: start "certsmith server" or pass --kubeconfig`);
  }
  let doc: any;
  try {
    doc = parseKubeconfig(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${path} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  const byName = (list: unknown, name: string) => (Array.isArray(list) ? list : []).find((e: any) => e?.name === name);
  const ctxName = doc?.['current-context'] ?? (Array.isArray(doc?.contexts) && doc.contexts.length === 1 ? doc.contexts[0].name : undefined);
  const ctx = ctxName ? byName(doc.contexts, ctxName)?.context : undefined;
  if (!ctx && ctxName) {
    throw new KubeconfigError(`kubeconfig ${path}: its current-context "${ctxName}" is not defined in it (certsmith reads one kubeconfig file: the first of $KUBECONFIG that exists; it does not merge them as kubectl does)`);
  }
  if (!ctx) throw new KubeconfigError(`kubeconfig ${path} has no current-context`);
  const cluster = byName(doc.clusters, ctx.cluster)?.cluster;
  if (!cluster?.server) throw new KubeconfigError(`kubeconfig ${path}: context "${ctxName}" names no cluster with a server`);
  const user = ctx.user ? byName(doc.users, ctx.user)?.user ?? {} : {};
  const base = dirname(path);

  let caPem: string | undefined;
  if (cluster['certificate-authority-data']) caPem = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  else if (cluster['certificate-authority']) caPem = readFileSync(resolve(base, cluster['certificate-authority']), 'utf8');

  let token: string | undefined = user.token;
  if (!token && user.tokenFile) token = readFileSync(resolve(base, user.tokenFile), 'utf8').trim();

  const socket = byName(cluster.extensions, socketExtensionName)?.extension?.path;
  return {
    server: String(cluster.server).replace(/\/+$/, ''),
    caPem,
    token,
    insecure: cluster['insecure-skip-tls-verify'] === true || undefined,
    namespace: ctx.namespace || undefined,
    ...(typeof socket === 'string' && socket ? { socketPath: resolve(base, socket) } : {}),
    source: path,
  };
}
