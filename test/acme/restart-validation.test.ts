// Issue 20, case (1): `certsmith server` SIGKILLed between accepting an HTTP-01 challenge and
// the CA's validation (a Pebble whose VA sleeps 0-4 s first, behind the fault proxy). With the
// HTTP-01 keeper the token outlives the server; without it (in-process responder) the failed
// order is retried at once, bounded, and not counted as an issuance attempt.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import type { RunningServer } from '../e2e/harness.ts';
import { apply, assertNoAttemptCounted, events, killAndRestart, manifest, report, startCertsmith, stopKeeper, waitAllReady, type Target } from './restart-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const ACCEPT = { method: 'POST', path: /\/chalZ\//, withPayload: true };

describe('killed between challenge accept and validation', () => {
  let cts: ChallTestSrv;
  let slow: Pebble;
  let slowProxy: FaultProxy;
  let target: Target;
  const dirs: string[] = [];
  const servers: RunningServer[] = [];

  before(async () => {
    cts = await startChallTestSrv();
    target = { cts, httpPort: await freePort() };
    // Validation after a random 0-4 s sleep: time for a SIGKILL between accept and validation.
    slow = await startPebble({ dnsServer: cts.dnsServer, httpPort: target.httpPort, vaNoSleep: false, vaSleepTime: 5 });
    slowProxy = await startFaultProxy({ upstream: slow.directoryUrl, upstreamCaPem: slow.caPem });
  });
  after(async () => {
    for (const s of servers) s.kill();
    await Promise.all(servers.map((s) => s.stop()));
    if (target) await stopKeeper(target);
    await slowProxy?.stop();
    await Promise.all([slow?.stop(), cts?.stop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function done(s: RunningServer): Promise<void> {
    servers.splice(servers.indexOf(s), 1);
    await s.stop();
  }
  async function restart(s: RunningServer): Promise<RunningServer> {
    servers.splice(servers.indexOf(s), 1);
    const next = await killAndRestart(target, s);
    servers.push(next);
    return next;
  }

  async function killedWhileValidating(label: string, issuer: string, env: NodeJS.ProcessEnv) {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-restart-'));
    dirs.push(dir);
    let s = await startCertsmith(target, dir, env);
    servers.push(s);
    const certs = [1, 2, 3].map((i) => ({ name: `${issuer}-${i}`, dnsName: `${issuer}-${i}-${uniq()}.example.test` }));
    const fault = slowProxy.hold(ACCEPT);
    await apply(s, manifest(issuer, slowProxy, certs));
    await fault.hit;
    // The CA has the accept; certsmith gets the answer, records it, and dies while the VA sleeps (0-4 s).
    fault.release();
    await new Promise((r) => setTimeout(r, 100));
    s = await restart(s);
    const ready = await waitAllReady(s, certs.map((c) => c.name), 90_000);
    assertNoAttemptCounted(ready);
    const r = await report(label, s, slowProxy, issuer, certs.map((c) => c.dnsName));
    const retried = (await events(s)).filter((e) => (e.reason === 'OrderRetried' || e.reason === 'SolverUnavailable') && e.message?.includes(issuer));
    console.log(`[${label}] retry events: ${retried.map((e) => `${e.reason}: ${e.message}`).join(' | ').slice(0, 600) || 'none'}`);
    await done(s);
    return r;
  }

  test('(1) killed between challenge accept and validation: the HTTP-01 keeper outlives the server, the CA finds the token', async () => {
    const r = await killedWhileValidating('killed between accept and validation, keeper', 'slow', {});
    assert.equal(r.mean, 1, 'one newOrder per certificate');
    assert.equal(r.atCA.invalid ?? 0, 0, 'no order left invalid');
  });

  test('(1b) the same without the keeper (in-process responder): the failed order is retried at once, not counted', async () => {
    const r = await killedWhileValidating('killed between accept and validation, no keeper', 'nokeeper', { CERTSMITH_HTTP01_KEEPER: '0' });
    for (const [name, n] of Object.entries(r.perName)) assert.ok(n >= 1 && n <= 3, `${name}: ${n} newOrders, at most 1 + 2 retries`);
    assert.equal(r.atCA.invalid ?? 0, Object.values(r.perName).reduce((a, n) => a + n - 1, 0), 'only retried orders are invalid');
  });

});
