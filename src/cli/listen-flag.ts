// HOST:PORT flags (--listen, --metrics-listen, --health-listen, --dashboard-listen), read the
// same way by every command that listens.
import { CliError } from './cli-error.ts';

export function parseListen(text: string, flag = '--listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new CliError(`${flag} "${text}": expected HOST:PORT, e.g. 127.0.0.1:6443`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}
