// Backoff after failed issuances: how many attempts failed and when the next one is.
import { relative, type Finding } from '../finding.ts';

export interface BackoffFacts {
  certificate: string;
  ready: boolean;
  failedAttempts: number;
  lastFailureTime?: string;
  /** computed by the gatherer with the server's backoff settings */
  nextAttempt?: Date;
}

export function checkBackoff(f: BackoffFacts, now: Date): Finding | undefined {
  if (!f.lastFailureTime || !f.nextAttempt) return undefined;
  const attempts = Math.max(f.failedAttempts, 1);
  const due = f.nextAttempt.getTime() <= now.getTime();
  const when = due ? `the next attempt was due at ${f.nextAttempt.toISOString()} and runs now` : `certsmith tries again at ${f.nextAttempt.toISOString()} (${relative(f.nextAttempt, now)})`;
  return {
    check: 'backoff', severity: f.ready || due ? 'warning' : 'error',
    sentence: `Issuance of ${f.certificate} failed ${attempts} time${attempts === 1 ? '' : 's'} in a row, last at ${f.lastFailureTime}; ${when}.`,
    fix: `Fix the cause above, then run "certsmith renew ${f.certificate}" to try at once instead of waiting.`,
  };
}
