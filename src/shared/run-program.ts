// The one way certsmith runs a program the operator configured (deploy hooks, DNS-01 exec hooks,
// notification hooks): argv and environment only, never a shell for values; stdout and stderr
// captured up to a bound; the program in its own process group, so a timeout or a stop ends
// what it started too (SIGTERM, then SIGKILL after a grace); and a watchdog in that group, so
// nothing of it outlives certsmith when certsmith is SIGKILLed.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { Writable } from 'node:stream';

export interface RunProgramOptions {
  /** added to certsmith's own environment */
  env?: Record<string, string>;
  cwd?: string;
  /** wall-clock limit; the process group is stopped after it */
  timeoutMs: number;
  /** between SIGTERM and SIGKILL, on timeout and on abort */
  killGraceMs?: number;
  /** bytes kept of stdout, of stderr and of both interleaved: the last ones (default 64 KiB) */
  outputLimit?: number;
  /** aborted when certsmith stops: the process group is stopped */
  signal?: AbortSignal;
  /**
   * What happens to processes the program started when it ends by itself: `leave` them running
   * (a deploy hook may start a daemon) or `kill` the group (a DNS hook leaves nothing behind).
   */
  leftovers: 'leave' | 'kill';
}

export interface ProgramOutcome {
  /** null when killed by a signal, or never started */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** stopped because RunProgramOptions.signal was aborted */
  interrupted: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived (two pipes: their relative order is approximate) */
  output: string;
  /** why the program could not be started, when it could not */
  startError?: string;
}

const DEFAULT_OUTPUT_LIMIT = 64 * 1024;
const DEFAULT_KILL_GRACE_MS = 5000;
/** how long output may still arrive after the program exited (a daemon it left may hold the pipes) */
const AFTER_EXIT_MS = 200;

/**
 * Node has no prctl(PR_SET_PDEATHSIG), so the group gets a watchdog: a background shell in the
 * same group blocked reading fd 3, a pipe whose other end only certsmith holds. When the program
 * exits, certsmith writes "done" and the watchdog leaves quietly; when certsmith dies, the kernel
 * closes its end, the read sees end-of-file and the watchdog kills its whole process group. The
 * program is exec'd with fd 3 closed, so nothing it starts can hold the pipe open, and the watchdog
 * ignores the SIGTERM a timeout or stop sends the group (the SIGKILL that follows ends it). This
 * script is constant: the program and its arguments reach exec as "$@", never parsed by the shell.
 * Out of reach: processes that leave the group (setsid, daemons), and a program that SIGKILLs the watchdog.
 */
const WATCHDOG = '( trap "" TERM HUP INT; IFS= read -r word <&3; [ "$word" = done ] || kill -s KILL 0 ) </dev/null >/dev/null 2>&1 &\nexec 3<&-\nexec "$@"';

/** Why the program cannot be started, checked before spawning (behind the watchdog, exec would fail less clearly). */
function startProblem(program: string, args: readonly string[], env: Record<string, string>): string | undefined {
  // a NUL ends a C string: spawn would throw
  const badVar = Object.keys(env).find((k) => env[k].includes('\0'));
  if (badVar) return `$${badVar} contains a NUL character, which cannot be passed to a process`;
  if ([program, ...args].some((a) => a.includes('\0'))) return 'an argument contains a NUL character, which cannot be passed to a process';
  if (program.includes('/')) {
    try {
      accessSync(program, constants.X_OK);
    } catch (e) {
      return `${program}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'not executable'} (${(e as Error).message})`;
    }
  }
  return undefined;
}

/** The last `limit` bytes of what was written. */
class TailBuffer {
  private data = Buffer.alloc(0);
  constructor(private readonly limit: number) {}
  push(chunk: Buffer) {
    this.data = Buffer.concat([this.data, chunk]);
    if (this.data.length > this.limit) this.data = this.data.subarray(this.data.length - this.limit);
  }
  text() {
    return this.data.toString('utf8');
  }
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * "(exit 3): <the last lines of stderr>" or "(signal SIGSEGV)": how a program that ended badly
 * is described in an error. Only stderr, shortened: it is the program's own message.
 */
export function endedBadly(r: ProgramOutcome): string {
  const tail = r.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 300);
  return `(${r.signal ? `signal ${r.signal}` : `exit ${r.exitCode}`})${tail ? `: ${tail}` : ''}`;
}

function notStarted(startError: string, interrupted = false): ProgramOutcome {
  return { exitCode: null, signal: null, timedOut: false, interrupted, durationMs: 0, stdout: '', stderr: '', output: '', startError };
}

export function runProgram(program: string, args: readonly string[], o: RunProgramOptions): Promise<ProgramOutcome> {
  const env = o.env ?? {};
  const problem = startProblem(program, args, env);
  if (problem) return Promise.resolve(notStarted(problem));
  if (o.signal?.aborted) return Promise.resolve(notStarted('certsmith is stopping', true));
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn('/bin/sh', ['-c', WATCHDOG, 'certsmith-program', program, ...args], {
        cwd: o.cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true, shell: false,
      });
    } catch (e) {
      resolve(notStarted((e as Error).message));
      return;
    }
    superviseProgram(child, o, resolve);
  });
}

/** Collects the output, enforces the timeout and the stop, and resolves once the program is done. */
function superviseProgram(child: ReturnType<typeof spawn>, o: RunProgramOptions, resolve: (outcome: ProgramOutcome) => void) {
  const started = Date.now();
  const limit = o.outputLimit ?? DEFAULT_OUTPUT_LIMIT;
  const [stdout, stderr, output] = [new TailBuffer(limit), new TailBuffer(limit), new TailBuffer(limit)];
  child.stdout!.on('data', (d: Buffer) => { stdout.push(d); output.push(d); });
  child.stderr!.on('data', (d: Buffer) => { stderr.push(d); output.push(d); });
  const lifeline = child.stdio[3] as Writable;
  // the watchdog may be gone already (killed with its group): nothing to tell it then
  lifeline.on('error', () => {});
  const pid = child.pid;
  let timedOut = false;
  let interrupted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    signalGroup(pid, 'SIGTERM');
    killTimer ??= setTimeout(() => signalGroup(pid, 'SIGKILL'), o.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    killTimer.unref();
  };
  const timer = setTimeout(() => { timedOut = true; stop(); }, o.timeoutMs);
  const onAbort = () => { interrupted = true; stop(); };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let done = false;
  const finish = (exitCode: number | null, signal: NodeJS.Signals | null, startError?: string) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
    resolve({
      exitCode, signal, timedOut, interrupted, durationMs: Date.now() - started,
      stdout: stdout.text(), stderr: stderr.text(), output: output.text(), ...(startError ? { startError } : {}),
    });
  };
  child.on('error', (e) => finish(null, null, e.message));
  child.on('close', (code, signal) => finish(code, signal));
  child.on('exit', (code, signal) => {
    if (timedOut || interrupted || o.leftovers === 'kill') {
      // stopped by us, or nothing may stay: nothing of the group survives, whatever ignored the SIGTERM
      if (killTimer) clearTimeout(killTimer);
      signalGroup(pid, 'SIGKILL');
      lifeline.destroy();
    } else {
      // ended by itself: what it left running stays
      lifeline.end('done\n');
    }
    setTimeout(() => finish(code, signal), AFTER_EXIT_MS).unref();
  });
}
