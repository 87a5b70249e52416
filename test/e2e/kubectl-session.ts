// kubectl against a running `certsmith server`, as the kubectl-driven e2e tests use it: the
// binary (KUBECTL overrides), JSON reads, applies, and openssl's
// view of an issued Secret.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isReady, run, startServer, waitFor, type CommandResult, type RunningServer } from './harness.ts';

export const kubectlBin = process.env.KUBECTL ?? 'kubectl';

/** The fields of a kubectl `-o json` object the tests read; loose on purpose, any kind fits. */
export interface KubeJSON {
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
  };
  spec?: Record<string, any>;
  status?: Record<string, any>;
  data?: Record<string, string>;
  webhooks?: Array<{ name: string; clientConfig: { caBundle?: string } }>;
  involvedObject?: { kind: string; name: string };
  reason?: string;
  type?: string;
  message?: string;
}

export interface KubectlSession {
  /**
   * Flags `kubectl apply` needs against the server: none for any version now. kubectl before
   * 1.27 (Debian's v1.20) validates against /openapi/v2 in protobuf, which the server serves;
   * the tests spreading this into their applies could drop it.
   */
  validateFlags: string[];
  kubectl(args: string[], input?: string): Promise<CommandResult>;
  /** `kubectl ... -o json`, asserting it succeeded */
  getJSON<T = KubeJSON>(args: string[]): Promise<T>;
  /** `kubectl apply -f -`, asserting it succeeded */
  apply(yaml: string): Promise<void>;
}

export async function kubectlSession(server: Pick<RunningServer, 'kubeconfig'>): Promise<KubectlSession> {
  const validateFlags: string[] = [];
  const kubectl = (args: string[], input?: string) => run(kubectlBin, ['--kubeconfig', server.kubeconfig, ...args], { input, timeoutMs: 30_000 });
  return {
    validateFlags,
    kubectl,
    async getJSON<T = KubeJSON>(args: string[]): Promise<T> {
      const r = await kubectl([...args, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as T;
    },
    async apply(yaml) {
      const r = await kubectl(['apply', ...validateFlags, '-f', '-'], yaml);
      assert.equal(r.code, 0, r.stderr);
    },
  };
}

/** A session on a server of its own, with a scratch dir for the files handed to openssl. */
export interface ServerKubectlSession extends KubectlSession {
  server: RunningServer;
  work: string;
  /** The DNS SANs openssl reads from the Secret's certificate, after checking the chain against ca.crt and tls.key against it. */
  verifiedSANs(secretName: string, namespace?: string): Promise<string[]>;
  /** stops the server, removes its data and the scratch dir, then asserts the server exited cleanly */
  close(): Promise<void>;
}

export async function startKubectlSession(opts: { workPrefix: string; serverArgs?: string[] }): Promise<ServerKubectlSession> {
  const work = mkdtempSync(join(tmpdir(), opts.workPrefix));
  let server: RunningServer;
  try {
    server = await startServer({ args: opts.serverArgs });
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  const session = await kubectlSession(server);
  return {
    ...session,
    server,
    work,
    async verifiedSANs(secretName, namespace = 'default') {
      const secret = await session.getJSON(['get', 'secret', secretName, '-n', namespace]);
      const file = (k: string) => {
        const p = join(work, `${secretName}.${k}`);
        writeFileSync(p, Buffer.from(secret.data![k], 'base64'), { mode: 0o600 });
        return p;
      };
      const crt = file('tls.crt');
      const verify = await run('openssl', ['verify', '-CAfile', file('ca.crt'), crt]);
      assert.equal(verify.code, 0, `openssl verify ${secretName}: ${verify.stdout}${verify.stderr}`);
      const certPub = await run('openssl', ['x509', '-in', crt, '-noout', '-pubkey']);
      const keyPub = await run('openssl', ['pkey', '-in', file('tls.key'), '-pubout']);
      assert.equal(certPub.stdout, keyPub.stdout, `${secretName}: tls.key matches tls.crt`);
      const ext = await run('openssl', ['x509', '-in', crt, '-noout', '-ext', 'subjectAltName']);
      assert.equal(ext.code, 0, ext.stderr);
      return [...ext.stdout.matchAll(/DNS:([^,\s]+)/g)].map((m) => m[1]).sort();
    },
    async close() {
      const code = await server.stop();
      server.cleanup();
      rmSync(work, { recursive: true, force: true });
      assert.equal(code, 0, `server exit code; output:\n${server.output()}`);
    },
  };
}

const selfSignedClusterIssuerManifest = `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
`;

/**
 * A namespace, the selfsigned ClusterIssuer, an ECDSA CA Certificate it issues, and, when
 * `caClusterIssuer` is given, a ClusterIssuer of that name signing with the CA.
 */
export function caIssuerManifest(o: {
  namespace: string;
  certificate: string;
  secretName: string;
  commonName: string;
  rotationPolicy?: 'Always' | 'Never';
  caClusterIssuer?: string;
}): string {
  const privateKey = o.rotationPolicy ? `{ algorithm: ECDSA, rotationPolicy: ${o.rotationPolicy} }` : '{ algorithm: ECDSA }';
  const manifest = `
apiVersion: v1
kind: Namespace
metadata: { name: ${o.namespace} }
---
${selfSignedClusterIssuerManifest}---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ${o.certificate}, namespace: ${o.namespace} }
spec: { secretName: ${o.secretName}, commonName: ${o.commonName}, isCA: true, privateKey: ${privateKey}, issuerRef: { name: selfsigned, kind: ClusterIssuer } }
`;
  if (!o.caClusterIssuer) return manifest;
  return `${manifest}---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: ${o.caClusterIssuer} }
spec: { ca: { secretName: ${o.secretName} } }
`;
}

/**
 * A session whose server has ClusterIssuer `ca` Ready: it signs with the CA Certificate
 * cert-manager/root (Secret root-ca, CN "<name> test CA") that ClusterIssuer selfsigned issued.
 */
export async function startWithCAClusterIssuer(name: string): Promise<ServerKubectlSession> {
  const s = await startKubectlSession({ workPrefix: `certsmith-${name}-` });
  try {
    await s.apply(caIssuerManifest({ namespace: 'cert-manager', certificate: 'root', secretName: 'root-ca', commonName: `${name} test CA`, caClusterIssuer: 'ca' }));
    await waitFor('ClusterIssuer ca Ready', async () => isReady(await s.getJSON(['get', 'clusterissuer', 'ca'])));
  } catch (e) {
    await s.close().catch(() => {});
    throw e;
  }
  return s;
}
