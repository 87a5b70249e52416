// The DNS-01 self-check every DNS provider shares: the TXT value must be visible through the
// configured recursive servers (--dns01-recursive-nameservers[-only]), else through the
// authoritative servers of the zone, before the CA is asked to look.
import dns from 'node:dns';
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { checkDNS01 } from './selfcheck.ts';

export function checkTXT(ctx: ControllerContext, c: Challenge) {
  const only = !!ctx.options.dns01RecursiveNameserversOnly;
  const servers = ctx.options.dns01RecursiveNameservers?.length ? ctx.options.dns01RecursiveNameservers : dns.getServers();
  return checkDNS01({ fqdn: `_acme-challenge.${c.spec.dnsName}`, value: c.spec.key, nameservers: servers, authoritativeOnly: !only });
}
