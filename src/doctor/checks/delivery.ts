// Whether an issued certificate reached where it is used: its files under --secrets-dir (the
// FilesMirrored condition) and the deploy hook's last run (its Events). Neither blocks issuance,
// but on one host the files are what the web server serves, so either failing is an error.
import type { Condition } from '../../api/meta.ts';
import type { HookOutcome } from '../../shared/deploy-hook-events.ts';
import type { Finding } from '../finding.ts';

/** The checks whose errors keep an issued certificate from use, not from being issued. */
export const DELIVERY_CHECKS: ReadonlySet<string> = new Set(['files', 'deploy-hook']);

export function checkDelivery(facts: { filesMirrored?: Condition; hook?: HookOutcome }): Finding[] {
  const out: Finding[] = [];
  if (facts.filesMirrored?.status === 'False') {
    out.push({
      check: 'files', severity: 'error',
      sentence: `The issued certificate is not in its files, so what reads them serves an older one: ${facts.filesMirrored.message ?? facts.filesMirrored.reason}.`,
      fix: 'Make the folder below --secrets-dir writable (free space, a read-only mount, a symlink or file in the way); certsmith writes the files again on its own.',
    });
  }
  if (facts.hook?.failed) {
    out.push({
      check: 'deploy-hook', severity: 'error',
      sentence: `${facts.hook.message.replace(/\.$/, '')}.`,
      fix: 'Run the --deploy-hook command by hand to see why it fails; certsmith runs it again after a while.',
    });
  }
  return out;
}
