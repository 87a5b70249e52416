// DNS-01: whether the TXT record of a pending challenge is visible, at each server asked, with
// the value the CA will look for.
import type { Finding } from '../finding.ts';

export interface TXTVisibility {
  fqdn: string;
  expected: string;
  /** 'authoritative': each nameserver of the zone; 'recursive': the server's --dns01-recursive-nameservers */
  where: 'authoritative' | 'recursive';
  /** TXT values seen per server (HOST:PORT) */
  seen: Record<string, string[]>;
  /** why the servers could not be asked at all (zone or NS lookup failed) */
  error?: string;
}

export function txtFindings(v: TXTVisibility): Finding[] {
  const label = v.where === 'authoritative' ? 'authoritative nameserver' : 'recursive resolver';
  if (v.error) {
    return [{
      check: 'dns-01', severity: 'error',
      sentence: `The TXT record ${v.fqdn} could not be checked at the ${label}s: ${v.error}.`,
      fix: v.where === 'authoritative'
        ? `Make the zone's SOA and NS records resolvable, or have the server check through resolvers only (--dns01-recursive-nameservers with --dns01-recursive-nameservers-only).`
        : `Check that the resolvers are running and reachable from this host.`,
    }];
  }
  return Object.entries(v.seen).map(([server, values]): Finding => {
    if (values.includes(v.expected)) {
      return { check: 'dns-01', severity: 'ok', sentence: `The ${label} ${server} serves the challenge value at TXT ${v.fqdn}.` };
    }
    const found = values.length ? `has ${values.map((x) => JSON.stringify(x)).join(', ')}` : 'has no TXT record';
    return {
      check: 'dns-01', severity: 'error',
      sentence: `The ${label} ${server} ${found} at ${v.fqdn}, not the challenge value ${JSON.stringify(v.expected)}.`,
      fix: values.length
        ? `Something else wrote TXT ${v.fqdn} or the solver wrote the wrong zone: remove stale records, check the DNS-01 solver's zone and credentials, and wait for the record's TTL to pass.`
        : `The solver's record has not reached ${server}: check the DNS-01 solver's zone and credentials, then wait for propagation (secondaries follow the SOA refresh; resolvers cache the negative answer for the SOA's minimum TTL).`,
    };
  });
}
