// Crash safety: the server is killed with SIGKILL at random moments while issuing; after each
// restart it finishes what was in flight, and no Secret ever pairs a key with another key's
// certificate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './harness.ts';
import { certificateMatchesKey } from '../../src/pki/parse.ts';

interface Obj { metadata: { name: string; labels?: Record<string, string> }; status?: { conditions?: { type: string; status: string }[]; revision?: number }; data?: Record<string, string>; type?: string }

const COUNT = 40;

function manifest(): string {
  const docs = [
    'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: selfsigned }\nspec: { selfSigned: {} }',
    'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ca, namespace: default }\nspec: { isCA: true, commonName: crash CA, secretName: ca, duration: 8760h, privateKey: { algorithm: ECDSA }, issuerRef: { name: selfsigned, kind: ClusterIssuer } }',
    'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: { name: ca, namespace: default }\nspec: { ca: { secretName: ca } }',
  ];
  for (let i = 0; i < COUNT; i++) {
    const alg = i % 2 ? '{ algorithm: RSA, size: 2048 }' : '{ algorithm: ECDSA }';
    docs.push(`apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: c${i}, namespace: default }\nspec: { secretName: c${i}-tls, dnsNames: [c${i}.example.test], privateKey: ${alg}, issuerRef: { name: ca } }`);
  }
  return docs.join('\n---\n');
}

test('kill -9 during issuance: restarts finish the work, key and certificate always agree', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-crash-'));
  try {
    let s = await startServer({ dataDir });
    const applied = await s.cli(['apply', '-f', '-'], { input: manifest() });
    assert.equal(applied.code, 0, applied.stderr);
    for (let round = 0; round < 4; round++) {
      await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 900)));
      s.kill();
      await s.stop();
      s = await startServer({ dataDir });
      await checkSecrets(s);
    }
    const deadline = Date.now() + 90_000;
    let certs: Obj[] = [];
    for (;;) {
      const r = await s.cli(['get', 'certificates', '-o', 'json']);
      certs = (JSON.parse(r.stdout) as { items: Obj[] }).items;
      if (certs.length === COUNT + 1 && certs.every((c) => c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))) break;
      assert.ok(Date.now() < deadline, 'every Certificate Ready after the restarts');
      await new Promise((r) => setTimeout(r, 250));
    }
    await checkSecrets(s);
    // in-flight work finished: no temporary key Secret is left behind
    const r = await s.cli(['get', 'secrets', '-l', 'cert-manager.io/next-private-key=true', '-o', 'json']);
    assert.deepEqual((JSON.parse(r.stdout) as { items: Obj[] }).items.map((x) => x.metadata.name), []);
    await s.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function checkSecrets(s: Awaited<ReturnType<typeof startServer>>) {
  const r = await s.cli(['get', 'secrets', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  for (const secret of (JSON.parse(r.stdout) as { items: Obj[] }).items) {
    const d = secret.data ?? {};
    if (!d['tls.crt'] || !d['tls.key']) continue;
    const ok = certificateMatchesKey(Buffer.from(d['tls.crt'], 'base64').toString(), Buffer.from(d['tls.key'], 'base64').toString());
    assert.ok(ok, `Secret ${secret.metadata.name}: key and certificate disagree`);
  }
}
