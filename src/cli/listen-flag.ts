// HOST:PORT flags (--listen, --metrics-listen, --health-listen, --dashboard-listen), read the
// same way by every command that listens, and port-number flags.
import { CliError } from './cli-error.ts';

export function parseListen(text: string, flag = '--listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new CliError(`${flag} "${text}": expected HOST:PORT, e.g. 127.0.0.1:6443`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** A port-number flag (doctor's --http01-port, --acme-http01-self-check-port). */
export function parsePortFlag(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CliError(`${flag} must be a port number from 1 to 65535, got "${v}"`);
  return n;
}

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is in use (another program listens there); choose another port',
  EACCES: 'not allowed to listen there (a port below 1024 needs root or CAP_NET_BIND_SERVICE)',
  EADDRNOTAVAIL: 'no network interface of this host has that address',
};

/**
 * A failure to listen, said by the flag that named the address ("--metrics-listen
 * 127.0.0.1:9402: the address is in use ..."), or the error unchanged when none of them did.
 */
export function listenFailure(e: unknown, flags: [flag: string, value: string | undefined][]): unknown {
  const err = e as (NodeJS.ErrnoException & { port?: number }) | undefined;
  const reason = err?.code ? LISTEN_FAILURES[err.code] : undefined;
  if (!reason) return e;
  for (const [flag, value] of flags) {
    if (value && parseListen(value, flag).port === err!.port) return new CliError(`${flag} ${value}: ${reason}`);
  }
  return e;
}
