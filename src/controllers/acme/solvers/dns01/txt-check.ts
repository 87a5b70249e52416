// The DNS-01 self-check every DNS provider shares: the TXT value must be visible through the
// configured recursive servers (--dns01-recursive-nameservers[-only]), else through the
// authoritative servers of the zone, before the CA is asked to look.
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { checkDNS01 } from '../../../../shared/dns01-selfcheck.ts';
import { challengeRecordName, recursiveNameservers } from './challenge-record.ts';

export async function checkTXT(ctx: ControllerContext, c: Challenge) {
  const only = !!ctx.options.dns01RecursiveNameserversOnly;
  // with cnameStrategy Follow, where the record was written: its zone's servers are the authoritative ones
  const fqdn = await challengeRecordName(ctx, c);
  return checkDNS01({ fqdn, value: c.spec.key, nameservers: recursiveNameservers(ctx), authoritativeOnly: !only });
}
