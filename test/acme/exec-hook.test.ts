// DNS-01 through the server's exec hooks: shell scripts that write the TXT value into
// pebble-challtestsrv (its /set-txt and /clear-txt management API), run with certbot's
// environment or lego's exec arguments; Pebble validates through challtestsrv for real.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { realClock } from '../../src/runtime/clock.ts';
import { Challenge, ClusterIssuer } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import { runHook } from '../../src/controllers/acme/solvers/dns01/exec-hook.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { makeTempDir, removeTempDir } from '../rig/processes.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

function script(dir: string, name: string, body: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\nset -eu\n${body}\n`, { mode: 0o755 });
  return p;
}

/** CERTBOT_* variables a hook run saw, from the files the scripts write (one per run). */
function runs(dir: string, prefix: string): Record<string, string>[] {
  return fs.readdirSync(dir).filter((f) => f.startsWith(prefix)).sort().map((f) => Object.fromEntries(
    fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])));
}

describe('DNS-01 exec hooks (certbot and lego conventions) into challtestsrv', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let dir: string;
  let lc: Lifecycle;

  async function startWith(options: Record<string, unknown>, expectReady = true) {
    await lc?.stop();
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [cts.dnsServer], dns01RecursiveNameserversOnly: true, dns01HookTimeoutMs: 20_000, ...options },
    });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [{
            dns01: {
              webhook: {
                groupName: 'certsmith.io', solverName: 'exec',
                // what a resource might try: ignored, only the server's flags choose programs
                config: { authHook: path.join(dir, 'evil.sh'), dns01AuthHook: path.join(dir, 'evil.sh'), command: `${path.join(dir, 'evil.sh')}` },
              },
            },
          }],
        },
      },
    });
    if (expectReady) await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  }

  before(async () => {
    cts = await startChallTestSrv();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() });
    dir = await makeTempDir('exec-hook');
    const api = cts.managementUrl;
    script(dir, 'evil.sh', `touch ${dir}/EVIL-RAN`);
    // what a user's certbot hook looks like: values from the environment, its own curl
    script(dir, 'auth.sh', [
      `env | grep '^CERTBOT_' > "${dir}/auth-$(date +%s%N)"`,
      `curl -sf -X POST -d "{\\"host\\":\\"_acme-challenge.$CERTBOT_DOMAIN.\\",\\"value\\":\\"$CERTBOT_VALIDATION\\"}" ${api}/set-txt`,
      'echo "record-id-for-$CERTBOT_DOMAIN"',
    ].join('\n'));
    script(dir, 'cleanup.sh', [
      `env | grep '^CERTBOT_' > "${dir}/cleanup-$(date +%s%N)"`,
      `curl -sf -X POST -d "{\\"host\\":\\"_acme-challenge.$CERTBOT_DOMAIN.\\"}" ${api}/clear-txt`,
    ].join('\n'));
    // lego's exec provider: "present|cleanup FQDN VALUE"
    script(dir, 'lego.sh', [
      `echo "$1 $2 $3" >> "${dir}/lego-calls"`,
      `case "$1" in present) curl -sf -X POST -d "{\\"host\\":\\"$2\\",\\"value\\":\\"$3\\"}" ${api}/set-txt ;;`,
      `  cleanup) curl -sf -X POST -d "{\\"host\\":\\"$2\\"}" ${api}/clear-txt ;; esac`,
    ].join('\n'));
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
    if (dir) await removeTempDir(dir);
  });

  test('certbot hooks: a three-name certificate is issued; the environment is exactly certbot\'s; nothing from the Issuer runs', async () => {
    await startWith({ dns01AuthHook: path.join(dir, 'auth.sh'), dns01CleanupHook: path.join(dir, 'cleanup.sh') });
    const names = [`a-${uniq()}.example.test`, `b-${uniq()}.example.test`, `c-${uniq()}.example.test`];
    await lc.apply(acmeCertificate('hook-two', names));
    await waitForReadyCertificate(lc, 'hook-two');
    const cleanups = await waitFor('every cleanup ran', async () => { const r = runs(dir, 'cleanup-'); return r.length === 3 ? r : undefined; }, async () => fs.readdirSync(dir));
    // one cleanup per auth, as certbot runs them, even though the controller may clean up twice
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(runs(dir, 'cleanup-').length, 3);
    const auths = runs(dir, 'auth-');
    assert.equal(auths.length, 3);
    // certbot 2.x (Debian's, certbot/_internal/plugins/manual.py) sets CERTBOT_TOKEN only for
    // HTTP-01 and removes it otherwise: a hook that tests for it must see a DNS-01 challenge
    const authKeys = ['CERTBOT_ALL_DOMAINS', 'CERTBOT_DOMAIN', 'CERTBOT_REMAINING_CHALLENGES', 'CERTBOT_VALIDATION'];
    for (const env of auths) {
      // `env` prints every variable set, an empty one too
      assert.deepEqual(Object.keys(env).sort(), authKeys);
      assert.ok(names.includes(env.CERTBOT_DOMAIN), env.CERTBOT_DOMAIN);
      assert.match(env.CERTBOT_VALIDATION, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(env.CERTBOT_ALL_DOMAINS.split(',').sort(), [...names].sort());
    }
    // certbot counts down, 2, 1, 0: hooks that wait for DNS propagation at 0 wait once (the
    // hooks ran at once, and each saw 2 when the count was of challenges not yet presented)
    assert.deepEqual(auths.map((e) => e.CERTBOT_REMAINING_CHALLENGES).sort(), ['0', '1', '2']);
    assert.deepEqual(auths.map((e) => e.CERTBOT_DOMAIN).sort(), [...names].sort());
    for (const env of cleanups) {
      assert.deepEqual(Object.keys(env).sort(), ['CERTBOT_AUTH_OUTPUT', ...authKeys].sort());
      assert.equal(env.CERTBOT_AUTH_OUTPUT, `record-id-for-${env.CERTBOT_DOMAIN}`);
      assert.equal(env.CERTBOT_VALIDATION, auths.find((a) => a.CERTBOT_DOMAIN === env.CERTBOT_DOMAIN)!.CERTBOT_VALIDATION);
    }
    assert.equal(fs.existsSync(path.join(dir, 'EVIL-RAN')), false, 'a program named in the Issuer ran');
  });

  test('lego exec convention: PATH present|cleanup FQDN VALUE', async () => {
    await startWith({ dns01Exec: path.join(dir, 'lego.sh') });
    const name = `l-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('hook-lego', [name]));
    await waitForReadyCertificate(lc, 'hook-lego');
    const calls = await waitFor('cleanup ran', async () => {
      const lines = fs.existsSync(path.join(dir, 'lego-calls')) ? fs.readFileSync(path.join(dir, 'lego-calls'), 'utf8').trim().split('\n') : [];
      return lines.length === 2 ? lines : undefined;
    });
    const [present, cleanup] = calls.map((l) => l.split(' '));
    assert.deepEqual(present.slice(0, 2), ['present', `_acme-challenge.${name}.`]);
    assert.deepEqual(cleanup.slice(0, 2), ['cleanup', `_acme-challenge.${name}.`]);
    assert.equal(present[2], cleanup[2]);
    assert.equal(fs.existsSync(path.join(dir, 'EVIL-RAN')), false);
  });

  test('on a server without hooks the Issuer is Ready=False at once with the reason, and nothing runs', async () => {
    await startWith({}, false);
    const cond = await waitFor('issuer Ready=False', async () => {
      const c = (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status?.conditions?.find((x) => x.type === 'Ready');
      return c?.status === 'False' && c.reason === 'InvalidSolverConfig' ? c : undefined;
    });
    assert.match(cond.message ?? '', /certsmith\.io\/exec needs a server started with --dns01-auth-hook or --dns01-exec/);
    await lc.apply(acmeCertificate('hook-none', [`n-${uniq()}.example.test`]));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.length, 0);
    assert.equal(fs.existsSync(path.join(dir, 'EVIL-RAN')), false);
  });

  test('a hook that outlives its timeout is killed with its whole process group', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    const slow = script(dir, 'slow.sh', `sleep 30 &\necho $! > "${pidFile}"\nsleep 30`);
    const started = Date.now();
    await assert.rejects(runHook(slow, [], {}, 500), /did not finish within/);
    assert.ok(Date.now() - started < 5000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await waitFor('grandchild gone', async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, async () => pid, 5000);
    // and values reach the program only as argv/env: shell syntax in them is inert
    const echo = script(dir, 'echo.sh', 'printf "%s|%s" "$1" "$X"');
    assert.equal(await runHook(echo, ['$(touch /tmp/x); `id`'], { X: '; rm -rf /' }, 5000), '$(touch /tmp/x); `id`|; rm -rf /');
  });
});
