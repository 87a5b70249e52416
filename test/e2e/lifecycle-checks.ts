// The lifecycle end-to-end checks, as a user runs certsmith: the examples applied at start
// become Ready and openssl accepts what was issued; the backoff flow driven through the CLI
// with approvals by hand. Shared by the embedded server with its own controllers
// (lifecycle.test.ts) and by the server as a bare API with `certsmith controller` in another
// process talking to it as to a cluster (controller.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type RunningServer, waitFor, isReady } from './harness.ts';

/** The running system under test, however its controllers run. */
export interface LifecycleStack {
  cli: RunningServer['cli'];
  /** stops every process of the stack */
  stop(): Promise<unknown>;
  cleanup(): void;
}

export interface LifecycleTestOptions {
  /** appended to each test's name, to tell the runs apart */
  titleSuffix?: string;
  /** serverArgs go to `certsmith server`, controllerArgs to whatever runs the controllers */
  start(o: { serverArgs: string[]; controllerArgs: string[] }): Promise<LifecycleStack>;
}

interface Obj { metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; spec?: Record<string, unknown>; status?: Record<string, any>; data?: Record<string, string> }

async function getJSON<T = Obj>(s: Pick<RunningServer, 'cli'>, args: string[]): Promise<T> {
  const r = await s.cli(['get', ...args, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

export function lifecycleTests(o: LifecycleTestOptions): void {
  test(`npm start: every example Certificate becomes Ready and openssl accepts what was issued${o.titleSuffix ?? ''}`, async () => {
    const s = await o.start({ serverArgs: ['--apply', 'examples/'], controllerArgs: [] });
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-openssl-'));
    try {
      const certs = await waitFor('all example Certificates Ready', async () => {
        const list = await getJSON<{ items: Obj[] }>(s, ['certificates', '-A']);
        return list.items.length >= 5 && list.items.every(isReady) ? list.items : undefined;
      });
      for (const c of certs) {
        const secret = await getJSON(s, ['secret', String(c.spec!.secretName), '-n', c.metadata.namespace!]);
        const file = (k: string) => {
          const p = join(dir, `${c.metadata.name}.${k}`);
          writeFileSync(p, Buffer.from(secret.data![k], 'base64'));
          return p;
        };
        const crt = file('tls.crt');
        const key = file('tls.key');
        const ca = file('ca.crt');
        const verify = await run('openssl', ['verify', '-CAfile', ca, '-untrusted', crt, crt]);
        assert.equal(verify.code, 0, `openssl verify ${c.metadata.name}: ${verify.stdout}${verify.stderr}`);
        const certPub = await run('openssl', ['x509', '-in', crt, '-noout', '-pubkey']);
        const keyPub = await run('openssl', ['pkey', '-in', key, '-pubout']);
        assert.equal(certPub.stdout, keyPub.stdout, `${c.metadata.name}: tls.key matches tls.crt`);
        if (secret.data!['keystore.p12']) {
          const p12 = file('keystore.p12');
          const open = await run('openssl', ['pkcs12', '-in', p12, '-passin', 'pass:changeit', '-nodes', '-info']);
          assert.equal(open.code, 0, `openssl pkcs12: ${open.stderr}`);
          assert.match(open.stdout, /BEGIN PRIVATE KEY/);
        }
      }
      const names = certs.map((c) => c.metadata.name).sort();
      assert.deepEqual(names, ['api-ecdsa', 'example-ca', 'java-app', 'mesh-ed25519', 'web-rsa']);
    } finally {
      await s.stop();
      s.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`backoff through the CLI: deny, renew, deny again, then approve${o.titleSuffix ?? ''}`, async () => {
    const s = await o.start({ serverArgs: [], controllerArgs: ['--no-auto-approve'] });
    try {
      const manifest = `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: app, namespace: default }
spec:
  secretName: app-tls
  dnsNames: [app.example.test]
  issuerRef: { name: selfsigned, kind: ClusterIssuer }
`;
      const applied = await s.cli(['apply', '-f', '-'], { input: manifest });
      assert.equal(applied.code, 0, applied.stderr);

      const pending = () => waitFor('a pending CertificateRequest', async () => {
        const list = await getJSON<{ items: Obj[] }>(s, ['certificaterequests']);
        return list.items.find((r) => !r.status?.conditions?.some((c: { type: string }) => c.type === 'Approved' || c.type === 'Denied'))?.metadata.name;
      });
      const attempts = (n: number) => waitFor(`issuanceAttempts ${n}`, async () => {
        const c = await getJSON(s, ['certificate', 'app']);
        return c.status?.issuanceAttempts === n ? c : undefined;
      });

      let cr = await pending();
      let r = await s.cli(['deny', cr, '--reason', 'NotToday', '--message', 'denied by the e2e test']);
      assert.equal(r.code, 0, r.stderr);
      await attempts(1);

      assert.equal((await s.cli(['renew', 'app'])).code, 0);
      cr = await pending();
      r = await s.cli(['deny', cr]);
      assert.equal(r.code, 0, r.stderr);
      const failed = await attempts(2);
      const next = new Date(Date.parse(failed.status!.lastFailureTime) + 2 * 3_600_000).toISOString().replace('.000Z', 'Z');
      const status = await s.cli(['status', 'certificate', 'app']);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /Failed Issuance Attempts: 2/);
      assert.match(status.stdout, new RegExp(`Next Attempt: ${next}`));

      assert.equal((await s.cli(['renew', 'app'])).code, 0);
      cr = await pending();
      r = await s.cli(['approve', cr]);
      assert.equal(r.code, 0, r.stderr);
      const done = await waitFor('Ready', async () => {
        const c = await getJSON(s, ['certificate', 'app']);
        return isReady(c) ? c : undefined;
      });
      assert.equal(done.status!.issuanceAttempts, undefined);
      assert.equal(done.status!.lastFailureTime, undefined);
    } finally {
      await s.stop();
      s.cleanup();
    }
  });
}
