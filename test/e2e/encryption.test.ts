// `certsmith server --encryption-provider-config`: the examples are issued as usual, the API
// returns the private keys, and the state database on disk holds none of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { isReady, repoRoot, startServer, waitFor } from './harness.ts';

const encryptionConfig = (secret: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: ${secret}
      - identity: {}
`;

/** The database and its WAL and shared-memory files, as bytes. */
function stateFiles(dataDir: string): Map<string, Buffer> {
  return new Map(readdirSync(dataDir).filter((f) => f.startsWith('state.db')).map((f) => [f, readFileSync(join(dataDir, f))]));
}

function assertAbsent(files: Map<string, Buffer>, needles: string[]) {
  assert.ok(files.has('state.db'));
  for (const [file, bytes] of files) {
    for (const needle of needles) assert.equal(bytes.indexOf(needle), -1, `${file} contains ${JSON.stringify(needle.slice(0, 30))}`);
  }
}

test('certsmith server --encryption-provider-config: examples issued, keys served by the API, none in the database files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'certsmith-e2e-enc-'));
  const configPath = join(root, 'encryption.yaml');
  writeFileSync(configPath, encryptionConfig(randomBytes(32).toString('base64')), { mode: 0o600 });
  const server = await startServer({ args: ['--encryption-provider-config', configPath, '--apply', join(repoRoot, 'examples')], timeoutMs: 60_000 });
  try {
    const certs = await waitFor('every example Certificate Ready', async () => {
      const r = await server.cli(['get', 'certificates', '-A', '-o', 'json']);
      const items = (JSON.parse(r.stdout) as { items: { metadata: { name: string; namespace: string }; spec: { secretName: string }; status?: { conditions?: { type: string; status: string }[] } }[] }).items;
      return items.length >= 3 && items.every(isReady) ? items : undefined;
    }, 90_000, 500);

    const keys: string[] = [];
    for (const c of certs) {
      const r = await server.cli(['get', 'secret', c.spec.secretName, '-n', c.metadata.namespace, '-o', 'yaml']);
      assert.equal(r.code, 0, r.stderr);
      const tlsKey = (YAML.parse(r.stdout) as { data: Record<string, string> }).data['tls.key'];
      assert.match(Buffer.from(tlsKey, 'base64').toString(), /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----/, `${c.metadata.name}: tls.key`);
      keys.push(tlsKey);
    }

    // what the server holds now, in the database or still in its WAL
    const needles = ['PRIVATE KEY', '"tls.key"', ...keys.map((k) => k.slice(0, 64))];
    assertAbsent(stateFiles(server.dataDir), needles);
    assert.equal(await server.stop(), 0, server.output());
    // and after the shutdown checkpoint folded the WAL into the database
    assertAbsent(stateFiles(server.dataDir), needles);
    // other resources stay plain: the Certificates are there as JSON
    assert.ok(stateFiles(server.dataDir).get('state.db')!.includes(Buffer.from(`"secretName":"${certs[0].spec.secretName}"`)));
    // restored without its encryption file: the start fails naming the key the Secrets need, not
    // a server that serves the API and renews nothing
    await assert.rejects(startServer({ dataDir: server.dataDir, timeoutMs: 30_000 }), (e: Error) => {
      assert.match(e.message, /the controllers failed to start: secrets [\w-]+\/[\w.-]+ is encrypted with aesgcm key "key1", which the encryption configuration does not have/);
      return true;
    });
  } finally {
    server.kill();
    server.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
});

test('certsmith server --encryption-provider-config: a bad key stops the start, naming the field and not the key', async () => {
  const root = mkdtempSync(join(tmpdir(), 'certsmith-e2e-enc-'));
  const configPath = join(root, 'encryption.yaml');
  const shortKey = randomBytes(20).toString('base64');
  writeFileSync(configPath, encryptionConfig(shortKey));
  try {
    await assert.rejects(startServer({ args: ['--encryption-provider-config', configPath] }), (e: Error) => {
      assert.match(e.message, /resources\[0\]\.providers\[0\]\.aesgcm\.keys\[0\]\.secret: must be base64 of 16, 24 or 32 bytes/);
      assert.ok(!e.message.includes(shortKey));
      return true;
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
