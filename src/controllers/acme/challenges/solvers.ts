// Present, self-check and clean up one Challenge with the solver its spec names: HTTP-01 from the
// embedded responder or (http01Mode 'kubernetes') from a solver Pod, Service and Ingress, or
// DNS-01 through RFC 2136.
import dns from 'node:dns';
import { SecretType } from '../../../api/resources.ts';
import type { Secret } from '../../../api/meta.ts';
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../requests/controller.ts';
import { decodeBase64 } from '../../certificates/parsed.ts';
import { selfCheckHTTP01 } from '../solvers/http01.ts';
import { kubernetesHTTP01Solver } from '../solvers/http01-kube/solver.ts';
import { addTXT, removeTXT, type TsigAlgorithm, type TsigKey } from '../solvers/dns01/rfc2136.ts';
import { checkDNS01, findZone } from '../solvers/dns01/selfcheck.ts';
import type { AcmeRuntime } from '../runtime.ts';
import { providerSolver } from '../solvers/providers.ts';

export interface CheckResult {
  ok: boolean;
  reason?: string;
}

export interface ChallengeSolver {
  present(): Promise<void>;
  /**
   * Serves again what a restart lost, without side effects elsewhere: the embedded HTTP-01
   * responder keeps tokens in memory, so a Challenge presented or accepted by an earlier process
   * must be given back to it before the CA looks. Absent for solvers whose state outlives us.
   */
  restore?(): Promise<void>;
  check(): Promise<CheckResult>;
  cleanUp(): Promise<void>;
}

const TSIG_ALGORITHMS: Record<string, TsigAlgorithm> = { HMACSHA256: 'hmac-sha256', HMACSHA512: 'hmac-sha512' };

/** "1.2.3.4", "ns.example:5353", "[::1]:53" → HOST:PORT with cert-manager's default port 53. */
export function withDefaultPort(server: string): string {
  if (/^\[.*\]:\d+$/.test(server) || /^[^:]+:\d+$/.test(server)) return server;
  return server.includes(':') ? `[${server.replace(/^\[|\]$/g, '')}]:53` : `${server}:53`;
}

function http01Solver(ctx: ControllerContext, rt: AcmeRuntime, c: Challenge): ChallengeSolver {
  return {
    async present() {
      await (await rt.http01()).present(c.spec.token, c.spec.key);
    },
    async restore() {
      await (await rt.http01()).present(c.spec.token, c.spec.key);
    },
    async check() {
      const server = await rt.http01();
      // Tokens live in memory: after a restart a presented challenge must be served again.
      await server.present(c.spec.token, c.spec.key);
      return selfCheckHTTP01({ dnsName: c.spec.dnsName, token: c.spec.token, keyAuth: c.spec.key, port: server.port, nameservers: ctx.options.acmeHTTP01SolverNameservers });
    },
    async cleanUp() {
      await (await rt.http01()).cleanUp(c.spec.token);
    },
  };
}

function rfc2136Solver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  const cfg = c.spec.solver.dns01!.rfc2136!;
  const nameserver = withDefaultPort(cfg.nameserver);
  const fqdn = `_acme-challenge.${c.spec.dnsName}`;
  async function tsigKey(): Promise<TsigKey> {
    const ref = cfg.tsigSecretSecretRef;
    if (!ref || !cfg.tsigKeyName) throw new Error('rfc2136 solver without tsigKeyName and tsigSecretSecretRef: certsmith only sends TSIG-signed updates');
    const algorithm = TSIG_ALGORITHMS[(cfg.tsigAlgorithm ?? 'HMACMD5').toUpperCase()];
    if (!algorithm) throw new Error(`TSIG algorithm ${cfg.tsigAlgorithm ?? 'HMACMD5'} is not supported: use HMACSHA256 or HMACSHA512`);
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
    const zone = await findZone(fqdn, [nameserver]);
    return { nameserver, zone, fqdn, value: c.spec.key, tsig };
  }
  return {
    async present() {
      await addTXT({ ...(await change()), ttl: 60 });
    },
    async check() {
      const only = !!ctx.options.dns01RecursiveNameserversOnly;
      const servers = ctx.options.dns01RecursiveNameservers?.length ? ctx.options.dns01RecursiveNameservers : dns.getServers();
      return checkDNS01({ fqdn, value: c.spec.key, nameservers: servers, authoritativeOnly: !only });
    },
    async cleanUp() {
      await removeTXT(await change());
    },
  };
}

/** Whether the Challenge is served by the in-process HTTP-01 responder, which dies with the process. */
export function usesEmbeddedResponder(ctx: ControllerContext, c: Challenge): boolean {
  return c.spec.type === 'HTTP-01' && ctx.options.http01Mode !== 'kubernetes';
}

export function solverFor(ctx: ControllerContext, rt: AcmeRuntime, c: Challenge): ChallengeSolver {
  const own = providerSolver(ctx, c); // webroot, exec hook and DNS providers (issue 14)
  if (own) return own;
  if (c.spec.type === 'HTTP-01') {
    if (!c.spec.solver.http01) throw new Error('HTTP-01 challenge without an http01 solver');
    return ctx.options.http01Mode === 'kubernetes' ? kubernetesHTTP01Solver(ctx, c) : http01Solver(ctx, rt, c);
  }
  const dns01 = c.spec.solver.dns01;
  if (!dns01) throw new Error('DNS-01 challenge without a dns01 solver');
  if (dns01.rfc2136) return rfc2136Solver(ctx, c);
  const provider = Object.keys(dns01).find((k) => k !== 'cnameStrategy') ?? 'none';
  throw new Error(`DNS-01 provider "${provider}" is not supported by certsmith; use rfc2136`);
}
