// Issue 12 in the files controller, among all the others on the embedded store: which
// Certificates are mirrored (certsmith.io/mirror-files, CAs not by default), slow deploy hooks
// that must not hold back other Certificates' files, a stop that kills running hooks, and
// failures under the secrets dir that a user sees as Warning Events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLifecycle, withCA, certificate, condition, type Lifecycle } from '../../../test/lifecycle/harness.ts';
import { startControllers } from '../manager.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { EventType } from '../../api/resources.ts';
import type { CoreEvent } from '../../runtime/events.ts';
import { FILES_CONDITION } from './controller.ts';
import { processGone, pollUntil } from '../../../test/rig/processes.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';

const ecdsa = { algorithm: 'ECDSA' };

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'certsmith-files-hardening-'));
}

async function events(lc: Lifecycle, name: string, reason: string): Promise<CoreEvent[]> {
  const all = (await lc.store.list<CoreEvent>(EventType, { namespace: 'default' })).items;
  return all.filter((e) => e.involvedObject.name === name && e.reason === reason);
}



test('CA Certificates are not mirrored unless asked; certsmith.io/mirror-files: "false" opts out and removes what was mirrored', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir } });
  try {
    await withCA(lc);
    assert.equal(existsSync(join(dir, 'default', 'ca-keypair')), false, 'the CA\'s key is not handed to the files owner');
    await lc.apply(certificate('inter', { isCA: true, commonName: 'intermediate', privateKey: ecdsa }));
    await lc.apply({ ...certificate('inter2', { isCA: true, commonName: 'intermediate 2', privateKey: ecdsa }), metadata: { name: 'inter2', namespace: 'default', annotations: { [CertificateAnnotation.mirrorFiles]: 'true' } } });
    await lc.apply({ ...certificate('hidden', { dnsNames: ['hidden.example.test'], privateKey: ecdsa }), metadata: { name: 'hidden', namespace: 'default', annotations: { [CertificateAnnotation.mirrorFiles]: 'false' } } });
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], privateKey: ecdsa }));
    await lc.settle();
    assert.equal(condition(await lc.certificate('inter'), 'Ready')?.status, 'True');
    assert.equal(existsSync(join(dir, 'default', 'inter-tls')), false, 'a CA is not mirrored by default');
    assert.ok(existsSync(join(dir, 'default', 'inter2-tls', 'tls.key')), 'a CA annotated "true" is');
    assert.equal(existsSync(join(dir, 'default', 'hidden-tls')), false, 'an opted-out Certificate is not');
    assert.ok(existsSync(join(dir, 'default', 'web-tls', 'tls.key')));

    // opting out later removes the files already there
    const web = await lc.certificate('web');
    await lc.apply({ ...web, metadata: { ...web.metadata, annotations: { [CertificateAnnotation.mirrorFiles]: 'false' } } });
    await lc.settle();
    assert.equal(existsSync(join(dir, 'default', 'web-tls')), false);
    assert.equal(existsSync(join(dir, 'default', '.web-tls.versions')), false);
    assert.ok(existsSync(join(dir, 'default', 'inter2-tls', 'tls.key')), 'others stay');
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('with keepFiles, opting out leaves the files there', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir, keepFiles: true } });
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], privateKey: ecdsa }));
    await lc.settle();
    const web = await lc.certificate('web');
    await lc.apply({ ...web, metadata: { ...web.metadata, annotations: { [CertificateAnnotation.mirrorFiles]: 'false' } } });
    await lc.settle();
    assert.ok(existsSync(join(dir, 'default', 'web-tls', 'tls.key')));
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('slow deploy hooks do not hold back other Certificates\' files', { timeout: 90_000 }, async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const gate = join(root, 'gate');
  const log = join(root, 'log');
  // every "slow-*" hook waits for the gate: more of them than the files controller has workers
  const hook = `echo "start $CERTSMITH_CERTIFICATE_NAME" >> ${log}; case "$CERTSMITH_CERTIFICATE_NAME" in slow-*) while [ ! -e ${gate} ]; do sleep 0.05; done;; esac; echo "end $CERTSMITH_CERTIFICATE_NAME" >> ${log}`;
  const lc = await startLifecycle({ options: { secretsDir: dir, deployHook: hook } });
  try {
    await withCA(lc);
    const slow = ['slow-1', 'slow-2', 'slow-3', 'slow-4', 'slow-5'];
    for (const n of slow) await lc.apply(certificate(n, { dnsNames: [`${n}.example.test`], privateKey: ecdsa }));
    await pollUntil('the slow Certificates\' files', () => slow.every((n) => existsSync(join(dir, 'default', `${n}-tls`, 'tls.key'))), 15_000);
    await pollUntil('slow hooks running', () => existsSync(log) && readFileSync(log, 'utf8').includes('start slow-'), 15_000);
    // while those hooks hang, another Certificate's files still go live
    await lc.apply(certificate('fast', { dnsNames: ['fast.example.test'], privateKey: ecdsa }));
    await pollUntil('the fast Certificate\'s files while slow hooks hang', () => existsSync(join(dir, 'default', 'fast-tls', 'tls.key')), 20_000);
    assert.doesNotMatch(readFileSync(log, 'utf8'), /end slow-/, 'the slow hooks were still hanging');

    writeFileSync(gate, '');
    await lc.settle();
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    for (const n of [...slow, 'fast']) assert.equal(lines.filter((l) => l === `end ${n}`).length, 1, n);
  } finally {
    writeFileSync(gate, '');
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('stopping the controllers kills a running hook\'s process group; the hook runs again at the next start', { timeout: 90_000 }, async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const pidFile = join(root, 'child.pid');
  const runs = join(root, 'runs');
  const hook = `echo "$CERTSMITH_CERTIFICATE_NAME $CERTSMITH_REVISION" >> ${runs}; if [ ! -e ${pidFile} ]; then sleep 300 & echo $! > ${pidFile}; wait; fi`;
  const lc = await startLifecycle({ options: { secretsDir: dir, deployHook: hook } });
  try {
    await withCA(lc);
    await lc.apply(certificate('web', { dnsNames: ['web.example.test'], privateKey: ecdsa }));
    await pollUntil('the hook\'s child', () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')) > 0, 15_000);
    const child = Number(readFileSync(pidFile, 'utf8'));
    const started = Date.now();
    const stopped = await Promise.race([
      lc.running.stop().then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 20_000).unref()),
    ]);
    assert.equal(stopped, true, 'stop did not wait for the hook');
    assert.ok(Date.now() - started < 15_000);
    await pollUntil('the hook\'s child to be gone', () => processGone(child), 5_000);

    lc.running = await startControllers({ store: lc.store, clock: lc.clock, logger: silentLogger, options: { metricsListen: '', healthListen: '', secretsDir: dir, deployHook: hook } });
    await lc.settle();
    assert.deepEqual(readFileSync(runs, 'utf8').trim().split('\n'), ['web 1', 'web 1'], 'the interrupted hook ran again');
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('failures under the secrets dir are Warning Events on the Certificate, which stays Ready', async () => {
  const root = tmp();
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir } });
  try {
    await withCA(lc);
    // a valid Secret name (253 characters) is too long for a file name with ".versions"
    const long = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
    assert.equal(long.length, 253);
    await lc.apply(certificate('long', { secretName: long, dnsNames: ['long.example.test'], privateKey: ecdsa }));
    // a namespace folder that is a symlink is refused, not followed
    mkdirSync(join(root, 'elsewhere'));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    symlinkSync(join(root, 'elsewhere'), join(dir, 'other'));
    await lc.apply(certificate('moved', { dnsNames: ['moved.example.test'], privateKey: ecdsa, issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer', group: 'cert-manager.io' } }, 'other'));
    await lc.settle();

    assert.equal(condition(await lc.certificate('long'), 'Ready')?.status, 'True', 'the Secret is fine');
    const mirrored = condition(await lc.certificate('long'), FILES_CONDITION) as { status: string; reason?: string; message?: string } | undefined;
    assert.equal(mirrored?.status, 'False', 'and the Certificate says what the user must fix');
    assert.equal(mirrored?.reason, 'FilesPublishFailed');
    assert.match(mirrored?.message ?? '', /ENAMETOOLONG/);
    const failed = await events(lc, 'long', 'FilesPublishFailed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].type, 'Warning');
    assert.match(failed[0].message, /Files under --secrets-dir not written: ENAMETOOLONG .*the Secret name is too long for a file name/);
    assert.doesNotMatch(failed[0].message, /PRIVATE KEY|\/proc\/self/);

    const all = (await lc.store.list<CoreEvent>(EventType, { namespace: 'other' })).items;
    const refused = all.filter((e) => e.involvedObject.name === 'moved' && e.reason === 'FilesPublishFailed');
    assert.equal(refused.length, 1);
    assert.match(refused[0].message, /refusing .*live\/other: it is a symlink/);
    assert.equal(condition(await lc.certificate('moved', 'other'), FILES_CONDITION)?.status, 'False');

    // fixed by the user: the retry writes the files and the condition goes
    rmSync(join(dir, 'other'));
    await lc.advance(10_000);
    assert.ok(existsSync(join(dir, 'other', 'moved-tls', 'tls.key')));
    assert.equal(readdirSync(join(root, 'elsewhere')).length, 0, 'nothing was ever written through the symlink');
    assert.equal(condition(await lc.certificate('moved', 'other'), FILES_CONDITION), undefined);
    assert.equal(condition(await lc.certificate('moved', 'other'), 'Ready')?.status, 'True');
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
