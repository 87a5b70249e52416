// Where a DNS-01 challenge's TXT record goes: `_acme-challenge.<name>`, or, with the solver's
// `cnameStrategy: Follow`, the end of the CNAME chain that name starts (cert-manager's
// DNS01LookupFQDN): the usual way to let a DNS provider answer for a zone it does not host. The
// chain is looked up through the configured recursive servers, at most 10 hops, loops refused.
import dns from 'node:dns';
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { absent, resolverFor } from '../../../../shared/dns01-selfcheck.ts';

const MAX_CNAME_HOPS = 10;

export function recursiveNameservers(ctx: Pick<ControllerContext, 'options'>): string[] {
  return ctx.options.dns01RecursiveNameservers?.length ? ctx.options.dns01RecursiveNameservers : dns.getServers();
}

/** The last name of the CNAME chain starting at fqdn (fqdn itself when it is no alias). */
export async function followCNAMEs(fqdn: string, nameservers: string[]): Promise<string> {
  const resolver = resolverFor(nameservers);
  const seen = [fqdn.replace(/\.$/, '').toLowerCase()];
  // bounded by the hop count below, not here: a chain of exactly MAX_CNAME_HOPS takes one query more, to learn its end is no alias
  for (;;) {
    let targets: string[];
    try {
      targets = await resolver.resolveCname(seen[seen.length - 1]);
    } catch (e) {
      if (absent(e)) return seen[seen.length - 1];
      throw new Error(`following the CNAME of ${seen[seen.length - 1]} via ${nameservers.join(', ')}: ${(e as Error).message}`);
    }
    if (!targets.length) return seen[seen.length - 1];
    const next = targets[0].replace(/\.$/, '').toLowerCase();
    if (seen.includes(next)) throw new Error(`CNAME loop: ${[...seen, next].join(' -> ')}`);
    seen.push(next);
    if (seen.length - 1 > MAX_CNAME_HOPS) throw new Error(`more than ${MAX_CNAME_HOPS} CNAMEs from ${seen[0]}: ${seen.join(' -> ')}`);
  }
}

/** The name the challenge's TXT record is written at and checked at. */
export function challengeRecordName(ctx: Pick<ControllerContext, 'options'>, c: Pick<Challenge, 'spec'>): Promise<string> {
  const fqdn = `_acme-challenge.${c.spec.dnsName}`;
  if (c.spec.solver.dns01?.cnameStrategy !== 'Follow') return Promise.resolve(fqdn);
  return followCNAMEs(fqdn, recursiveNameservers(ctx));
}
