// Encryption at rest through the store: what lands in the `log.value` column (read with a
// separate connection, as an attacker with the file would) and what the API still returns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { KubeObject, Secret } from '../../api/meta.ts';
import { Certificate, EventType, resourceTypes, SecretType } from '../../api/resources.ts';
import { FakeClock } from '../../runtime/clock.ts';
import { runStoreConformance } from '../conformance.ts';
import type { WatchEvent } from '../store.ts';
import { parseEncryptionConfiguration, type EncryptionConfiguration } from './encryption.ts';
import { openSqliteStore } from './index.ts';

const key1 = randomBytes(32).toString('base64');
const key2 = randomBytes(32).toString('base64');

function encryption(providers: string, resources = 'secrets'): EncryptionConfiguration {
  return parseEncryptionConfiguration(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [${resources}]
    providers:
${providers.trim().split('\n').map((l) => `      ${l}`).join('\n')}
`);
}

const gcm = (name: string, secret: string) => `- aesgcm:\n    keys: [{ name: ${name}, secret: "${secret}" }]`;
const cbc = (name: string, secret: string) => `- aescbc:\n    keys: [{ name: ${name}, secret: "${secret}" }]`;

const keyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const keyB64 = Buffer.from(keyPem).toString('base64');

function tlsSecret(name: string, extra: Partial<Secret> = {}): Secret {
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
    metadata: { name, namespace: 'default', labels: { app: 'web' } },
    data: { 'tls.crt': Buffer.from('not a real cert').toString('base64'), 'tls.key': keyB64 },
    ...extra,
  };
}

/** Every stored version of one object, as the file holds it. */
function rawValues(path: string, plural: string, name?: string): (string | Buffer)[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare<unknown[], { value: string | Buffer }>(`SELECT value FROM log WHERE plural = ? ${name ? 'AND name = ?' : ''} ORDER BY id`)
      .all(...(name ? [plural, name] : [plural]));
    return rows.map((r) => r.value);
  } finally {
    db.close();
  }
}

function assertEncrypted(values: (string | Buffer)[], prefix: string) {
  assert.ok(values.length > 0);
  for (const v of values) {
    assert.ok(Buffer.isBuffer(v), `stored as text: ${String(v).slice(0, 40)}`);
    assert.equal(v.subarray(0, prefix.length).toString('latin1'), prefix);
    for (const plain of ['tls.key', keyB64.slice(0, 40), 'PRIVATE KEY', '"default"', 'kubernetes.io/tls']) {
      assert.equal(v.indexOf(plain), -1, `the stored value contains ${plain}`);
    }
  }
}

async function withDir(fn: (path: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-enc-'));
  try {
    await fn(join(dir, 'state.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function collect(store: ReturnType<typeof openSqliteStore>, resourceVersion: string, labelSelector?: string) {
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  const w = store.watch(SecretType, { resourceVersion, labelSelector }, (e) => events.push(e), (e) => errors.push(e));
  return { events, errors, stop: () => w.stop() };
}

async function settle(cond: () => boolean) {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setImmediate(r));
}

for (const [provider, providers] of [['aesgcm', gcm('key1', key1)], ['aescbc', cbc('key1', key1)]] as const) {
  test(`encryption at rest (${provider}): Secrets are ciphertext in the file, plaintext through get, list and watch`, async () => {
    await withDir(async (path) => {
      const store = openSqliteStore({ path, encryption: encryption(providers) });
      try {
        const created = await store.create(SecretType, tlsSecret('web-tls'));
        const updated = await store.update(SecretType, { ...created, data: { ...created.data, 'ca.crt': Buffer.from('ca').toString('base64') } } as KubeObject);
        await store.create(SecretType, tlsSecret('api-tls'));
        await store.create(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec: { secretName: 'web-tls', issuerRef: { name: 'ca' } } });

        assertEncrypted(rawValues(path, 'secrets'), `k8s:enc:${provider}:v1:key1:`);
        assert.equal(rawValues(path, 'secrets', 'web-tls').length, 2);
        // other resources stay plain, readable JSON
        const certRows = rawValues(path, 'certificates');
        assert.equal(typeof certRows[0], 'string');
        assert.match(certRows[0] as string, /"secretName":"web-tls"/);

        const got = await store.get<Secret>(SecretType, 'default', 'web-tls');
        assert.equal(got?.data?.['tls.key'], keyB64);
        assert.equal(got?.metadata.resourceVersion, updated.metadata.resourceVersion);
        const listed = await store.list<Secret>(SecretType, { namespace: 'default', labelSelector: 'app=web' });
        assert.deepEqual(listed.items.map((s) => [s.metadata.name, s.data?.['tls.key']]), [['api-tls', keyB64], ['web-tls', keyB64]]);
        // a continue token lists from a snapshot of the log
        const page1 = await store.list<Secret>(SecretType, { limit: 1 });
        const page2 = await store.list<Secret>(SecretType, { limit: 1, continue: page1.continue });
        assert.deepEqual([...page1.items, ...page2.items].map((s) => s.data?.['tls.key']), [keyB64, keyB64]);

        const fromZero = collect(store, '0');
        // a replay of the log, with a selector so the previous versions are decrypted too
        const replay = collect(store, '1', 'app=web');
        await settle(() => fromZero.events.length >= 2 && replay.events.length >= 3);
        fromZero.stop();
        replay.stop();
        assert.deepEqual(fromZero.errors.concat(replay.errors), []);
        assert.deepEqual(fromZero.events.map((e) => [e.type, e.object.metadata.name, (e.object as Secret).data?.['tls.key']]),
          [['ADDED', 'api-tls', keyB64], ['ADDED', 'web-tls', keyB64]]);
        assert.deepEqual(replay.events.map((e) => [e.type, e.object.metadata.name, (e.object as Secret).data?.['ca.crt'] ?? null]),
          [['ADDED', 'web-tls', null], ['MODIFIED', 'web-tls', Buffer.from('ca').toString('base64')], ['ADDED', 'api-tls', null]]);
      } finally {
        await store.close();
      }
    });
  });
}

test('encryption at rest: owner cascade and compaction read encrypted rows', async () => {
  await withDir(async (path) => {
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const everything = resourceTypes.map((t) => (t.group ? `${t.plural}.${t.group}` : t.plural)).join(', ');
    const store = openSqliteStore({ path, clock, eventTTLSeconds: 60, encryption: encryption(gcm('key1', key1), everything) });
    try {
      const owner = await store.create<KubeObject>(Certificate, { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec: { secretName: 'web-tls', issuerRef: { name: 'ca' } } });
      await store.create(SecretType, tlsSecret('web-tls', { metadata: { name: 'web-tls', namespace: 'default', ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'web', uid: owner.metadata.uid! }] } }));
      await store.create(EventType, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: 'default' }, reason: 'Issuing' } as KubeObject);
      assertEncrypted(rawValues(path, 'events'), 'k8s:enc:aesgcm:v1:key1:');
      await store.delete(Certificate, 'default', 'web');
      assert.equal(await store.get(SecretType, 'default', 'web-tls'), undefined);
      assert.equal((await store.list(EventType)).items.length, 1);
      // the store's compaction timer expires the Event (its TTL is 60s) and drops the history
      clock.advance(120_000);
      store.compact(0);
      assert.deepEqual((await store.list(EventType)).items, []);
      assert.deepEqual(rawValues(path, 'events').length, 0);
    } finally {
      await store.close();
    }
  });
});

test('encryption at rest: key rotation as upstream (new key first, rewrite, drop the old key)', async () => {
  await withDir(async (path) => {
    let store = openSqliteStore({ path, encryption: encryption(gcm('key1', key1)) });
    await store.create(SecretType, tlsSecret('old'));
    await store.close();

    store = openSqliteStore({ path, encryption: encryption(`${gcm('key2', key2)}\n${gcm('key1', key1)}`) });
    try {
      const old = await store.get<Secret>(SecretType, 'default', 'old');
      assert.equal(old?.data?.['tls.key'], keyB64);
      await store.create(SecretType, tlsSecret('new'));
      assertEncrypted(rawValues(path, 'secrets', 'new'), 'k8s:enc:aesgcm:v1:key2:');
      assertEncrypted(rawValues(path, 'secrets', 'old'), 'k8s:enc:aesgcm:v1:key1:');
      // `kubectl replace` of an unchanged Secret: a new revision, under the new key
      const replaced = await store.update(SecretType, old!);
      assert.notEqual(replaced.metadata.resourceVersion, old!.metadata.resourceVersion);
      assertEncrypted(rawValues(path, 'secrets', 'old').slice(-1), 'k8s:enc:aesgcm:v1:key2:');
      // once under the first key, an unchanged update is a no-op again
      const again = await store.update(SecretType, replaced);
      assert.equal(again.metadata.resourceVersion, replaced.metadata.resourceVersion);
    } finally {
      await store.close();
    }
  });
});

test('encryption at rest: a row under a key that is no longer configured fails, naming the key', async () => {
  await withDir(async (path) => {
    let store = openSqliteStore({ path, encryption: encryption(gcm('key1', key1)) });
    await store.create(SecretType, tlsSecret('old'));
    await store.close();

    store = openSqliteStore({ path, encryption: encryption(gcm('key2', key2)) });
    try {
      const named = (e: Error) => {
        assert.match(e.message, /secrets default\/old is encrypted with aesgcm key "key1", which the encryption configuration does not have/);
        assert.ok(!e.message.includes(key1) && !e.message.includes(key2));
        return true;
      };
      await assert.rejects(store.get(SecretType, 'default', 'old'), named);
      await assert.rejects(store.list(SecretType), named);
      // same name, other material: the read fails rather than returning garbage
      await store.close();
      store = openSqliteStore({ path, encryption: encryption(gcm('key1', key2)) });
      await assert.rejects(store.get(SecretType, 'default', 'old'), /secrets default\/old could not be decrypted with aesgcm key "key1"/);
    } finally {
      await store.close();
    }
  });
});

test('encryption at rest: identity first reads encrypted rows and writes plain; plain rows need identity listed', async () => {
  await withDir(async (path) => {
    let store = openSqliteStore({ path, encryption: encryption(cbc('key1', key1)) });
    await store.create(SecretType, tlsSecret('encrypted'));
    await store.close();

    store = openSqliteStore({ path, encryption: encryption(`- identity: {}\n${cbc('key1', key1)}`) });
    try {
      assert.equal((await store.get<Secret>(SecretType, 'default', 'encrypted'))?.data?.['tls.key'], keyB64);
      await store.create(SecretType, tlsSecret('plain'));
      const [plain] = rawValues(path, 'secrets', 'plain');
      assert.equal(typeof plain, 'string');
      assert.ok((plain as string).includes(keyB64));
      // decrypting is undoing: replacing the encrypted Secret stores it plain
      const cur = await store.get<Secret>(SecretType, 'default', 'encrypted');
      await store.update(SecretType, cur!);
      assert.equal(typeof rawValues(path, 'secrets', 'encrypted').at(-1), 'string');
    } finally {
      await store.close();
    }

    store = openSqliteStore({ path, encryption: encryption(cbc('key1', key1)) });
    try {
      await assert.rejects(store.get(SecretType, 'default', 'plain'), /secrets default\/plain is stored unencrypted, and the encryption configuration for secrets has no identity provider/);
    } finally {
      await store.close();
    }
  });
});

runStoreConformance('sqlite file, every resource encrypted (aesgcm)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-enc-conf-'));
  const everything = resourceTypes.map((t) => (t.group ? `${t.plural}.${t.group}` : t.plural)).join(', ');
  const store = openSqliteStore({ path: join(dir, 'store.db'), encryption: encryption(gcm('key1', key1), everything) });
  return {
    store,
    compact: async () => void store.compact(0),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
