// Runs the server's --deploy-hook after new files are live: `/bin/sh -c CMD`, with the names
// and paths in the environment (certsmith's own names and certbot's RENEWED_LINEAGE and
// RENEWED_DOMAINS, so existing certbot deploy hooks work unchanged).
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
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
  /** stopped because certsmith is shutting down (RunHookOptions.signal) */
  interrupted: boolean;
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
  /** aborted when certsmith stops: the hook's process group is killed (SIGTERM, SIGKILL after the grace) */
  signal?: AbortSignal;
  /** between SIGTERM and SIGKILL, on timeout and on abort */
  killGraceMs?: number;
}

export const DEFAULT_HOOK_TIMEOUT_MS = 5 * 60_000;

/**
 * The hook's process group must not outlive certsmith, even when certsmith is SIGKILLed and
 * gets no chance to kill it (Node has no prctl(PR_SET_PDEATHSIG)). So the group gets a
 * watchdog: a background shell in the same group blocked reading fd 3, a pipe whose other end
 * only certsmith holds. When the hook exits, certsmith writes "done" and the watchdog leaves
 * quietly; when certsmith dies, the kernel closes its end, the read sees end-of-file and the
 * watchdog kills its whole process group, the hook and what the hook started. The hook itself
 * runs with fd 3 closed, so nothing it starts can hold the pipe open, and the watchdog ignores
 * the SIGTERM a timeout or stop sends the group (the SIGKILL that follows ends it). Out of
 * reach, as for timeouts: processes that leave the group (setsid, daemons), and a hook that
 * SIGKILLs the watchdog.
 */
const WATCHDOG = '( trap "" TERM HUP INT; IFS= read -r word <&3; [ "$word" = done ] || kill -s KILL 0 ) </dev/null >/dev/null 2>&1 &\nexec 3<&-\nexec /bin/sh -c "$1"';

/** The variable whose value cannot be passed to a process (a NUL ends a C string), if any. */
function unpassable(env: Record<string, string>): string | undefined {
  return Object.keys(env).find((k) => env[k].includes('\0'));
}

export function runDeployHook(command: string, o: RunHookOptions): Promise<HookOutcome> {
  const started = Date.now();
  const limit = o.outputLimit ?? 4096;
  const notRun = (output: string): HookOutcome => ({ ok: false, exitCode: null, signal: null, timedOut: false, interrupted: false, durationMs: 0, output });
  const bad = unpassable(o.env);
  // spawn would throw; the hook never ran, and the user needs to hear why
  if (bad) return Promise.resolve(notRun(`not run: $${bad} contains a NUL character, which cannot be passed to a process`));
  if (o.signal?.aborted) return Promise.resolve({ ...notRun('not run: certsmith is stopping'), interrupted: true });
  return new Promise((resolve) => {
    let child;
    try {
      // its own process group, so a timeout or a stop also ends what the hook started
      child = spawn('/bin/sh', ['-c', WATCHDOG, 'certsmith-deploy-hook', command], {
        cwd: o.cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true,
      });
    } catch (e) {
      resolve(notRun(`not run: ${(e as Error).message}`));
      return;
    }
    const lifeline = child.stdio[3] as Writable;
    // the watchdog may be gone already (killed with its group): nothing to tell it then
    lifeline.on('error', () => {});
    let output = Buffer.alloc(0);
    const collect = (d: Buffer) => {
      output = Buffer.concat([output, d]);
      // keep twice the limit so a key block cut at the front is still recognisable as one
      if (output.length > 2 * limit) output = output.subarray(output.length - 2 * limit);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    let timedOut = false;
    let interrupted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const pid = child.pid;
    const kill = () => {
      signalGroup(pid, 'SIGTERM');
      killTimer ??= setTimeout(() => signalGroup(pid, 'SIGKILL'), o.killGraceMs ?? 5000);
      killTimer.unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, o.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS);
    const onAbort = () => {
      interrupted = true;
      kill();
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let done = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      let text = redactKeyMaterial(output.toString('utf8'));
      if (spawnError) text = `${text}${spawnError.message}`;
      if (text.length > limit) text = `…${text.slice(text.length - limit)}`;
      resolve({
        ok: !spawnError && !timedOut && !interrupted && exitCode === 0, exitCode, signal, timedOut, interrupted,
        durationMs: Date.now() - started, output: text.trim(),
      });
    };
    child.on('error', (e) => finish(null, null, e));
    // 'close' waits for the pipes; a hook that leaves a daemon holding them open must not
    // hang us, so after 'exit' the output gets a moment and then we move on.
    child.on('close', (code, signal) => finish(code, signal));
    child.on('exit', (code, signal) => {
      if (!timedOut && !interrupted) {
        // the hook ended by itself: what it left running stays, as it always did
        lifeline.end('done\n');
      } else {
        // stopped by us: nothing of the group survives it, whatever ignored the SIGTERM
        if (killTimer) clearTimeout(killTimer);
        signalGroup(pid, 'SIGKILL');
        lifeline.destroy();
      }
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
