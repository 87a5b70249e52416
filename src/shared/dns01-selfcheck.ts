import dns from 'node:dns';
import net from 'node:net';

export interface DNS01CheckResult {
  ok: boolean;
  /** Why the check failed, for Challenge.status.reason. */
  reason?: string;
  /** TXT values seen, per server queried. */
  seen: Record<string, string[]>;
}

export function resolverFor(servers: string[]): dns.promises.Resolver {
  // No retries beyond one: the controller re-runs the check on its own schedule.
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers(servers);
  return resolver;
}

/** The name or the record type does not exist (as opposed to a server that failed to answer). */
export function absent(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === dns.NODATA || code === dns.NOTFOUND;
}

function trimDot(name: string): string {
  return name.replace(/\.$/, '');
}

/**
 * The zone that holds fqdn: the closest enclosing name with an SOA record, found by walking up the labels
 * through the given servers (HOST:PORT).
 */
export async function findZone(fqdn: string, nameservers: string[]): Promise<string> {
  const resolver = resolverFor(nameservers);
  const labels = trimDot(fqdn).split('.');
  for (let i = 0; i < labels.length; i++) {
    const candidate = labels.slice(i).join('.');
    try {
      await resolver.resolveSoa(candidate);
      return candidate;
    } catch (e) {
      if (!absent(e)) throw new Error(`SOA lookup of ${candidate} via ${nameservers.join(', ')}: ${(e as Error).message}`);
    }
  }
  throw new Error(`no zone found for ${fqdn} via ${nameservers.join(', ')}`);
}

async function txtValues(resolver: dns.promises.Resolver, fqdn: string): Promise<string[]> {
  try {
    // A TXT record may be split into 255-byte strings; they form one value.
    return (await resolver.resolveTxt(trimDot(fqdn))).map((chunks) => chunks.join(''));
  } catch (e) {
    if (absent(e)) return [];
    throw e;
  }
}

/**
 * Whether the TXT record at fqdn carries value. By default asks the given servers (HOST:PORT). With
 * authoritativeOnly it finds the zone and its NS hosts through them, and asks every authoritative server
 * (on authoritativePort, default 53), all of which must have the value, as cert-manager does.
 */
export async function checkDNS01(opts: {
  fqdn: string;
  value: string;
  nameservers: string[];
  authoritativeOnly?: boolean;
  authoritativePort?: number;
}): Promise<DNS01CheckResult> {
  const seen: Record<string, string[]> = {};
  let servers = opts.nameservers;
  try {
    if (opts.authoritativeOnly) servers = await authoritativeServers(opts.fqdn, opts.nameservers, opts.authoritativePort ?? 53);
    for (const server of servers) {
      seen[server] = await txtValues(resolverFor([server]), opts.fqdn);
    }
  } catch (e) {
    return { ok: false, reason: `DNS lookup of ${opts.fqdn}: ${(e as Error).message}`, seen };
  }
  const missing = servers.filter((s) => !seen[s].includes(opts.value));
  if (missing.length === 0) return { ok: true, seen };
  return {
    ok: false,
    reason: `TXT record ${opts.fqdn} does not have the expected value on ${missing.join(', ')} (found ${
      missing.map((s) => JSON.stringify(seen[s])).join(', ')
    })`,
    seen,
  };
}

async function authoritativeServers(fqdn: string, nameservers: string[], port: number): Promise<string[]> {
  const zone = await findZone(fqdn, nameservers);
  const resolver = resolverFor(nameservers);
  const hosts = await resolver.resolveNs(zone);
  const servers: string[] = [];
  for (const host of hosts) {
    const addrs = net.isIP(host) ? [host] : await resolver.resolve4(host).catch(() => [] as string[]);
    if (!addrs.length) throw new Error(`no address for nameserver ${host} of zone ${zone}`);
    servers.push(...addrs.map((a) => `${a}:${port}`));
  }
  if (!servers.length) throw new Error(`zone ${zone} has no NS records`);
  return [...new Set(servers)];
}
