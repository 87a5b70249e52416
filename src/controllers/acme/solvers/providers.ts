// Solvers that reach the user's own web and DNS servers (issue 14), chosen before the built-in
// ones in challenges/solvers.ts: the webroot for HTTP-01 when the server is configured with one,
// the server's DNS-01 exec hooks for a `webhook: {groupName: certsmith.io, solverName: exec}`
// solver, and the DNS providers in dns01/. Returns undefined when the Challenge is for a built-in solver.
import { Challenge as ChallengeType, Order as OrderType } from '../../../api/resources.ts';
import type { Challenge, Order } from '../../../api/types.ts';
import type { ControllerOptions } from '../../../shared/controller-options.ts';
import type { ControllerContext } from '../../context.ts';
import type { ChallengeSolver } from './solver.ts';
import { selfCheckHTTP01 } from './http01.ts';
import { cleanUpWebroot, presentWebroot } from './webroot.ts';
import { ExecDNSHooks, selectsExecHook, type HookChallenge } from './dns01/exec-hook.ts';
import { remainingChallenges } from './dns01/remaining-challenges.ts';
import { checkTXT } from './dns01/txt-check.ts';
import { challengeRecordName } from './dns01/challenge-record.ts';
import { rfc2136Solver } from './dns01/rfc2136-solver.ts';
import { CloudflareClient, CLOUDFLARE_API, type CloudflareAuth } from './dns01/cloudflare.ts';
import { ProviderConfigError, readSecretKey } from './dns01/secret-ref.ts';
import { DigitalOceanClient, DIGITALOCEAN_API } from './dns01/digitalocean.ts';
import { accountFor, acmeDNSUpdate } from './dns01/acme-dns.ts';
import { Route53Solver, route53WebIdentity, type AwsKeys } from './dns01/route53.ts';
import { webhookSolver } from './webhook-solver.ts';
import { ambientCredentialsAllowed, ambientRefused } from './ambient-credentials.ts';
import { AZURE_ENVIRONMENTS, AZURE_IMDS, AzureDNSClient, azureDNSConfig, type AzureCredentialSource } from './dns01/azuredns.ts';
import { AkamaiDNSClient, akamaiConfig } from './dns01/akamai.ts';
import { applicationDefaultCredentials, CloudDNSClient, cloudDNSConfig, CLOUDDNS_API, parseGoogleCredentials, type GoogleCredentialSource } from './dns01/clouddns.ts';

function webrootSolver(ctx: ControllerContext, root: string, c: Challenge): ChallengeSolver {
  return {
    async present() {
      await presentWebroot(root, c.spec.token, c.spec.key);
    },
    async check() {
      // the user's web server answers on the port the CA connects to: 80, unless a test routes it elsewhere
      const port = ctx.options.acmeHTTP01SelfCheckPort ?? 80;
      return selfCheckHTTP01({ dnsName: c.spec.dnsName, token: c.spec.token, keyAuth: c.spec.key, port, nameservers: ctx.options.acmeHTTP01SolverNameservers });
    },
    async cleanUp() {
      await cleanUpWebroot(root, c.spec.token);
    },
  };
}

/** One hook runner per server configuration: it remembers each auth hook's output for its cleanup. */
const hookRunners = new WeakMap<ControllerOptions, ExecDNSHooks>();

function hooksOf(options: ControllerOptions): ExecDNSHooks {
  let h = hookRunners.get(options);
  if (!h) {
    h = new ExecDNSHooks({ authHook: options.dns01AuthHook, cleanupHook: options.dns01CleanupHook, legoExec: options.dns01Exec, timeoutMs: options.dns01HookTimeoutMs });
    hookRunners.set(options, h);
  }
  return h;
}

/** The order's names and how many of its DNS-01 challenges come after this one (certbot's hook variables). */
async function hookChallenge(ctx: ControllerContext, c: Challenge): Promise<HookChallenge> {
  const owner = c.metadata.ownerReferences?.find((r) => r.kind === 'Order');
  const ns = c.metadata.namespace;
  const order = owner ? await ctx.store.get<Order>(OrderType, ns, owner.name) : undefined;
  const ofOrder = owner ? (await ctx.store.list<Challenge>(ChallengeType, { namespace: ns })).items.filter((x) => x.metadata.ownerReferences?.some((r) => r.uid === owner.uid)) : [];
  return {
    domain: c.spec.dnsName,
    value: c.spec.key,
    remaining: remainingChallenges(c, ofOrder, (order?.status?.authorizations ?? []).map((a) => a.url)),
    allDomains: order?.spec.dnsNames?.length ? order.spec.dnsNames : [c.spec.wildcard ? `*.${c.spec.dnsName}` : c.spec.dnsName],
  };
}

function execHookSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  const hooks = hooksOf(ctx.options);
  const key = `${c.metadata.namespace}/${c.metadata.name}`;
  return {
    async present() {
      await hooks.present(key, await hookChallenge(ctx, c));
    },
    check: () => checkTXT(ctx, c),
    async cleanUp() {
      await hooks.cleanUp(key, await hookChallenge(ctx, c));
    },
  };
}

/** The credentials cert-manager's cloudflare solver takes: an API token, else the global key and the account email. */
export async function cloudflareAuth(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): Promise<CloudflareAuth> {
  const cfg = c.spec.solver.dns01!.cloudflare!;
  if (cfg.apiTokenSecretRef) {
    if (cfg.apiKeySecretRef) throw new ProviderConfigError('cloudflare: set apiTokenSecretRef or apiKeySecretRef, not both');
    return { token: await readSecretKey(ctx, c, cfg.apiTokenSecretRef, 'cloudflare.apiTokenSecretRef') };
  }
  if (!cfg.apiKeySecretRef) throw new ProviderConfigError('cloudflare: apiTokenSecretRef or apiKeySecretRef (with email) is required');
  if (!cfg.email) throw new ProviderConfigError('cloudflare: email is required with apiKeySecretRef');
  return { apiKey: await readSecretKey(ctx, c, cfg.apiKeySecretRef, 'cloudflare.apiKeySecretRef'), email: cfg.email };
}

/** A DNS API that adds and removes one TXT value at a name, leaving the name's other values alone. */
interface TXTRecordAPI {
  present(fqdn: string, value: string): Promise<void>;
  cleanUp(fqdn: string, value: string): Promise<void>;
}

/** Present and clean up `_acme-challenge.NAME` (or where its CNAMEs lead) through a provider's API; the client is made per call, so credentials are read fresh. */
function txtRecordSolver(ctx: ControllerContext, c: Challenge, client: () => Promise<TXTRecordAPI>): ChallengeSolver {
  return {
    async present() {
      await (await client()).present(await challengeRecordName(ctx, c), c.spec.key);
    },
    check: () => checkTXT(ctx, c),
    async cleanUp() {
      await (await client()).cleanUp(await challengeRecordName(ctx, c), c.spec.key);
    },
  };
}

function cloudflareSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  return txtRecordSolver(ctx, c, async () => new CloudflareClient(await cloudflareAuth(ctx, c), ctx.options.dns01ProviderAPIs?.cloudflare ?? CLOUDFLARE_API));
}

function digitaloceanSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  return txtRecordSolver(ctx, c, async () => new DigitalOceanClient(
    await readSecretKey(ctx, c, c.spec.solver.dns01!.digitalocean!.tokenSecretRef, 'digitalocean.tokenSecretRef'),
    ctx.options.dns01ProviderAPIs?.digitalocean ?? DIGITALOCEAN_API,
  ));
}

function acmeDNSSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  const cfg = c.spec.solver.dns01!.acmeDNS!;
  return {
    async present() {
      const ref = cfg.accountSecretRef;
      const json = await readSecretKey(ctx, c, ref, 'acmeDNS.accountSecretRef');
      await acmeDNSUpdate(cfg.host, accountFor(json, c.spec.dnsName, `secret "${ref.name}" key "${ref.key ?? ''}"`), c.spec.key);
    },
    // the CNAME from _acme-challenge.NAME to the account's fulldomain is followed by the resolver
    check: () => checkTXT(ctx, c),
    // acme-dns has no delete: it keeps the two latest values per account
    async cleanUp() {},
  };
}

/** Static keys from the Issuer, else the AWS default credential chain where ambientCredentialsAllowed. */
export async function route53Keys(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): Promise<AwsKeys | undefined> {
  const cfg = c.spec.solver.dns01!.route53!;
  // auth.kubernetes: the ServiceAccount token is exchanged for the role; keys are not used
  if (cfg.auth) return undefined;
  const id = cfg.accessKeyIDSecretRef ? await readSecretKey(ctx, c, cfg.accessKeyIDSecretRef, 'route53.accessKeyIDSecretRef') : cfg.accessKeyID;
  const secret = cfg.secretAccessKeySecretRef ? await readSecretKey(ctx, c, cfg.secretAccessKeySecretRef, 'route53.secretAccessKeySecretRef') : undefined;
  if (id && secret) return { accessKeyId: id, secretAccessKey: secret };
  if (id || secret) throw new ProviderConfigError('route53: accessKeyID (or accessKeyIDSecretRef) and secretAccessKeySecretRef go together');
  if (!ambientCredentialsAllowed(ctx, c.spec.issuerRef.kind)) throw ambientRefused(c.spec.issuerRef.kind, `route53: an ${c.spec.issuerRef.kind ?? 'Issuer'} needs accessKeyID and secretAccessKeySecretRef`, 'ambient AWS credentials are');
  return undefined;
}

function route53Solver(ctx: ControllerContext, c: Challenge): ChallengeSolver {
  const cfg = c.spec.solver.dns01!.route53!;
  return txtRecordSolver(ctx, c, async () => new Route53Solver({
    credentials: await route53Keys(ctx, c), role: cfg.role, region: cfg.region, hostedZoneID: cfg.hostedZoneID,
    endpoint: ctx.options.dns01ProviderAPIs?.route53, stsEndpoint: ctx.options.dns01ProviderAPIs?.sts, webIdentityToken: route53WebIdentity(ctx, c),
  }));
}

/**
 * The service account key of serviceAccountSecretRef, else application default credentials where
 * ambientCredentialsAllowed.
 */
export async function cloudDNSCredentials(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): Promise<GoogleCredentialSource> {
  const cfg = cloudDNSConfig(c.spec.solver.dns01!.cloudDNS);
  if (cfg.serviceAccountSecretRef) {
    const ref = cfg.serviceAccountSecretRef;
    const json = await readSecretKey(ctx, c, ref, 'cloudDNS.serviceAccountSecretRef');
    return { key: parseGoogleCredentials(json, `cloudDNS.serviceAccountSecretRef: secret "${ref.name}" key "${ref.key ?? ''}"`) };
  }
  if (!ambientCredentialsAllowed(ctx, c.spec.issuerRef.kind)) throw ambientRefused(c.spec.issuerRef.kind, `cloudDNS: an ${c.spec.issuerRef.kind ?? 'Issuer'} needs serviceAccountSecretRef`, 'application default credentials are');
  return applicationDefaultCredentials(ctx.options.dns01ProviderAPIs?.googleMetadata);
}

export async function cloudDNSClient(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): Promise<CloudDNSClient> {
  const cfg = cloudDNSConfig(c.spec.solver.dns01!.cloudDNS);
  return new CloudDNSClient(await cloudDNSCredentials(ctx, c), cfg.project, cfg.hostedZoneName, ctx.options.dns01ProviderAPIs?.cloudDNS ?? CLOUDDNS_API, () => ctx.clock.now().getTime());
}

/**
 * A service principal (clientID, clientSecretSecretRef, tenantID), else, where
 * ambientCredentialsAllowed, Azure Workload Identity when its webhook set AZURE_FEDERATED_TOKEN_FILE,
 * else the host's managed identity: cert-manager's order.
 */
export async function azureDNSCredentials(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>, env: NodeJS.ProcessEnv = process.env): Promise<AzureCredentialSource> {
  const cfg = azureDNSConfig(c.spec.solver.dns01!.azureDNS);
  const apis = ctx.options.dns01ProviderAPIs;
  if (cfg.clientID) {
    if (cfg.managedIdentity) throw new ProviderConfigError('azureDNS: set clientID (a service principal) or managedIdentity, not both');
    if (!cfg.tenantID) throw new ProviderConfigError('azureDNS.tenantID is required with clientID');
    if (!cfg.clientSecretSecretRef) throw new ProviderConfigError('azureDNS.clientSecretSecretRef is required with clientID');
    const secret = await readSecretKey(ctx, c, cfg.clientSecretSecretRef, 'azureDNS.clientSecretSecretRef');
    return { clientSecret: { authority: apis?.azureAuthority ?? AZURE_ENVIRONMENTS[cfg.environment].authority, tenantID: cfg.tenantID, clientID: cfg.clientID, secret } };
  }
  if (cfg.clientSecretSecretRef || cfg.tenantID) throw new ProviderConfigError('azureDNS: clientSecretSecretRef and tenantID go with clientID');
  if (!ambientCredentialsAllowed(ctx, c.spec.issuerRef.kind)) throw ambientRefused(c.spec.issuerRef.kind, `azureDNS: an ${c.spec.issuerRef.kind ?? 'Issuer'} needs clientID, clientSecretSecretRef and tenantID`, 'managed identity is');
  const mi = cfg.managedIdentity;
  if (env.AZURE_FEDERATED_TOKEN_FILE) {
    const clientID = mi?.clientID || env.AZURE_CLIENT_ID;
    const tenantID = mi?.tenantID || env.AZURE_TENANT_ID;
    if (!clientID) throw new ProviderConfigError('azureDNS: workload identity (AZURE_FEDERATED_TOKEN_FILE is set) needs a client: managedIdentity.clientID or AZURE_CLIENT_ID');
    if (!tenantID) throw new ProviderConfigError('azureDNS: workload identity (AZURE_FEDERATED_TOKEN_FILE is set) needs a tenant: managedIdentity.tenantID or AZURE_TENANT_ID');
    const authority = apis?.azureAuthority ?? env.AZURE_AUTHORITY_HOST?.replace(/\/+$/, '') ?? AZURE_ENVIRONMENTS[cfg.environment].authority;
    return { workloadIdentity: { authority, tenantID, clientID, tokenFile: env.AZURE_FEDERATED_TOKEN_FILE } };
  }
  return { managedIdentity: { imds: apis?.azureIMDS ?? AZURE_IMDS, clientID: mi?.clientID, resourceID: mi?.resourceID } };
}

export async function azureDNSClient(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): Promise<AzureDNSClient> {
  const cfg = azureDNSConfig(c.spec.solver.dns01!.azureDNS);
  return new AzureDNSClient(await azureDNSCredentials(ctx, c), cfg, ctx.options.dns01ProviderAPIs?.azureARM, () => ctx.clock.now().getTime());
}

/** Akamai Edge DNS with the EdgeGrid credentials of the three Secrets. */
export async function akamaiClient(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): Promise<AkamaiDNSClient> {
  const cfg = akamaiConfig(c.spec.solver.dns01!.akamai);
  const creds = {
    clientToken: await readSecretKey(ctx, c, cfg.clientTokenSecretRef, 'akamai.clientTokenSecretRef'),
    clientSecret: await readSecretKey(ctx, c, cfg.clientSecretSecretRef, 'akamai.clientSecretSecretRef'),
    accessToken: await readSecretKey(ctx, c, cfg.accessTokenSecretRef, 'akamai.accessTokenSecretRef'),
  };
  return new AkamaiDNSClient(creds, cfg.serviceConsumerDomain, ctx.options.dns01ProviderAPIs?.akamai, () => ctx.clock.now().getTime());
}

export function providerSolver(ctx: ControllerContext, c: Challenge): ChallengeSolver | undefined {
  if (c.spec.type === 'HTTP-01') {
    const root = ctx.options.acmeHTTP01Webroot;
    if (root && ctx.options.http01Mode !== 'kubernetes') return webrootSolver(ctx, root, c);
    return undefined;
  }
  const dns01 = c.spec.solver.dns01;
  if (selectsExecHook(dns01)) return execHookSolver(ctx, c);
  // all four TSIG algorithms and `protocol` (the built-in one in challenges/solvers.ts has SHA-256/512 over UDP only)
  if (dns01?.rfc2136) return rfc2136Solver(ctx, c);
  if (dns01?.cloudflare) return cloudflareSolver(ctx, c);
  if (dns01?.digitalocean) return digitaloceanSolver(ctx, c);
  if (dns01?.acmeDNS) return acmeDNSSolver(ctx, c);
  if (dns01?.route53) return route53Solver(ctx, c);
  if (dns01?.cloudDNS) return txtRecordSolver(ctx, c, () => cloudDNSClient(ctx, c));
  if (dns01?.azureDNS) return txtRecordSolver(ctx, c, () => azureDNSClient(ctx, c));
  if (dns01?.akamai) return txtRecordSolver(ctx, c, () => akamaiClient(ctx, c));
  if (dns01?.webhook) return webhookSolver(ctx, c);
  return undefined;
}
