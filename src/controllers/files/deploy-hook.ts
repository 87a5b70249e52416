// Runs the server's --deploy-hook after new files are live: `/bin/sh -c CMD` (through
// shared/run-program.ts: own process group, timeout, watchdog), with the names
// and paths in the environment (certsmith's own names, certbot's RENEWED_LINEAGE and
// RENEWED_DOMAINS, and lego's LEGO_HOOK_* and LEGO_CERT_*, so existing certbot and lego deploy
// hooks work unchanged).
import { join } from 'node:path';
import { runProgram } from '../../shared/run-program.ts';
import { REDACTED_KEY, redactKeyMaterial } from '../../pki/redact-keys.ts';
import { redactKeyDerived } from '../../pki/key-derived.ts';

export interface HookSubject {
  certificateName: string;
  namespace: string;
  secretName: string;
  revision?: number;
  /** DIR/<ns>/<secretName>: the live symlink, stable across renewals */
  liveDir: string;
  hasCA: boolean;
  /** the certificate's names (hookNames) */
  names: string[];
}

/**
 * A certificate's names as certbot reads a lineage's (RENEWED_DOMAINS): the subject's CN
 * first, then the DNS names and IP addresses, each once.
 */
export function hookNames(t: { commonName?: string; dnsNames?: string[]; ipAddresses?: string[] }): string[] {
  return [...new Set([...(t.commonName ? [t.commonName] : []), ...(t.dnsNames ?? []), ...(t.ipAddresses ?? [])])];
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
    RENEWED_DOMAINS: s.names.join(' '),
  };
  // lego 5's hook variables, and lego 4's: its certificate file is the bundle, its issuer file
  // the chain, its .pem the key and bundle in one; a certificate is named after its first name
  const first = s.names[0] ?? s.certificateName;
  const lego = {
    CERT_PATH: join(s.liveDir, 'fullchain.pem'),
    CERT_KEY_PATH: join(s.liveDir, 'privkey.pem'),
    ISSUER_CERT_PATH: join(s.liveDir, 'chain.pem'),
    CERT_PEM_PATH: join(s.liveDir, 'tls-combined.pem'),
  };
  Object.assign(env, {
    LEGO_HOOK_CERT_NAME: first,
    LEGO_HOOK_CERT_NAME_SANITIZED: first.replaceAll('*', '_'),
    LEGO_HOOK_CERT_DOMAINS: s.names.join(','),
    LEGO_CERT_DOMAIN: first,
  });
  for (const [k, v] of Object.entries(lego)) env[`LEGO_HOOK_${k}`] = env[`LEGO_${k}`] = v;
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
  /** the private keys (PEM) the hook was handed: lines of output showing any of them in any usual encoding are redacted */
  keys?: readonly string[];
}

export const DEFAULT_HOOK_TIMEOUT_MS = 5 * 60_000;

export function runDeployHook(command: string, o: RunHookOptions): Promise<HookOutcome> {
  const limit = o.outputLimit ?? 4096;
  // the operator's command line from the flag, so a shell; the names and paths reach it only as environment
  return runProgram('/bin/sh', ['-c', command], {
    env: o.env, cwd: o.cwd, timeoutMs: o.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, killGraceMs: o.killGraceMs, signal: o.signal,
    // twice the limit, so a key block cut at the front is still recognisable as one
    outputLimit: 2 * limit,
    // a hook that ends by itself may leave a daemon running, as it always could
    leftovers: 'leave',
  }).then((r) => {
    let text = r.startError ? `not run: ${r.startError}` : redactKeyMaterial(redactKeyDerived(r.output, o.keys ?? [], REDACTED_KEY).text);
    if (text.length > limit) text = `…${text.slice(text.length - limit)}`;
    return {
      ok: !r.startError && !r.timedOut && !r.interrupted && r.exitCode === 0, exitCode: r.exitCode, signal: r.signal,
      timedOut: r.timedOut, interrupted: r.interrupted, durationMs: r.durationMs, output: text.trim(),
    };
  });
}

/** 1m, 2m, 4m ... capped at 1h: a broken reload command is retried, but not hammered. */
export function hookRetryDelayMs(failures: number, o: { baseMs?: number; maxMs?: number } = {}): number {
  const base = o.baseMs ?? 60_000;
  const max = o.maxMs ?? 3_600_000;
  return Math.min(max, base * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}
