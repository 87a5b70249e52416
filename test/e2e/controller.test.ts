// The lifecycle end-to-end suite a second time, with the controllers out of the server: the
// embedded server runs as a bare API server (--no-controllers) and `certsmith controller` in
// a separate process talks to it over HTTPS with its kubeconfig, as it would to a cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from './harness.ts';
import { startController } from './controller-harness.ts';
import { lifecycleTests } from './lifecycle-checks.ts';

/** With --no-controllers the server must leave applied Certificates alone: the controller process is what issues. */
async function assertNothingIssued(server: RunningServer) {
  await new Promise((r) => setTimeout(r, 1000));
  const certs = await server.cli(['get', 'certificates', '-A', '-o', 'json']);
  assert.equal(certs.code, 0, certs.stderr);
  const items = (JSON.parse(certs.stdout) as { items: Array<{ status?: unknown }> }).items;
  assert.ok(items.length > 0, 'the examples were applied');
  assert.deepEqual(items.filter((c) => c.status && Object.keys(c.status).length), [], 'no status written without controllers');
  const requests = await server.cli(['get', 'certificaterequests', '-A', '-o', 'json']);
  assert.deepEqual(JSON.parse(requests.stdout).items, [], 'no CertificateRequests without controllers');
}

lifecycleTests({
  titleSuffix: ' (certsmith controller against the server over HTTPS)',
  async start({ serverArgs, controllerArgs }) {
    const server = await startServer({ args: ['--no-controllers', ...serverArgs] });
    if (serverArgs.includes('--apply')) {
      try {
        await assertNothingIssued(server);
      } catch (e) {
        await server.stop();
        server.cleanup();
        throw e;
      }
    }
    const controller = startController({ kubeconfig: server.kubeconfig, args: controllerArgs });
    try {
      await controller.waitForOutput(/certsmith controller running against https:\/\/127\.0\.0\.1:\d+/);
    } catch (e) {
      await controller.kill();
      await server.stop();
      server.cleanup();
      throw e;
    }
    return {
      cli: server.cli,
      async stop() {
        const code = await controller.stop();
        await server.stop();
        if (code !== 0) throw new Error(`certsmith controller exited with ${code} on SIGTERM:\n${controller.output()}`);
      },
      cleanup: () => server.cleanup(),
    };
  },
});

test('certsmith controller --namespace reconciles that namespace only', async () => {
  const server = await startServer({ args: ['--no-controllers'] });
  const controller = startController({ kubeconfig: server.kubeconfig, args: ['--namespace', 'team-a'] });
  try {
    await controller.waitForOutput(/certsmith controller running against \S+ \(namespace team-a\)/);
    const issuerAndCert = (ns: string) => `
apiVersion: v1
kind: Namespace
metadata: { name: ${ns} }
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: { name: selfsigned, namespace: ${ns} }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: app, namespace: ${ns} }
spec:
  secretName: app-tls
  dnsNames: [app.${ns}.example.test]
  issuerRef: { name: selfsigned }
`;
    for (const ns of ['team-a', 'team-b']) {
      const r = await server.cli(['apply', '-f', '-'], { input: issuerAndCert(ns) });
      assert.equal(r.code, 0, r.stderr);
    }
    const get = async (ns: string) => {
      const r = await server.cli(['get', 'certificate', 'app', '-n', ns, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as { status?: { conditions?: Array<{ type: string; status: string }> } };
    };
    const end = Date.now() + 30_000;
    while (!(await get('team-a')).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
      assert.ok(Date.now() < end, 'team-a/app Ready within 30 s');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual((await get('team-b')).status ?? {}, {}, 'team-b is not watched: its Certificate is left alone');
    const requests = await server.cli(['get', 'certificaterequests', '-n', 'team-b', '-o', 'json']);
    assert.deepEqual(JSON.parse(requests.stdout).items, []);
  } finally {
    await controller.stop();
    await server.stop();
    server.cleanup();
  }
});
