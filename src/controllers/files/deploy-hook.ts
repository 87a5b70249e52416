// Runs the server's --deploy-hook after new files are live: `/bin/sh -c CMD`, with the names
// and paths in the environment (certsmith's own names and certbot's RENEWED_LINEAGE and
// RENEWED_DOMAINS, so existing certbot deploy hooks work unchanged).
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface HookSubject {
  certificateName: string;
  namespace: string;
  secretName: string;
  revision?: number;
  /** DIR/<ns>/<secretName>: the live symlink, stable across renewals */
  liveDir: string;
  hasCA: boolean;
  dnsNames: string[];
}

export function hookEnvironment(s: HookSubject): Record<string, string> {
  const env: Record<string, string> = {
    CERTSMITH_CERTIFICATE_NAME: s.certificateName,
    CERTSMITH_NAMESPACE: s.namespace,
    CERTSMITH_SECRET_NAME: s.secretName,
    CERTSMITH_REVISION: s.revision === undefined ? '' : String(s.revision),
    CERTSMITH_DIR: s.liveDir,
    CERTSMITH_CERT_PATH: join(s.liveDir, 'tls.crt'),
    CERTSMITH_KEY_PATH: join(s.liveDir, 'tls.key'),
    CERTSMITH_FULLCHAIN_PATH: join(s.liveDir, 'fullchain.pem'),
    CERTSMITH_COMBINED_PATH: join(s.liveDir, 'tls-combined.pem'),
    CERTSMITH_CA_PATH: s.hasCA ? join(s.liveDir, 'ca.crt') : '',
    RENEWED_LINEAGE: s.liveDir,
    RENEWED_DOMAINS: s.dnsNames.join(' '),
  };
  return env;
}

export interface HookOutcome {
  ok: boolean;
  /** null when killed by a signal */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  /** stdout and stderr interleaved, the last `outputLimit` bytes, private keys redacted */
  output: string;
}

const PRIVATE_KEY_BLOCK = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----[\s\S]*?(-----END \1-----|$)/g;

/** A hook that prints a key (cat tls-combined.pem ...) must not put it into an Event. */
export function redactKeyMaterial(text: string): string {
  return text.replace(PRIVATE_KEY_BLOCK, '[private key redacted]');
}

export interface RunHookOptions {
  env: Record<string, string>;
  cwd?: string;
  /** wall-clock limit; the hook's process group is killed after it */
  timeoutMs?: number;
  outputLimit?: number;
}

export const DEFAULT_HOOK_TIMEOUT_MS = 5 * 60_000;

export function runDeployHook(command: string, o: RunHookOptions): Promise<HookOutcome> {
  const started = Date.now();
  const limit = o.outputLimit ?? 4096;
  return new Promise((resolve) => {
    // its own process group, so a timeout also stops what the hook started
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: o.cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    let output = Buffer.alloc(0);
    const collect = (d: Buffer) => {
      output = Buffer.concat([output, d]);
      // keep twice the limit so a key block cut at the front is still recognisable as one
      if (output.length > 2 * limit) output = output.subarray(output.length - 2 * limit);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), 5000);
      killTimer.unref();
    }, o.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS);
    let done = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      let text = redactKeyMaterial(output.toString('utf8'));
      if (spawnError) text = `${text}${spawnError.message}`;
      if (text.length > limit) text = `…${text.slice(text.length - limit)}`;
      resolve({ ok: !spawnError && !timedOut && exitCode === 0, exitCode, signal, timedOut, durationMs: Date.now() - started, output: text.trim() });
    };
    child.on('error', (e) => finish(null, null, e));
    // 'close' waits for the pipes; a hook that leaves a daemon holding them open must not
    // hang us, so after 'exit' the output gets a moment and then we move on.
    child.on('close', (code, signal) => finish(code, signal));
    child.on('exit', (code, signal) => {
      setTimeout(() => finish(code, signal), 200).unref();
    });
  });
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** 1m, 2m, 4m ... capped at 1h: a broken reload command is retried, but not hammered. */
export function hookRetryDelayMs(failures: number, o: { baseMs?: number; maxMs?: number } = {}): number {
  const base = o.baseMs ?? 60_000;
  const max = o.maxMs ?? 3_600_000;
  return Math.min(max, base * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}
