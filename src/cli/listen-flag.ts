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
