// --backoff-initial and --backoff-max follow cert-manager's flag rules on both commands that run
// the controllers: 0 takes the default, a negative value or a maximum below the initial delay
// is refused before anything starts, with the flag named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../test/e2e/harness.ts';
import { controllerOptionsFrom, type ControllerFlags } from './server.ts';

const certsmithBin = fileURLToPath(new URL('../../test/rig/certsmith-source.mjs', import.meta.url));
const HOUR = 3_600_000;

const flags = (over: Partial<ControllerFlags>): ControllerFlags => ({
  autoApprove: true, metricsListen: '127.0.0.1:0', healthListen: '127.0.0.1:0', clusterResourceNamespace: 'cert-manager',
  ingressShim: true, defaultIssuerKind: 'Issuer', defaultIssuerGroup: 'cert-manager.io', autoCertificateAnnotations: 'kubernetes.io/tls-acme',
  caInjector: true, ...over,
});

test('backoff flags: absent or 0 take the defaults (1h, 32h); given values pass through', () => {
  for (const given of [{}, { backoffInitial: '0s', backoffMax: '0' }, { backoffInitial: '0' }]) {
    const o = controllerOptionsFrom(flags(given));
    assert.equal(o.backoffInitialMs, HOUR, JSON.stringify(given));
    assert.equal(o.backoffMaxMs, 32 * HOUR, JSON.stringify(given));
  }
  const o = controllerOptionsFrom(flags({ backoffInitial: '5m', backoffMax: '2h' }));
  assert.deepEqual([o.backoffInitialMs, o.backoffMaxMs], [5 * 60_000, 2 * HOUR]);
  // 0 for the maximum takes its default even when the initial delay is given
  assert.equal(controllerOptionsFrom(flags({ backoffInitial: '2h', backoffMax: '0s' })).backoffMaxMs, 32 * HOUR);
});

const cases: Array<{ name: string; args: string[]; message: RegExp }> = [
  { name: 'negative initial', args: ['--backoff-initial=-1h'], message: /--backoff-initial "-1h": must not be negative/ },
  { name: 'negative max', args: ['--backoff-max', '-5m'], message: /--backoff-max "-5m": must not be negative/ },
  { name: 'max below initial', args: ['--backoff-initial', '2h', '--backoff-max', '30m'], message: /--backoff-max "30m" must not be shorter than --backoff-initial "2h"/ },
  { name: 'max below the default initial', args: ['--backoff-max', '30m'], message: /--backoff-max "30m" must not be shorter than --backoff-initial \(default 1h\)/ },
];

for (const command of ['server', 'controller']) {
  for (const c of cases) {
    test(`certsmith ${command}: ${c.name} is refused, naming the flag, before anything starts`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'certsmith-backoff-flags-'));
      try {
        const where = command === 'server'
          ? ['--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0']
          : ['--kubeconfig', join(dir, 'no-such-kubeconfig')];
        const r = await run(process.execPath, [certsmithBin, command, ...where, '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0', ...c.args], { timeoutMs: 30_000 });
        assert.notEqual(r.code, 0, r.stdout);
        assert.match(r.stderr, c.message);
        // nothing was started or created
        assert.doesNotMatch(r.stdout, /listening|running/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}

test('ambient credential flags as cert-manager spells them: ClusterIssuers on, Issuers off by default; =false/=true and bare', async () => {
  const o = controllerOptionsFrom(flags({}));
  assert.deepEqual([o.clusterIssuerAmbientCredentials, o.issuerAmbientCredentials], [true, false]);
  const turned = controllerOptionsFrom(flags({ clusterIssuerAmbientCredentials: false, issuerAmbientCredentials: true }));
  assert.deepEqual([turned.clusterIssuerAmbientCredentials, turned.issuerAmbientCredentials], [false, true]);
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-ambient-'));
  try {
    const bad = await run(process.execPath, [certsmithBin, 'server', '--data-dir', dir, '--issuer-ambient-credentials=maybe'], { timeoutMs: 30_000 });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--issuer-ambient-credentials: "maybe" is not true or false/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
