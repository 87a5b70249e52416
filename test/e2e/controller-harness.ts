// Runs the real `certsmith controller` as a child process against a server's kubeconfig, as a
// Deployment's container would run it against a cluster.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { Certificate, Challenge, SecretType } from '../../src/api/resources.ts';
import type { Certificate as CertificateObj, Challenge as ChallengeObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import type { Store } from '../../src/store/store.ts';
import { certsmithBin, isReady, repoRoot, waitFor } from './harness.ts';

export interface RunningController {
  process: ChildProcess;
  /** everything the controller printed so far */
  output(): string;
  /** resolves with the first match of `pattern` in the output; rejects on exit or timeout */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** the exit code, or the signal's name */
  exited: Promise<number | string>;
  /** SIGTERM, then waits for the exit */
  stop(): Promise<number | string>;
  /** SIGKILL: no shutdown, the Lease is not handed back */
  kill(): Promise<number | string>;
}

export function startController(opts: { kubeconfig: string; args?: string[]; env?: NodeJS.ProcessEnv }): RunningController {
  const child = spawn(process.execPath, [
    certsmithBin, 'controller', '--kubeconfig', opts.kubeconfig,
    '--metrics-listen', '127.0.0.1:0', '--health-listen', '127.0.0.1:0', ...(opts.args ?? []),
  ], {
    cwd: repoRoot, env: { ...process.env, CERTSMITH_LOG_LEVEL: process.env.CERTSMITH_LOG_LEVEL ?? 'warn', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const append = (d: Buffer) => {
    out += d;
    for (const l of [...listeners]) l();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | string>((r) => child.on('exit', (code, signal) => {
    for (const l of [...listeners]) l();
    r(code ?? signal ?? 'unknown');
  }));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    process: child,
    output: () => out,
    exited,
    waitForOutput(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m) { done(); resolve(m); } else if (!running()) { done(); reject(new Error(`certsmith controller exited before printing ${pattern}:\n${out}`)); }
        };
        const timer = setTimeout(() => { done(); reject(new Error(`certsmith controller did not print ${pattern} within ${timeoutMs}ms:\n${out}`)); }, timeoutMs);
        const done = () => { clearTimeout(timer); listeners.delete(check); };
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (running()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      return exited;
    },
  };
}

/**
 * Waits for a Certificate in `default` that the controller issues to be Ready, then checks its TLS
 * Secret covers dnsName. On a timeout the error carries the Certificate's status, its Issuer's
 * conditions, its Challenges' status, `more` and what the controller printed.
 */
export async function waitIssuedBy(controller: RunningController, store: Store, o: {
  name: string; dnsName: string; issuer: () => Promise<{ status?: { conditions?: unknown } } | undefined>; more?: () => string;
}): Promise<void> {
  await waitFor(`Certificate ${o.name} Ready`, async () => {
    if (controller.process.exitCode !== null) throw new Error('certsmith controller exited');
    return isReady((await store.get<CertificateObj>(Certificate, 'default', o.name)) ?? {});
  }, 75_000).catch(async (e: Error) => {
    const c = await store.get<CertificateObj>(Certificate, 'default', o.name);
    const challenges = (await store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.filter((ch) => ch.spec.dnsName === o.dnsName);
    const issuer = await o.issuer();
    throw new Error(`${e.message}\nstatus: ${JSON.stringify(c?.status)}\nissuer: ${JSON.stringify(issuer?.status?.conditions)}\nchallenges: ${JSON.stringify(challenges.map((ch) => ch.status))}${o.more ? `\n${o.more()}` : ''}\ncontroller output:\n${controller.output()}`);
  });
  const tls = await store.get<Secret>(SecretType, 'default', `${o.name}-tls`);
  assert.ok(tls?.data?.['tls.crt'], `Secret default/${o.name}-tls has tls.crt`);
  const leaf = new X509Certificate(Buffer.from(tls.data['tls.crt'], 'base64'));
  assert.equal(leaf.checkHost(o.dnsName), o.dnsName, `the certificate covers ${o.dnsName}`);
}
