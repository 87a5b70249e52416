// CAA (RFC 8659): the relevant record set is the first non-empty one found climbing from the
// name towards the root; its issue (or, for a wildcard, issuewild) properties name the CAs that
// may issue. The CA's identifiers come from its ACME directory (meta.caaIdentities, RFC 8555 §7.1.1).
import type { Finding } from '../finding.ts';

export interface CAARecord {
  flags: number;
  tag: string;
  value: string;
}

export interface CAALookup {
  domain: string;
  records: CAARecord[];
  /** node:dns error code when the lookup failed (NODATA and NXDOMAIN are not failures: empty records) */
  error?: string;
}

/** The names RFC 8659 §3 climbs for a name: itself, then each parent down to the top-level label. */
export function caaClimb(name: string): string[] {
  const labels = name.replace(/^\*\./, '').replace(/\.$/, '').split('.');
  return labels.map((_, i) => labels.slice(i).join('.'));
}

const KNOWN_TAGS = new Set(['issue', 'issuewild', 'iodef', 'issuemail', 'issuevmc', 'contactemail', 'contactphone']);

/** The issuer-domain-name of an issue value: what comes before the first ";" (RFC 8659 §4.2); "" forbids every CA. */
function issuerDomain(value: string): string {
  return value.split(';')[0].trim().toLowerCase().replace(/\.$/, '');
}

/**
 * lookups: in climbing order, as far as the gatherer went (it stops at the first non-empty set or
 * failed lookup). identities: the CA's, from meta.caaIdentities (empty or undefined when unknown).
 */
export function checkCAA(name: string, lookups: CAALookup[], identities: string[] | undefined): Finding {
  const wildcard = name.startsWith('*.');
  for (const l of lookups) {
    if (l.error) {
      return {
        check: 'caa', severity: 'error',
        sentence: `The CAA lookup for ${l.domain} failed (${l.error === 'ESERVFAIL' ? 'SERVFAIL' : l.error}); a CA must not issue for ${name} when it cannot read the CAA records (RFC 8659 §3).`,
        fix: `Make the nameservers of ${l.domain} answer CAA queries (an empty answer is fine): some old DNS servers and broken DNSSEC setups fail them.`,
      };
    }
    if (!l.records.length) continue;
    const critical = l.records.find((r) => (r.flags & 128) && !KNOWN_TAGS.has(r.tag.toLowerCase()));
    if (critical) {
      return {
        check: 'caa', severity: 'error',
        sentence: `The CAA records at ${l.domain} carry the critical property "${critical.tag}", which no CA understands, so every CA must refuse ${name}.`,
        fix: `Remove the critical flag (128) from the "${critical.tag}" CAA record at ${l.domain}, or remove the record.`,
      };
    }
    const tag = wildcard && l.records.some((r) => r.tag.toLowerCase() === 'issuewild') ? 'issuewild' : 'issue';
    const allowing = l.records.filter((r) => r.tag.toLowerCase() === tag);
    if (!allowing.length) {
      return { check: 'caa', severity: 'ok', sentence: `The CAA records at ${l.domain} have no ${tag} property, so they do not restrict which CA issues for ${name}.` };
    }
    const allowed = [...new Set(allowing.map((r) => issuerDomain(r.value)))];
    const named = allowed.filter(Boolean);
    const list = named.length ? named.join(', ') : 'no CA at all';
    const ids = (identities ?? []).map((i) => i.toLowerCase().replace(/\.$/, ''));
    const record = `${l.domain}. CAA 0 ${tag} "${ids[0] ?? '<your CA\'s CAA identifier>'}"`;
    if (!ids.length) {
      return {
        check: 'caa', severity: 'warning',
        sentence: `The CAA ${tag} records at ${l.domain} allow only ${list} to issue for ${name}; the ACME server publishes no meta.caaIdentities, so certsmith cannot tell whether its CA is one of them.`,
        fix: `If your CA's CAA identifier is not in that list, add ${record}; run doctor with --caa-identity <domain> to check against it.`,
      };
    }
    const match = ids.find((i) => named.includes(i));
    if (match) return { check: 'caa', severity: 'ok', sentence: `The CAA ${tag} records at ${l.domain} allow ${match}, this CA, to issue for ${name}.` };
    return {
      check: 'caa', severity: 'error',
      sentence: `The CAA ${tag} records at ${l.domain} allow only ${list} to issue for ${name}; this CA identifies as ${ids.join(', ')}, so it must refuse.`,
      fix: `Add ${record} next to the existing records, or remove the CAA restriction.`,
    };
  }
  const top = lookups.at(-1)?.domain ?? name;
  return { check: 'caa', severity: 'ok', sentence: `No CAA records from ${name.replace(/^\*\./, '')} up to ${top}: any CA may issue.` };
}
