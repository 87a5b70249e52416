// DNS-01 through programs the administrator already has: certbot's --manual-auth-hook /
// --manual-cleanup-hook (CERTBOT_* environment) and lego's exec provider ("EXEC_PATH present|cleanup
// FQDN VALUE"), so acme.sh, certbot and lego provider scripts can be reused unchanged.
//
// The programs come from the server's flags only. An Issuer selects them by naming the solver
// `dns01.webhook: {groupName: certsmith.io, solverName: exec}`; its `config` is ignored, so nothing
// a resource sets chooses what runs. Challenge values (domain, TXT value) reach the program only as
// environment or argv, never through a shell. Each run goes through shared/run-program.ts: bounded
// by a timeout, in its own process group, which is killed whole when the time is up or the hook
// ends, and with a watchdog, so a hook's children (a curl it started) outlive neither it nor certsmith.
import { BoundedCache } from '../../../../runtime/bounded-cache.ts';
import { endedBadly, runProgram } from '../../../../shared/run-program.ts';

export const EXEC_GROUP = 'certsmith.io';
export const EXEC_SOLVER = 'exec';

export interface ExecHooks {
  /** certbot convention: run with CERTBOT_* to add the TXT record */
  authHook?: string;
  /** certbot convention: run with CERTBOT_* (and CERTBOT_AUTH_OUTPUT) to remove it */
  cleanupHook?: string;
  /** lego convention: `PATH present FQDN VALUE` and `PATH cleanup FQDN VALUE` */
  legoExec?: string;
  timeoutMs?: number;
}

export const DEFAULT_DNS01_HOOK_TIMEOUT_MS = 120_000;
/** what a hook may print: more is cut, so a chatty script cannot fill memory */
const MAX_OUTPUT = 64 * 1024;
/** a hook gets this long to end after SIGTERM at the timeout before its group is SIGKILLed */
const KILL_GRACE_MS = 2000;
const MAX_REMEMBERED = 10_000;

export interface HookChallenge {
  /** the name being validated, without "*." (certbot's CERTBOT_DOMAIN) */
  domain: string;
  /** the TXT value (certbot's CERTBOT_VALIDATION) */
  value: string;
  /** number of challenges of the same order still to be presented after this one */
  remaining: number;
  /** every name of the order, comma-separated for CERTBOT_ALL_DOMAINS */
  allDomains: string[];
}

export class HookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HookError';
  }
}

/** Runs one program (no shell), returns its stdout; fails on a non-zero exit, a signal or the timeout. */
export async function runHook(program: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<string> {
  // a hook that backgrounded something and exited leaves nothing behind either
  const r = await runProgram(program, args, { env, timeoutMs, killGraceMs: KILL_GRACE_MS, outputLimit: MAX_OUTPUT, leftovers: 'kill' });
  if (r.startError) throw new HookError(`${program}: ${r.startError}`);
  if (r.timedOut) throw new HookError(`${program} ${args[0] ?? ''} did not finish within ${Math.round(timeoutMs / 1000)}s; its process group was killed`);
  if (r.exitCode !== 0) throw new HookError(`${program} ${args[0] ?? ''} failed ${endedBadly(r)}`);
  return r.stdout;
}

/** certbot's manual hooks' environment for DNS-01: no CERTBOT_TOKEN, which certbot sets only for HTTP-01 (and unsets otherwise). */
function certbotEnv(c: HookChallenge, authOutput?: string): Record<string, string> {
  const env: Record<string, string> = {
    CERTBOT_DOMAIN: c.domain,
    CERTBOT_VALIDATION: c.value,
    CERTBOT_REMAINING_CHALLENGES: String(c.remaining),
    CERTBOT_ALL_DOMAINS: c.allDomains.join(','),
  };
  if (authOutput !== undefined) env.CERTBOT_AUTH_OUTPUT = authOutput;
  return env;
}

const fqdnOf = (domain: string) => `_acme-challenge.${domain}.`;

/**
 * The hooks of one server. The auth hook's output is kept in memory for its cleanup hook
 * (CERTBOT_AUTH_OUTPUT), as certbot does within one run; after a restart the cleanup gets ''.
 */
export class ExecDNSHooks {
  private readonly authOutputs = new Map<string, string>();
  /**
   * Challenges whose cleanup already ran: the controller may clean up a Challenge more than once
   * (when it settles and again when it is deleted), and a user's script, written for certbot, expects
   * one cleanup per auth. Bounded: the oldest are forgotten first.
   */
  private readonly cleaned = new BoundedCache<string, true>(MAX_REMEMBERED);
  constructor(private readonly hooks: ExecHooks) {}

  get configured(): boolean {
    return !!(this.hooks.authHook || this.hooks.legoExec);
  }

  private timeout(): number {
    return this.hooks.timeoutMs ?? DEFAULT_DNS01_HOOK_TIMEOUT_MS;
  }

  /** key: the challenge's identity (namespace/name), so a retried present replaces the output */
  async present(key: string, c: HookChallenge): Promise<void> {
    if (!this.configured) throw new HookError('this certsmith server has no DNS-01 exec hook: start it with --dns01-auth-hook (and --dns01-cleanup-hook) or --dns01-exec');
    this.cleaned.delete(key);
    if (this.hooks.authHook) {
      const out = await runHook(this.hooks.authHook, [], certbotEnv(c), this.timeout());
      this.authOutputs.set(key, out.trim());
    }
    if (this.hooks.legoExec) await runHook(this.hooks.legoExec, ['present', fqdnOf(c.domain), c.value], {}, this.timeout());
  }

  async cleanUp(key: string, c: HookChallenge): Promise<void> {
    if (this.cleaned.has(key)) return;
    const authOutput = this.authOutputs.get(key) ?? '';
    if (this.hooks.cleanupHook) await runHook(this.hooks.cleanupHook, [], certbotEnv(c, authOutput), this.timeout());
    if (this.hooks.legoExec) await runHook(this.hooks.legoExec, ['cleanup', fqdnOf(c.domain), c.value], {}, this.timeout());
    this.authOutputs.delete(key);
    this.cleaned.set(key, true);
  }
}

/** Whether a dns01 solver selects the server's exec hook. */
export function selectsExecHook(dns01: { webhook?: { groupName?: string; solverName?: string } } | undefined): boolean {
  return dns01?.webhook?.groupName === EXEC_GROUP && dns01.webhook.solverName === EXEC_SOLVER;
}
