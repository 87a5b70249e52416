// Readers in other threads, reading the live files as fast as they can while the Certificate
// is renewed 50 times with a new key each time: none may ever see a key from one issuance
// with a certificate from another, or a partly written tls-combined.pem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLifecycle, withCA, certificate } from '../../../test/lifecycle/harness.ts';
import { triggerRenewal } from '../../cli/renew.ts';

interface ReaderReport {
  passes: number;
  mismatches: number;
  torn: number;
  /** a version pruned between resolving the link and reading: not a mismatch, but counted */
  vanished: number;
  serials: number;
  firstProblem?: string;
}

// Plain JavaScript with node:crypto only, so the thread does not need the TypeScript loader.
const READER = `
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { live, mode, stop } = workerData;
const flag = new Int32Array(stop);
const spki = (k) => crypto.createPublicKey(k).export({ type: 'spki', format: 'der' }).toString('hex');
const blocks = (text) => [...text.matchAll(/-----BEGIN ([A-Z ]+)-----\\n[\\s\\S]*?-----END \\1-----\\n?/g)];
const r = { passes: 0, mismatches: 0, torn: 0, vanished: 0, serials: 0 };
const serials = new Set();
const problem = (m) => { if (!r.firstProblem) r.firstProblem = m; };
// a short nap per pass leaves the (shared, two-core) CPU to the controllers being tested
while (Atomics.wait(flag, 0, 0, 0.2) === 'timed-out') {
  let crtPem, keyPem;
  try {
    if (mode === 'pair') {
      const dir = fs.realpathSync(live);
      crtPem = fs.readFileSync(path.join(dir, 'tls.crt'), 'utf8');
      keyPem = fs.readFileSync(path.join(dir, 'tls.key'), 'utf8');
    } else {
      const text = fs.readFileSync(path.join(live, 'tls-combined.pem'), 'utf8');
      const b = blocks(text);
      const keys = b.filter((m) => m[1].endsWith('PRIVATE KEY'));
      const certs = b.filter((m) => m[1] === 'CERTIFICATE');
      if (keys.length !== 1 || certs.length < 1 || b.map((m) => m[0]).join('').replace(/\\s/g, '') !== text.replace(/\\s/g, '')) {
        r.torn++; problem('torn combined file: ' + text.length + ' bytes'); r.passes++; continue;
      }
      keyPem = keys[0][0]; crtPem = certs.map((m) => m[0]).join('');
    }
  } catch (e) {
    if (e.code === 'ENOENT') { r.vanished++; continue; }
    throw e;
  }
  r.passes++;
  try {
    const cert = new crypto.X509Certificate(crtPem);
    serials.add(cert.serialNumber);
    if (cert.publicKey.export({ type: 'spki', format: 'der' }).toString('hex') !== spki(keyPem)) { r.mismatches++; problem('key does not match certificate ' + cert.serialNumber); }
  } catch (e) {
    // a half-written file does not decode
    r.torn++; problem('does not decode: ' + e.message);
  }
}
r.serials = serials.size;
parentPort.postMessage(r);
`;

function startReader(live: string, mode: 'pair' | 'combined', stop: SharedArrayBuffer): Promise<ReaderReport> {
  const w = new Worker(READER, { eval: true, workerData: { live, mode, stop } });
  return new Promise((resolve, reject) => {
    w.once('message', (m: ReaderReport) => resolve(m));
    w.once('error', reject);
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`reader exited with ${code}`)); });
  });
}

test('50 renewals with key rotation: concurrent readers never see a mismatched or torn pair', async () => {
  const root = mkdtempSync(join(tmpdir(), 'certsmith-atomic-'));
  const dir = join(root, 'live');
  const lc = await startLifecycle({ options: { secretsDir: dir } });
  try {
    await withCA(lc);
    await lc.apply(certificate('web', {
      dnsNames: ['web.example.test'], privateKey: { algorithm: 'ECDSA', rotationPolicy: 'Always' },
      additionalOutputFormats: [{ type: 'CombinedPEM' }],
    }));
    await lc.settle();
    const live = join(dir, 'default', 'web-tls');
    const stop = new SharedArrayBuffer(4);
    const readers = [startReader(live, 'pair', stop), startReader(live, 'combined', stop)];
    for (let i = 0; i < 50; i++) {
      lc.clock.advance(1000);
      await triggerRenewal(lc.store, 'default', 'web', lc.clock.now());
      await lc.settle();
    }
    Atomics.store(new Int32Array(stop), 0, 1);
    const [pair, combined] = await Promise.all(readers);
    if (process.env.CERTSMITH_TEST_VERBOSE) console.log({ pair, combined });
    const crt = await lc.certificate('web');
    assert.equal(crt.status?.revision, 51);

    for (const [what, r] of [['tls.crt + tls.key', pair], ['tls-combined.pem', combined]] as const) {
      assert.equal(r.mismatches, 0, `${what}: ${r.firstProblem}`);
      assert.equal(r.torn, 0, `${what}: ${r.firstProblem}`);
      assert.ok(r.passes >= 300, `${what}: only ${r.passes} reads`);
      // the readers really ran across renewals, not against one version
      assert.ok(r.serials >= 25, `${what}: saw ${r.serials} certificates`);
      // three versions are kept, so a reader would have to stall across two renewals
      assert.ok(r.vanished <= r.passes / 100, `${what}: ${r.vanished} reads found their version pruned`);
    }
  } finally {
    await lc.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
