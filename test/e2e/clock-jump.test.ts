// A host that sleeps: while a laptop, a VM whose host paused it, or an edge box is suspended, the
// wall clock moves on but the monotonic clock Node's timers run on does not; a box without a
// real-time clock (a Raspberry Pi) starts with a stale wall clock that NTP then steps forward by
// days. In each case the renewals that fell due meanwhile must happen at once, not a suspend's
// length later (with 6-day certificates that is after they expired).
// The server runs under libfaketime (Debian's faketime) with only the wall clock faked, moved
// forward by rewriting its offset file, so its monotonic clock sees none of the jump.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isReady, startServer, waitFor } from './harness.ts';

const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1'].find(existsSync);

interface Crt { status?: { conditions?: { type: string; status: string }[]; revision?: number; renewalTime?: string; notAfter?: string } }

const manifest = `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: selfsigned }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ca, namespace: default }
spec: { isCA: true, commonName: jump CA, secretName: ca, duration: 8760h, privateKey: { algorithm: ECDSA }, issuerRef: { name: selfsigned, kind: ClusterIssuer } }
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: { name: ca, namespace: default }
spec: { ca: { secretName: ca } }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: short, namespace: default }
spec: { secretName: short-tls, dnsNames: [short.example.test], duration: 1h, renewBefore: 30m, privateKey: { algorithm: ECDSA }, issuerRef: { name: ca } }
`;

test('the wall clock jumps past a renewal time (suspend and resume, NTP step): the Certificate is renewed within a minute', async () => {
  assert.ok(LIBFAKETIME, 'libfaketime is not installed (test/provision.sh installs Debian\'s faketime)');
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-clock-jump-'));
  const offsetFile = join(dir, 'faketime');
  writeFileSync(offsetFile, '+0\n');
  const s = await startServer({
    env: {
      LD_PRELOAD: LIBFAKETIME, FAKETIME_TIMESTAMP_FILE: offsetFile, FAKETIME_DONT_FAKE_MONOTONIC: '1',
      // the offset file is read again at most every second
      FAKETIME_CACHE_DURATION: '1',
    },
  });
  try {
    assert.equal((await s.cli(['apply', '-f', '-'], { input: manifest })).code, 0);
    const get = async () => JSON.parse((await s.cli(['get', 'certificate', 'short', '-o', 'json'])).stdout) as Crt;
    const first = await waitFor('the 1h Certificate Ready', async () => { const c = await get(); return isReady(c) && c.status?.revision === 1 && c; });
    assert.ok(first.status?.renewalTime);

    // 45 minutes pass on the wall clock in no time on the monotonic one: the renewal (at 30 minutes) is due
    writeFileSync(offsetFile, '+45m\n');
    const t0 = Date.now();
    const renewed = await waitFor('the Certificate renewed after the jump', async () => { const c = await get(); return (c.status?.revision ?? 0) >= 2 && isReady(c) && c; }, 75_000, 1000);
    const seconds = (Date.now() - t0) / 1000;
    console.log(`renewed ${seconds.toFixed(1)} s after the wall clock jumped 45 minutes`);
    assert.ok(seconds < 70, `renewed ${seconds} s after the jump`);
    assert.ok(new Date(renewed.status!.notAfter!).getTime() > new Date(first.status!.notAfter!).getTime() + 40 * 60_000, 'the new certificate is dated from the jumped clock');
  } finally {
    await s.stop();
    s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
