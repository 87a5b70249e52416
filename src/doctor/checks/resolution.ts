// Name resolution of each DNS name of a Certificate, through the resolvers the server uses.
import type { Finding } from '../finding.ts';

export interface LookupOutcome {
  /** the name looked up (for a wildcard name, the name under the wildcard) */
  name: string;
  addresses: string[];
  /** node:dns error code: ESERVFAIL, ENOTFOUND (NXDOMAIN), ENODATA, ETIMEOUT, ECONNREFUSED, EREFUSED */
  error?: string;
  /** the resolvers asked, HOST:PORT */
  servers: string[];
}

/**
 * needsAddress: the name is validated by HTTP-01, so the CA must reach it; with DNS-01 only the
 * zone must answer (a SERVFAIL still blocks: the CA's CAA lookup fails the same way).
 */
export function checkResolution(o: LookupOutcome, needsAddress: boolean): Finding {
  const via = o.servers.join(', ');
  if (!o.error) {
    if (o.addresses.length) return { check: 'dns', severity: 'ok', sentence: `${o.name} resolves to ${o.addresses.join(', ')} (asked ${via}).` };
    o = { ...o, error: 'ENODATA' };
  }
  switch (o.error) {
    case 'ESERVFAIL':
      return {
        check: 'dns', severity: 'error',
        sentence: `${o.name} does not resolve: ${via} answered SERVFAIL, so the CA's own lookups (address and CAA) fail too and it will refuse the name.`,
        fix: `Make the zone's authoritative nameservers answer for ${o.name} (try "dig ${o.name} @<nameserver>"): a SERVFAIL comes from a nameserver that is down, lame, or has broken DNSSEC signatures.`,
      };
    case 'ENOTFOUND':
      return needsAddress
        ? { check: 'dns', severity: 'error', sentence: `${o.name} does not exist in DNS (NXDOMAIN from ${via}), so the CA cannot connect to it for HTTP-01.`, fix: `Create an A (or AAAA) record for ${o.name} pointing at this host, or solve the name with DNS-01.` }
        : { check: 'dns', severity: 'info', sentence: `${o.name} does not exist in DNS (NXDOMAIN from ${via}); DNS-01 does not need it to.` };
    case 'ENODATA':
      return needsAddress
        ? { check: 'dns', severity: 'error', sentence: `${o.name} has no A or AAAA record (asked ${via}), so the CA has nowhere to connect for HTTP-01.`, fix: `Add an A (or AAAA) record for ${o.name} pointing at this host, or solve the name with DNS-01.` }
        : { check: 'dns', severity: 'info', sentence: `${o.name} has no A or AAAA record (asked ${via}); DNS-01 does not need one.` };
    case 'ETIMEOUT':
    case 'ECONNREFUSED':
    case 'EREFUSED':
    default:
      return {
        check: 'dns', severity: 'error',
        sentence: `${o.name} could not be looked up: ${via} gave no usable answer (${o.error}).`,
        fix: `Check that the resolvers ${via} are running and reachable from this host, or point the server at working ones (--acme-http01-solver-nameservers, --dns01-recursive-nameservers).`,
      };
  }
}
