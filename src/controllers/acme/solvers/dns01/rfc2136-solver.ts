// The Issuer's `dns01.rfc2136` solver: cert-manager's fields, all four TSIG algorithms it accepts
// (HMACMD5 when tsigAlgorithm is empty, as cert-manager defaults) and its `protocol` (UDP, or TCP
// only for servers and firewalls that take updates over TCP alone).
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { ProviderConfigError, readSecretKey, type SecretKeyRef } from './secret-ref.ts';
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

/**
 * The TSIG key name and Secret: required, although cert-manager would send unsigned updates
 * without them; an open nameserver is not something to configure by leaving fields out.
 */
export function requireTsig(cfg: { tsigKeyName?: string; tsigSecretSecretRef?: SecretKeyRef }): { tsigKeyName: string; tsigSecretSecretRef: SecretKeyRef } {
  if (!cfg.tsigKeyName || !cfg.tsigSecretSecretRef?.name) {
    throw new ProviderConfigError('rfc2136 needs tsigKeyName and tsigSecretSecretRef: certsmith only sends TSIG-signed updates');
  }
  return { tsigKeyName: cfg.tsigKeyName, tsigSecretSecretRef: cfg.tsigSecretSecretRef };
}

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
    const { tsigKeyName, tsigSecretSecretRef } = requireTsig(cfg);
    const algorithm = tsigAlgorithmOf(cfg.tsigAlgorithm);
    return { name: tsigKeyName, algorithm, secretBase64: await readSecretKey(ctx, c, tsigSecretSecretRef, 'rfc2136.tsigSecretSecretRef') };
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
