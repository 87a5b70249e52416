// Whether an ACME Issuer's DNS-01 solvers can work at all, checked when the Issuer is reconciled
// rather than when a Challenge first needs them: a missing Secret or key, credentials the
// provider refuses, a zone in a selector the account does not hold, an exec solver on a server
// without hooks. Only what is certainly broken counts; a provider that cannot be reached
// (network, 5xx, throttling) is left to the Challenges and their backoff.
import type { ACMESolver, Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { ProviderConfigError, readSecretKey } from './dns01/secret-ref.ts';
import { CloudflareClient, CLOUDFLARE_API } from './dns01/cloudflare.ts';
import { DigitalOceanClient, DIGITALOCEAN_API } from './dns01/digitalocean.ts';
import { Route53Solver, route53WebIdentity } from './dns01/route53.ts';
import { accountFor } from './dns01/acme-dns.ts';
import { selectsExecHook } from './dns01/exec-hook.ts';
import { requireTsig, tsigAlgorithmOf } from './dns01/rfc2136-solver.ts';
import { akamaiClient, azureDNSClient, cloudDNSClient, cloudflareAuth, route53Keys } from './providers.ts';

export const SOLVER_CONFIG_REASON = 'InvalidSolverConfig';
interface SolverIssuer {
  kind: string;
  metadata: { name?: string; namespace?: string };
}

/** A stand-in Challenge for the credential readers: which Issuer, which solver. */
function probe(issuer: SolverIssuer, solver: ACMESolver): Pick<Challenge, 'metadata' | 'spec'> {
  return {
    metadata: { namespace: issuer.metadata.namespace },
    spec: { issuerRef: { name: issuer.metadata.name!, kind: issuer.kind, group: 'cert-manager.io' }, solver, dnsName: '', key: '', token: '', type: 'DNS-01', url: '', authorizationURL: '' },
  } as unknown as Pick<Challenge, 'metadata' | 'spec'>;
}

async function checkSolver(ctx: ControllerContext, issuer: SolverIssuer, solver: ACMESolver): Promise<void> {
  const dns01 = solver.dns01;
  if (!dns01) return;
  const c = probe(issuer, solver);
  // zones the selector names: each must be one the account holds (the probe name is any name below it)
  const probes = (solver.selector?.dnsZones ?? []).map((z) => `_acme-challenge.${z}`);
  const apis = ctx.options.dns01ProviderAPIs;
  if (selectsExecHook(dns01)) {
    const o = ctx.options;
    if (!o.dns01AuthHook && !o.dns01Exec) throw new ProviderConfigError('the dns01 webhook solver certsmith.io/exec needs a server started with --dns01-auth-hook or --dns01-exec');
  } else if (dns01.rfc2136) {
    tsigAlgorithmOf(dns01.rfc2136.tsigAlgorithm);
    await readSecretKey(ctx, c, requireTsig(dns01.rfc2136).tsigSecretSecretRef, 'rfc2136.tsigSecretSecretRef');
  } else if (dns01.cloudflare) {
    const client = new CloudflareClient(await cloudflareAuth(ctx, c), apis?.cloudflare ?? CLOUDFLARE_API);
    // one authenticated call proves the credentials even when no zone is named
    for (const p of probes.length ? probes : ['_acme-challenge.credentials-check.invalid']) {
      await client.zoneFor(p).catch((e) => { if (probes.length || e instanceof ProviderConfigError && /HTTP 40[13]/.test(e.message)) throw e; });
    }
  } else if (dns01.digitalocean) {
    const client = new DigitalOceanClient(await readSecretKey(ctx, c, dns01.digitalocean.tokenSecretRef, 'digitalocean.tokenSecretRef'), apis?.digitalocean ?? DIGITALOCEAN_API);
    for (const p of probes.length ? probes : ['_acme-challenge.credentials-check.invalid']) {
      await client.zoneFor(p).catch((e) => { if (probes.length || e instanceof ProviderConfigError && /HTTP 40[13]/.test(e.message)) throw e; });
    }
  } else if (dns01.route53) {
    const r = dns01.route53;
    const solver53 = new Route53Solver({ credentials: await route53Keys(ctx, c), role: r.role, region: r.region, hostedZoneID: r.hostedZoneID, endpoint: apis?.route53, stsEndpoint: apis?.sts, webIdentityToken: route53WebIdentity(ctx, c) });
    for (const p of probes.length ? probes : ['_acme-challenge.credentials-check.invalid']) {
      await solver53.zoneFor(p).catch((e) => { if (probes.length || e instanceof ProviderConfigError && !/^Route 53: no hosted zone /.test(e.message)) throw e; });
    }
  } else if (dns01.cloudDNS) {
    const client = await cloudDNSClient(ctx, c);
    // with hostedZoneName, reading that zone proves credentials, project and zone at once
    for (const p of probes.length ? probes : ['_acme-challenge.credentials-check.invalid']) {
      await client.zoneFor(p).catch((e) => { if (probes.length || e instanceof ProviderConfigError && !/no managed zone/.test(e.message)) throw e; });
    }
  } else if (dns01.azureDNS) {
    const client = await azureDNSClient(ctx, c);
    // reading the zone proves credentials, subscription, resource group and zone at once
    await client.checkZone();
    for (const z of solver.selector?.dnsZones ?? []) client.relativeName(`_acme-challenge.${z}`);
  } else if (dns01.akamai) {
    const client = await akamaiClient(ctx, c);
    // one signed call proves the credentials even when no zone is named
    for (const p of probes.length ? probes : ['_acme-challenge.credentials-check.invalid']) {
      await client.zoneFor(p).catch((e) => { if (probes.length || e instanceof ProviderConfigError && /HTTP 40[13]/.test(e.message)) throw e; });
    }
  } else if (dns01.acmeDNS) {
    const ref = dns01.acmeDNS.accountSecretRef;
    const json = await readSecretKey(ctx, c, ref, 'acmeDNS.accountSecretRef');
    for (const z of solver.selector?.dnsNames ?? []) accountFor(json, z, `secret "${ref.name}" key "${ref.key ?? ''}"`);
  }
}

/** The first DNS-01 solver of the Issuer that cannot work, as a Ready=False reason and message; undefined when none is known broken. */
export async function brokenSolver(ctx: ControllerContext, issuer: SolverIssuer & { spec?: { acme?: { solvers?: ACMESolver[] } } }): Promise<{ reason: string; message: string } | undefined> {
  const solvers = issuer.spec?.acme?.solvers ?? [];
  for (const [i, s] of solvers.entries()) {
    try {
      await checkSolver(ctx, issuer, s);
    } catch (e) {
      if (e instanceof ProviderConfigError || /TSIG algorithm/.test((e as Error).message)) {
        return { reason: SOLVER_CONFIG_REASON, message: `solvers[${i}].dns01: ${(e as Error).message}` };
      }
      // unreachable, 5xx, throttled: not known to be broken
    }
  }
  return undefined;
}
