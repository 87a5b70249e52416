// The restart rig's failure message says what a not-Ready certificate waits for (issue 20: a
// restart-batch failure said only "not Ready" and its status): its requests, Orders and
// Challenges with their annotations (which server accepted, when, why it failed), its Events, and
// the output tail of the last server and of the ones killed before it. Pebble validates HTTP-01
// on a port where nothing listens, so the certificate cannot become Ready.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { apply, killAndRestart, manifest, startCertsmith, stopKeeper, waitAllReady, type Target } from './restart-rig.ts';

let cts: ChallTestSrv;
let pebble: Pebble;
let proxy: FaultProxy;
let target: Target;
let s: RunningServer | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'certsmith-rig-diagnostics-'));

before(async () => {
  cts = await startChallTestSrv();
  target = { cts, httpPort: await freePort() };
  // the CA looks for the token where nothing listens: the validation fails with connection refused
  pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
  proxy = await startFaultProxy({ upstream: pebble.directoryUrl, upstreamCaPem: pebble.caPem });
});
after(async () => {
  s?.kill();
  await s?.stop();
  if (target) await stopKeeper(target);
  await proxy?.stop();
  await Promise.all([pebble?.stop(), cts?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

test('waitAllReady fails with the Certificate\'s requests, Orders, Challenges, Events and every server\'s output tail', async () => {
  s = await startCertsmith(target, dataDir);
  await apply(s, manifest('diag', proxy, [{ name: 'diag', dnsName: `diag-${crypto.randomBytes(3).toString('hex')}.example.test` }]));
  s = await killAndRestart(target, s);
  // long enough for the restarted server to accept the challenge and see it fail
  const deadline = Date.now() + 30_000;
  while (!proxy.exchanges.some((x) => /\/chalZ\//.test(x.path) && x.payload) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 3000));
  const failure = await waitAllReady(s, ['diag'], 100).then(() => undefined, (e: Error) => e.message);
  assert.ok(failure, 'the certificate cannot be Ready');
  console.log(failure); // what a real failure would show
  assert.match(failure, /not Ready after 100 ms: diag\n/);
  assert.match(failure, /== Certificate diag: /);
  assert.match(failure, /-- CertificateRequests: \[\{"name":"diag-/);
  assert.match(failure, /-- Orders: \[\{"name":"diag-/);
  assert.doesNotMatch(failure, /"request":"LS0t/, 'not the CSR');
  assert.match(failure, /-- Challenges: \[\{"name":"diag-[^\n]*acme\.certsmith\.io\/accepted-by/, 'which server accepted the challenge');
  assert.match(failure, /-- Events:\n.*Challenge\/diag-/);
  assert.match(failure, /== servers on this data dir \(a Challenge's accepted-at says which one accepted it\): 1: ready [^;]+, SIGKILL [^;]+; 2: ready [^;]+, running/);
  assert.match(failure, /== output of server 1 \(killed\), last 2000 chars:/);
  assert.match(failure, /== output of the last server \(2\), last 6000 chars:/);
});
