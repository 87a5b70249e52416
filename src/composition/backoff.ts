// The retry backoff between failed issuances, from the two flags that set it
// (--backoff-initial, --backoff-max: cert-manager's minimum/maximum backoff duration flags).
// The rules are resolveBackoffConfig's; this only says which flag broke them.
import { defaultBackoff, resolveBackoffConfig, type BackoffConfig } from '../shared/backoff.ts';

export { defaultBackoff, resolveBackoffConfig, type BackoffConfig };

/** A flag value that breaks the backoff rules; the message names the flag and the rule. */
export class BackoffFlagError extends Error {
  constructor(readonly flag: string, message: string) {
    super(message);
  }
}

export interface BackoffFlag {
  /** the flag's name, e.g. --backoff-initial */
  flag: string;
  /** what the user wrote, for the message */
  text?: string;
  /** the parsed value; undefined when the flag was not given */
  ms?: number;
}

const shown = (f: BackoffFlag, defaultText: string) => (f.text === undefined ? `(default ${defaultText})` : `"${f.text}"`);

/**
 * 0 or absent takes the default (1h initial, 32h max); a negative value, or a maximum shorter
 * than the initial delay (given or default), is refused.
 */
export function backoffFromFlags(initial: BackoffFlag, max: BackoffFlag): BackoffConfig {
  for (const f of [initial, max]) {
    if (f.ms !== undefined && f.ms < 0) throw new BackoffFlagError(f.flag, `${f.flag} "${f.text}": must not be negative (0 takes the default)`);
  }
  try {
    return resolveBackoffConfig({ initialMs: initial.ms, maxMs: max.ms });
  } catch {
    // the only rule left is the order of the two
    throw new BackoffFlagError(max.flag, `${max.flag} ${shown(max, '32h')} must not be shorter than ${initial.flag} ${shown(initial, '1h')}`);
  }
}
