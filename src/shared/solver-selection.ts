// cert-manager's solver picker: per authorization, the most specific solver of the issuer
// whose selector matches (dnsNames exact, then dnsZones longest suffix, then matchLabels).
import type { ACMESolver } from '../api/types.ts';

export interface AuthorizationForSelection {
  identifier: string;
  wildcard?: boolean;
  challenges: { type: string; url: string; token: string }[];
}

export interface SelectedSolver {
  solver: ACMESolver;
  challenge: { type: string; url: string; token: string };
}

export function solverChallengeType(s: ACMESolver): 'http-01' | 'dns-01' | undefined {
  if (s.http01) return 'http-01';
  if (s.dns01) return 'dns-01';
  return undefined;
}

interface Score {
  dnsNames: number;
  zones: number;
  labels: number;
}

function zoneMatch(domain: string, zone: string): number {
  const d = domain.toLowerCase().replace(/\.$/, '').split('.');
  const z = zone.toLowerCase().replace(/\.$/, '').split('.');
  if (z.length > d.length) return 0;
  for (let i = 1; i <= z.length; i++) if (d[d.length - i] !== z[z.length - i]) return 0;
  return z.length;
}

/** The match counts of a selector, or undefined when it does not match. */
function scoreOf(s: ACMESolver, domain: string, labels: Record<string, string>): Score | undefined {
  const sel = s.selector;
  if (!sel) return { dnsNames: 0, zones: 0, labels: 0 };
  const want = Object.entries(sel.matchLabels ?? {});
  if (!want.every(([k, v]) => labels[k] === v)) return undefined;
  let dnsNames = 0;
  if (sel.dnsNames?.length) {
    if (!sel.dnsNames.includes(domain)) return undefined;
    dnsNames = 1;
  }
  let zones = 0;
  if (sel.dnsZones?.length) {
    zones = Math.max(0, ...sel.dnsZones.map((z) => zoneMatch(domain, z)));
    if (zones === 0) return undefined;
  }
  return { dnsNames, zones, labels: want.length };
}

function beats(a: Score, b: Score): boolean {
  if (a.dnsNames !== b.dnsNames) return a.dnsNames > b.dnsNames;
  if (a.zones !== b.zones) return a.zones > b.zones;
  return a.labels > b.labels;
}

/**
 * Walks the solvers in order; a later solver replaces the current pick only when strictly more
 * specific, so ties keep the earlier one. A wildcard authorization is solved by DNS-01 only.
 */
export function selectSolver(solvers: ACMESolver[], authz: AuthorizationForSelection, orderLabels: Record<string, string> = {}): SelectedSolver | undefined {
  const domain = authz.wildcard ? `*.${authz.identifier}` : authz.identifier;
  let best: { pick: SelectedSolver; score: Score } | undefined;
  for (const solver of solvers) {
    const type = solverChallengeType(solver);
    if (!type || (authz.wildcard && type !== 'dns-01')) continue;
    const challenge = authz.challenges.find((c) => c.type === type);
    if (!challenge) continue;
    const score = scoreOf(solver, domain, orderLabels);
    // A solver without selector scores zero everywhere, so it only ever fills an empty pick.
    if (score && (!best || beats(score, best.score))) best = { pick: { solver, challenge }, score };
  }
  return best?.pick;
}
