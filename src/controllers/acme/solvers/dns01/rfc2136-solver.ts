// The Issuer's `dns01.rfc2136` solver: cert-manager's fields, all four TSIG algorithms it accepts
// (HMACMD5 when tsigAlgorithm is empty, as cert-manager defaults) and its `protocol` (UDP, or TCP
// only for servers and firewalls that take updates over TCP alone).
import { SecretType } from '../../../../api/resources.ts';
import type { Secret } from '../../../../api/meta.ts';
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../../../shared/issuer-lookup.ts';
import { decodeBase64 } from '../../../../shared/parse-memo.ts';
import type { ChallengeSolver } from '../solver.ts';
import { addTXT, removeTXT, type TsigAlgorithm, type TsigKey } from './rfc2136.ts';
import { findZone } from '../../../../shared/dns01-selfcheck.ts';
import { checkTXT } from './txt-check.ts';
import { challengeRecordName } from './challenge-record.ts';

const TSIG_ALGORITHMS: Record<string, TsigAlgorithm> = {
  HMACMD5: 'hmac-md5', HMACSHA1: 'hmac-sha1', HMACSHA256: 'hmac-sha256', HMACSHA512: 'hmac-sha512',
};

/** cert-manager's default when tsigAlgorithm is empty */
export const DEFAULT_TSIG_ALGORITHM = 'HMACMD5';

export function tsigAlgorithmOf(name: string | undefined): TsigAlgorithm {
  const algorithm = TSIG_ALGORITHMS[(name || DEFAULT_TSIG_ALGORITHM).toUpperCase()];
  if (!algorithm) throw new Error(`TSIG algorithm ${name} is not supported: use HMACMD5, HMACSHA1, HMACSHA256 or HMACSHA512`);
  return algorithm;
}

/** "1.2.3.4", "ns.example:5353", "[::1]:53" → HOST:PORT with cert-manager's default port 53. */
export function withDefaultPort(server: string): string {
  if (/^\[.*\]:\d+$/.test(server) || /^[^:]+:\d+$/.test(server)) return server;
  return server.includes(':') ? `[${server.replace(/^\[|\]$/g, '')}]:53` : `${server}:53`;
}

export function rfc2136Solver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  const cfg = c.spec.solver.dns01!.rfc2136!;
  const nameserver = withDefaultPort(cfg.nameserver);
  const protocol = cfg.protocol === 'TCP' ? 'TCP' : 'UDP';
  async function tsigKey(): Promise<TsigKey> {
    const ref = cfg.tsigSecretSecretRef;
    if (!ref || !cfg.tsigKeyName) throw new Error('rfc2136 solver without tsigKeyName and tsigSecretSecretRef: certsmith only sends TSIG-signed updates');
    const algorithm = tsigAlgorithmOf(cfg.tsigAlgorithm);
    const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
    if (!issuer) throw new Error(`issuer "${c.spec.issuerRef.name}" not found`);
    const ns = issuerResourceNamespace(ctx, issuer);
    const secret = await ctx.store.get<Secret>(SecretType, ns, ref.name);
    const value = decodeBase64(secret?.data?.[ref.key ?? '']).trim();
    if (!value) throw new Error(`TSIG secret key "${ref.key}" not found in secret "${ns}/${ref.name}"`);
    return { name: cfg.tsigKeyName, algorithm, secretBase64: value };
  }
  async function change() {
    const tsig = await tsigKey();
    const fqdn = await challengeRecordName(ctx, c);
    // node:dns asks for the SOA over UDP: a server reached over TCP only cannot answer that, so
    // the zone is then found through the recursive servers, as cert-manager always does
    const recursive = ctx.options.dns01RecursiveNameservers;
    const zone = await findZone(fqdn, protocol === 'TCP' && recursive?.length ? recursive : [nameserver]);
    return { nameserver, zone, fqdn, value: c.spec.key, tsig, protocol } as const;
  }
  return {
    async present() {
      await addTXT({ ...(await change()), ttl: 60 });
    },
    check: () => checkTXT(ctx, c),
    async cleanUp() {
      await removeTXT(await change());
    },
  };
}
