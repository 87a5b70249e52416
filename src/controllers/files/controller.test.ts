// The files controller among all the others on the embedded store with a fake clock: files as
// a web server reads them, the deploy hook as an operator configures it, and openssl judging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLifecycle, withCA, certificate, type Lifecycle } from '../../../test/lifecycle/harness.ts';
import { triggerRenewal } from '../../cli/renew.ts';
import { startControllers } from '../manager.ts';
import { type ControllerOptions } from '../../shared/controller-options.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { Certificate, EventType, SecretType } from '../../api/resources.ts';
import type { Secret } from '../../api/meta.ts';
import type { CoreEvent } from '../../runtime/events.ts';

const MINUTE = 60_000;

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'certsmith-files-'));
}

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** verified at the fake clock's time: the certificates are issued in its (possibly past) world */
function assertServable(lc: Lifecycle, dir: string) {
  const at = String(Math.floor(lc.clock.now().getTime() / 1000));
  assert.match(openssl(['verify', '-attime', at, '-CAfile', join(dir, 'ca.crt'), join(dir, 'fullchain.pem')]), /: OK/);
  const certPub = openssl(['x509', '-noout', '-pubkey', '-in', join(dir, 'tls.crt')]);
  assert.equal(openssl(['pkey', '-in', join(dir, 'tls.key'), '-pubout']), certPub, 'tls.key matches tls.crt');
  assert.equal(openssl(['pkey', '-in', join(dir, 'tls-combined.pem'), '-pubout']), certPub, 'key in tls-combined.pem matches');
  assert.equal(openssl(['x509', '-noout', '-pubkey', '-in', join(dir, 'tls-combined.pem')]), certPub, 'certificate in tls-combined.pem matches');
}

function serialOf(file: string): string {
  return openssl(['x509', '-noout', '-serial', '-in', file]).trim();
}

function envFile(path: string): Record<string, string> {
  return Object.fromEntries(readFileSync(path, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

async function events(lc: Lifecycle, name: string, reason: string): Promise<CoreEvent[]> {
  const all = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items;
  return all.filter((e) => e.involvedObject.name === name && e.reason === reason);
}

async function restart(lc: Lifecycle, options: ControllerOptions): Promise<void> {
  await lc.running.stop();
  lc.running = await startControllers({ store: lc.store, clock: lc.clock, logger: silentLogger, options: { metricsListen: '', healthListen: '', ...options } });
  await lc.settle();
}

test('issued files verify with openssl, renewal replaces them and runs the hook once, restart does not re-run it', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const hooks = join(root, 'hooks');
  const options: ControllerOptions = {
    secretsDir: dir,
    deployHook: `mkdir -p ${hooks} && env > "${hooks}/hook-$CERTSMITH_CERTIFICATE_NAME-$CERTSMITH_REVISION.env" && echo "$CERTSMITH_CERTIFICATE_NAME $CERTSMITH_REVISION" >> ${hooks}/runs`,
  };
  const lc = await startLifecycle({ options });
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test', 'www.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.settle();
    const live = join(dir, 'default', 'web-tls');
    assertServable(lc, live);
    assert.match(readlinkSync(live), /^\.web-tls\.versions\/1-[0-9a-f]{16}$/);
    // the CA's own Secret is not: its key would sign for anything (see the mirror-files tests)
    assert.equal(existsSync(join(dir, 'default', 'ca-keypair')), false);

    for (const d of [dir, join(dir, 'default'), join(dir, 'default', '.web-tls.versions'), live]) assert.equal(statSync(d).mode & 0o777, 0o700, d);
    for (const f of ['tls.key', 'privkey.pem', 'tls-combined.pem']) assert.equal(statSync(join(live, f)).mode & 0o777, 0o600, f);
    for (const f of ['tls.crt', 'fullchain.pem', 'ca.crt', 'cert.pem']) assert.equal(statSync(join(live, f)).mode & 0o777, 0o644, f);
    assert.equal(statSync(join(dir, '.hooks.json')).mode & 0o777, 0o600);

    const first = envFile(join(hooks, 'hook-web-1.env'));
    assert.equal(first.CERTSMITH_CERTIFICATE_NAME, 'web');
    assert.equal(first.CERTSMITH_SECRET_NAME, 'web-tls');
    assert.equal(first.CERTSMITH_NAMESPACE, 'default');
    assert.equal(first.CERTSMITH_KEY_PATH, join(live, 'tls.key'));
    const serial1 = serialOf(join(live, 'tls.crt'));

    lc.clock.advance(MINUTE * 60);
    await triggerRenewal(lc.store, 'default', 'web', lc.clock.now());
    await lc.settle();
    assertServable(lc, live);
    assert.notEqual(serialOf(join(live, 'tls.crt')), serial1, 'renewal replaced the certificate');
    assert.match(readlinkSync(live), /^\.web-tls\.versions\/2-/);

    const second = envFile(join(hooks, 'hook-web-2.env'));
    assert.deepEqual(
      [second.CERTSMITH_CERTIFICATE_NAME, second.CERTSMITH_NAMESPACE, second.CERTSMITH_SECRET_NAME, second.CERTSMITH_REVISION],
      ['web', 'default', 'web-tls', '2'],
    );
    assert.equal(second.CERTSMITH_CERT_PATH, join(live, 'tls.crt'));
    assert.equal(second.CERTSMITH_KEY_PATH, join(live, 'tls.key'));
    assert.equal(second.CERTSMITH_FULLCHAIN_PATH, join(live, 'fullchain.pem'));
    assert.equal(second.CERTSMITH_CA_PATH, join(live, 'ca.crt'));
    assert.equal(second.CERTSMITH_COMBINED_PATH, join(live, 'tls-combined.pem'));
    assert.equal(second.CERTSMITH_DIR, live);
    assert.equal(second.RENEWED_LINEAGE, live);
    assert.equal(second.RENEWED_DOMAINS, 'web.example.test www.example.test');
    assert.deepEqual(second.CERTSMITH_KEY_PATH && readFileSync(second.CERTSMITH_KEY_PATH), readFileSync(join(live, 'privkey.pem')));
    const runs = () => readFileSync(join(hooks, 'runs'), 'utf8').trim().split('\n');
    assert.deepEqual(runs().sort(), ['web 1', 'web 2']);
    assert.deepEqual(readdirSync(hooks).filter((f) => f.endsWith('.env')).sort(), ['hook-web-1.env', 'hook-web-2.env']);
    assert.equal((await events(lc, 'web', 'DeployHookSucceeded')).length, 2);

    await restart(lc, options);
    assert.deepEqual(runs().sort(), ['web 1', 'web 2'], 'nothing new after a restart: the hook does not run again');
    assert.deepEqual(lc.mismatchedSecretVersions, []);
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('files laid out anew for the same certificate (an upgrade adds a file): written again, the hook not run again; after a crash before the hook, it runs', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const runsFile = join(root, 'runs');
  const options: ControllerOptions = { secretsDir: dir, deployHook: `echo "$CERTSMITH_CERTIFICATE_NAME $CERTSMITH_REVISION" >> ${runsFile}` };
  const lc = await startLifecycle({ options });
  const runs = () => readFileSync(runsFile, 'utf8').trim().split('\n');
  // the ledger as an older certsmith left it: the same revision, files that hashed otherwise
  const ledgerSays = (change: (r: { hash: string; revision?: number }) => void) => {
    const ledger = JSON.parse(readFileSync(join(dir, '.hooks.json'), 'utf8'));
    change(ledger['default/web-tls']);
    writeFileSync(join(dir, '.hooks.json'), JSON.stringify(ledger));
  };
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'] }));
    await lc.settle();
    assert.deepEqual(runs(), ['web 1']);

    await lc.running.stop();
    ledgerSays((r) => { r.hash = 'files-of-an-older-layout'; });
    await restart(lc, options);
    assert.deepEqual(runs(), ['web 1'], 'the same certificate and key: no reload of the web server');
    const current = JSON.parse(readFileSync(join(dir, '.hooks.json'), 'utf8'))['default/web-tls'];
    assert.notEqual(current.hash, 'files-of-an-older-layout', 'the ledger now names the files as they are');

    // killed after the files of revision 1 went live and before its hook ran: the ledger names revision 0's
    await lc.running.stop();
    ledgerSays((r) => { r.hash = 'files-of-revision-0'; r.revision = 0; });
    await restart(lc, options);
    assert.deepEqual(runs(), ['web 1', 'web 1'], 'the hook a crash interrupted runs at the restart');

    // ca.crt replaced by hand (another CA to trust, for a server that checks client certificates): the hook runs
    const secret = (await lc.store.get<Secret>(SecretType, 'default', 'web-tls'))!;
    await lc.store.update(SecretType, { ...secret, data: { ...secret.data, 'ca.crt': secret.data!['tls.crt'] } });
    await lc.settle();
    assert.deepEqual(runs(), ['web 1', 'web 1', 'web 1'], 'a new ca.crt is new material for the web server');
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a Certificate whose Secret holds a certificate about to be replaced (re-applied with another spec, secretName switched back) publishes no stale files and runs the hook once, for the new one', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const runsFile = join(root, 'runs');
  const lc = await startLifecycle({ options: { secretsDir: dir, deployHook: `echo "$CERTSMITH_CERTIFICATE_NAME $CERTSMITH_SECRET_NAME $CERTSMITH_REVISION $(openssl x509 -noout -ext subjectAltName -in "$CERTSMITH_CERT_PATH" | tail -n +2 | tr -d ' ')" >> ${runsFile}` } });
  const runs = () => (existsSync(runsFile) ? readFileSync(runsFile, 'utf8').trim().split('\n') : []);
  try {
    await withCA(lc);
    await lc.apply(certificate('c', { dnsNames: ['c.example.test'] }));
    await lc.settle();
    assert.deepEqual(runs(), ['c c-tls 1 DNS:c.example.test']);
    // deleted and re-applied with one more name: its kept Secret is for the old spec
    await lc.store.delete(Certificate, 'default', 'c');
    await lc.settle();
    await lc.apply(certificate('c', { dnsNames: ['c.example.test', 'c2.example.test'] }));
    await lc.settle();
    assert.deepEqual(runs(), ['c c-tls 1 DNS:c.example.test', 'c c-tls 1 DNS:c.example.test,DNS:c2.example.test'], 'no run for the stale certificate');

    // secretName moved away and back: c-tls still holds revision 1's certificate, the Certificate is at 2
    await lc.apply(certificate('c', { dnsNames: ['c.example.test', 'c2.example.test'], secretName: 'c2-tls' }));
    await lc.settle();
    await lc.apply(certificate('c', { dnsNames: ['c.example.test', 'c2.example.test'], secretName: 'c-tls' }));
    await lc.settle();
    const last = runs().slice(2);
    assert.deepEqual(last.map((l) => l.split(' ').slice(0, 3).join(' ')), ['c c2-tls 2', 'c c-tls 3'], JSON.stringify(runs()));
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a secretName changed away from a Secret its Certificate owns (--enable-certificate-owner-ref): the old files are kept while that Secret is, as without the flag, and go with it', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir, enableCertificateOwnerRef: true } });
  try {
    await withCA(lc);
    await lc.apply(certificate('a', { dnsNames: ['a.example.test'] }));
    await lc.settle();
    assert.ok(existsSync(join(dir, 'default', 'a-tls')));
    await lc.apply(certificate('a', { dnsNames: ['a.example.test'], secretName: 'a2-tls' }));
    await lc.settle();
    assert.ok(existsSync(join(dir, 'default', 'a2-tls')));
    assert.ok(await lc.store.get<Secret>(SecretType, 'default', 'a-tls'), 'the old Secret is kept, as cert-manager keeps it');
    assert.ok(existsSync(join(dir, 'default', 'a-tls', 'tls.key')), 'the old files stay while their Secret does: a server may still name them');
    await lc.store.delete(SecretType, 'default', 'a-tls');
    await lc.settle();
    assert.equal(existsSync(join(dir, 'default', 'a-tls')), false, 'and go with it: no Certificate claims them');
    assert.ok(existsSync(join(dir, 'default', 'a2-tls', 'tls.key')));
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

// A hung hook holds one of the two hook slots until it is killed: --deploy-hook-timeout lets a
// host whose reloads take a second free the slot sooner than the 5-minute default.
test('a hook that runs past the deploy hook timeout is killed and reported as timed out', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir, deployHook: 'sleep 30', deployHookTimeoutMs: 500 } });
  try {
    await withCA(lc);
    const t0 = Date.now();
    await lc.apply(certificate('hung', { dnsNames: ['hung.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.settle();
    const failed = await events(lc, 'hung', 'DeployHookFailed');
    assert.equal(failed.length, 1);
    assert.match(failed[0].message, /timed out/);
    assert.ok(Date.now() - t0 < 20_000, 'killed at the timeout, not after the sleep');
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a failing hook yields a Warning Event and retries with backoff; other Certificates go on meanwhile', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const log = join(root, 'log');
  const fixed = join(root, 'fixed');
  // "bad" fails slowly, so "good" has to be issued and hooked while bad's hook is still running
  const hook = `if [ "$CERTSMITH_CERTIFICATE_NAME" = bad ] && [ ! -e ${fixed} ]; then echo bad-start >> ${log}; sleep 1; echo bad-end >> ${log}; echo "reload failed"; exit 1; fi; echo "$CERTSMITH_CERTIFICATE_NAME" >> ${log}`;
  const lc = await startLifecycle({ options: { secretsDir: dir, deployHook: hook } });
  try {
    await withCA(lc);
    await lc.apply(certificate('bad', { dnsNames: ['bad.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.apply(certificate('good', { dnsNames: ['good.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.settle();
    const lines = () => readFileSync(log, 'utf8').trim().split('\n');
    assert.ok(lines().indexOf('good') >= 0 && lines().indexOf('good') < lines().indexOf('bad-end'), `good hooked while bad's hook ran: ${lines()}`);
    assertServable(lc, join(dir, 'default', 'good-tls'));
    assertServable(lc, join(dir, 'default', 'bad-tls'));

    const failed = await events(lc, 'bad', 'DeployHookFailed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].type, 'Warning');
    assert.match(failed[0].message, /exited with status 1 \(attempt 1, retrying in 1m0s\): reload failed/);
    assert.equal(lines().filter((l) => l === 'bad-start').length, 1);

    await lc.advance(59_000);
    assert.equal(lines().filter((l) => l === 'bad-start').length, 1, 'no retry before the backoff');
    await lc.advance(1_000);
    assert.equal(lines().filter((l) => l === 'bad-start').length, 2, 'retried after 1m');
    assert.match((await events(lc, 'bad', 'DeployHookFailed')).map((e) => e.message).join('\n'), /attempt 2, retrying in 2m0s/);

    writeFileSync(fixed, '');
    await lc.advance(2 * MINUTE);
    assert.equal(lines().filter((l) => l === 'bad').length, 1, 'succeeded once fixed');
    const ok = await events(lc, 'bad', 'DeployHookSucceeded');
    assert.equal(ok.length, 1);
    assert.equal(ok[0].type, 'Normal');
    await lc.advance(60 * MINUTE);
    assert.equal(lines().filter((l) => l === 'bad').length, 1, 'no more runs once it succeeded');
    assert.equal(lines().filter((l) => l === 'good').length, 1);
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

// cert-manager keeps a Certificate's Secret when the Certificate is deleted (without
// --enable-certificate-owner-ref), and what is served from it keeps working. Files removed with
// the Certificate broke a web server at its next reload for any site (Apache refuses to reload
// while one SSLCertificateFile is missing), so they go with the Secret.
test('deleting the Certificate keeps its files while its Secret stays; deleting the Secret removes them, unless keepFiles', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir } });
  try {
    await withCA(lc);
    await lc.apply(certificate('gone', { dnsNames: ['gone.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.apply(certificate('kept', { dnsNames: ['kept.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.settle();
    assert.ok(existsSync(join(dir, 'default', 'gone-tls', 'tls.key')));
    await lc.store.delete(Certificate, 'default', 'gone');
    await lc.settle();
    assert.ok(existsSync(join(dir, 'default', 'gone-tls', 'tls.key')), 'the Secret stays, so do its files');
    await lc.store.delete(SecretType, 'default', 'gone-tls');
    await lc.settle();
    assert.equal(existsSync(join(dir, 'default', 'gone-tls')), false);
    assert.equal(existsSync(join(dir, 'default', '.gone-tls.versions')), false);
    assert.ok(existsSync(join(dir, 'default', 'kept-tls', 'tls.key')), 'other files stay');

    // deleted while certsmith was down, with --keep-files: the files stay
    await lc.running.stop();
    await lc.store.delete(Certificate, 'default', 'kept');
    await restart(lc, { secretsDir: dir, keepFiles: true });
    assert.ok(existsSync(join(dir, 'default', 'kept-tls', 'tls.key')));
    // and without it too: files no Certificate claimed while certsmith ran are not its to remove
    // (a new, emptied or older store would otherwise take every key a web server uses)
    await restart(lc, { secretsDir: dir });
    assert.ok(existsSync(join(dir, 'default', 'kept-tls', 'tls.key')));
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a new or emptied store started on a secrets dir leaves the files it finds there; its own Certificates still get theirs', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const first = await startLifecycle({ options: { secretsDir: dir } });
  try {
    await withCA(first);
    await first.apply(certificate('web', { dnsNames: ['web.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await first.settle();
  } finally {
    await first.stop();
  }
  const key = readFileSync(join(dir, 'default', 'web-tls', 'tls.key'), 'utf8');
  // another data dir (a typo, a restore without the WAL, a 0-byte state.db): a store that knows nothing
  const fresh = await startLifecycle({ options: { secretsDir: dir } });
  try {
    await withCA(fresh);
    await fresh.apply(certificate('api', { dnsNames: ['api.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await fresh.settle();
    assert.equal(readFileSync(join(dir, 'default', 'web-tls', 'tls.key'), 'utf8'), key, 'the files found at start are left as they are');
    assert.ok(existsSync(join(dir, 'default', 'api-tls', 'tls.key')));
  } finally {
    await fresh.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a Secret whose key no longer fits its certificate (edited by hand) is not published: the files keep their pair, and the hook runs for the re-issued one only', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const runs = join(root, 'runs');
  const lc = await startLifecycle({ options: { secretsDir: dir, deployHook: `echo "$CERTSMITH_REVISION $(openssl x509 -noout -pubkey -in "$CERTSMITH_CERT_PATH" | openssl sha256 -r | cut -c1-16) $(openssl pkey -pubout -in "$CERTSMITH_KEY_PATH" | openssl sha256 -r | cut -c1-16)" >> ${runs}` } });
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await lc.settle();
    const live = join(dir, 'default', 'web-tls');
    assertServable(lc, live);
    const secret = (await lc.store.get<Secret>(SecretType, 'default', 'web-tls'))!;
    const other = openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    await lc.store.update(SecretType, { ...secret, data: { ...secret.data, 'tls.key': Buffer.from(other).toString('base64') } });
    await lc.settle();
    assertServable(lc, live);
    const lines = readFileSync(runs, 'utf8').trim().split('\n').map((l) => l.split(' '));
    for (const [revision, cert, key] of lines) assert.equal(cert, key, `the hook for revision ${revision} got a key that fits its certificate: ${JSON.stringify(lines)}`);
    assert.deepEqual(lines.map(([revision]) => revision), ['1', '2'], 'the hook ran for the first issuance and the re-issuance, nothing between');
    for (const v of readdirSync(join(dir, 'default', '.web-tls.versions'))) {
      const path = join(dir, 'default', '.web-tls.versions', v);
      assert.equal(openssl(['pkey', '-in', join(path, 'tls.key'), '-pubout']), openssl(['x509', '-noout', '-pubkey', '-in', join(path, 'tls.crt')]), `version ${v} holds a matching pair`);
    }
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a store restored from an older backup sends the files back to its older certificate, with a Warning naming both certificates', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const db = join(root, 'state.db');
  const backup = join(root, 'backup.db');
  const live = join(dir, 'default', 'web-tls');
  const first = await startLifecycle({ options: { secretsDir: dir }, storePath: db });
  try {
    await withCA(first);
    await first.apply(certificate('web', { dnsNames: ['web.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await first.settle();
  } finally {
    await first.stop();
  }
  copyFileSync(db, backup);
  const older = serialOf(join(live, 'tls.crt'));
  const second = await startLifecycle({ options: { secretsDir: dir }, storePath: db, start: '2026-01-02T00:00:00Z' });
  try {
    await triggerRenewal(second.store, 'default', 'web', second.clock.now());
    await second.settle();
    assert.deepEqual(await events(second, 'web', 'FilesRolledBack'), [], 'a renewal is no rollback');
  } finally {
    await second.stop();
  }
  const newer = serialOf(join(live, 'tls.crt'));
  assert.notEqual(newer, older);
  copyFileSync(backup, db);
  const restored = await startLifecycle({ options: { secretsDir: dir }, storePath: db, start: '2026-01-03T00:00:00Z' });
  try {
    await restored.settle();
    // the store is the source of truth: the files follow it, and say so loudly
    assert.equal(serialOf(join(live, 'tls.crt')), older);
    assertServable(restored, live);
    const warned = await events(restored, 'web', 'FilesRolledBack');
    assert.equal(warned.length, 1);
    assert.equal(warned[0].type, 'Warning');
    const hex = (s: string) => s.replace('serial=', '').toLowerCase();
    assert.ok(warned[0].message.toLowerCase().includes(hex(older)) && warned[0].message.toLowerCase().includes(hex(newer)), warned[0].message);
  } finally {
    await restored.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
