// DNS-01 through Amazon Route 53 with the AWS SDK v3 client, which carries what we must not
// hand-write: SigV4 request signing, the default credential chain (environment, shared
// config/profile, web identity/IRSA, container and instance metadata), STS role assumption and
// retries of throttled calls with backoff. cert-manager's `dns01.route53` fields.
//
// A TXT name is one record set in Route 53, possibly holding other values (another client's
// challenge, a verification string): present adds our value to the set and cleanup removes only
// it, deleting the set only when ours was the last value. Each change is waited for until INSYNC.
//
// `auth.kubernetes.serviceAccountRef` (cert-manager v1.15+): a token for that ServiceAccount from
// the cluster's TokenRequest API (audiences default sts.amazonaws.com, 600 s, in the Issuer's
// namespace or the cluster resource namespace, as cert-manager's dns.go createToken) is exchanged
// for `role` at STS AssumeRoleWithWebIdentity, an unsigned call; any static keys are then unused.
// The embedded server has no ServiceAccount tokens: there such a solver is refused with the reason.
//   https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRoleWithWebIdentity.html
import type { Change, Route53Client, ResourceRecordSet } from '@aws-sdk/client-route-53';
import type { Challenge } from '../../../../api/types.ts';
import type { ControllerContext } from '../../../context.ts';
import { issuerResourceNamespace, lookupIssuer } from '../../../../shared/issuer-lookup.ts';
import { StoreError } from '../../../../store/store.ts';
import { ProviderConfigError } from './secret-ref.ts';
import { throttledError } from './throttling.ts';
import { quotedTxt, txtValue } from './txt-rdata.ts';

export interface AwsKeys {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface Route53Options {
  /** static keys; undefined uses the SDK's default credential chain */
  credentials?: AwsKeys;
  role?: string;
  region?: string;
  hostedZoneID?: string;
  /** tests only: a loopback endpoint */
  endpoint?: string;
  /** tests only: a loopback STS endpoint for `role` */
  stsEndpoint?: string;
  /** a web identity token (route53.auth.kubernetes) to exchange for `role`, asked each time credentials are needed */
  webIdentityToken?: () => Promise<string>;
  /** how long to wait for INSYNC */
  syncTimeoutMs?: number;
}

const TTL = 10;
const MAX_ZONE_PAGES = 20;

/** errors no retry will fix until someone changes the Issuer or its Secret */
const CONFIG_ERRORS = new Set(['InvalidClientTokenId', 'SignatureDoesNotMatch', 'AccessDenied', 'AccessDeniedException', 'UnrecognizedClientException', 'NoSuchHostedZone', 'CredentialsProviderError',
  'InvalidIdentityTokenException', 'InvalidIdentityToken', 'IDPRejectedClaimException', 'ExpiredTokenException', 'ProviderConfigError']);

/** Route 53's throttling answers (400): too many requests, or a change to the same zone still in progress */
const THROTTLED = new Set(['Throttling', 'ThrottlingException', 'PriorRequestNotComplete']);

/** cert-manager's default audience of the ServiceAccount token, and its lifetime */
export const ROUTE53_TOKEN_AUDIENCE = 'sts.amazonaws.com';
export const ROUTE53_TOKEN_SECONDS = 600;
export const ROUTE53_KUBERNETES_AUTH_EMBEDDED = 'route53.auth.kubernetes is not supported on the embedded server (certsmith server): it has no ServiceAccount tokens to exchange at STS; use accessKeyID and secretAccessKeySecretRef (with role), or certsmith controller against a cluster';

/**
 * The token source of `route53.auth.kubernetes`, or undefined when the solver does not use it.
 * Refuses at once what cannot work: no name, no role, or no TokenRequest API (the embedded server).
 */
export function route53WebIdentity(ctx: ControllerContext, c: Pick<Challenge, 'metadata' | 'spec'>): (() => Promise<string>) | undefined {
  const cfg = c.spec.solver.dns01!.route53!;
  if (!cfg.auth) return undefined;
  const ref = cfg.auth.kubernetes?.serviceAccountRef;
  if (!ref?.name) throw new ProviderConfigError('route53.auth.kubernetes.serviceAccountRef.name is required');
  if (!cfg.role) throw new ProviderConfigError('route53.role is required with route53.auth.kubernetes: the ServiceAccount token is exchanged for that role (STS AssumeRoleWithWebIdentity)');
  const request = ctx.options.serviceAccountToken;
  if (!request) throw new ProviderConfigError(ROUTE53_KUBERNETES_AUTH_EMBEDDED);
  const audiences = ref.audiences?.length ? ref.audiences : [ROUTE53_TOKEN_AUDIENCE];
  return async () => {
    const issuer = lookupIssuer(ctx, c.metadata.namespace, c.spec.issuerRef);
    if (!issuer) throw new Error(`issuer "${c.spec.issuerRef.name}" not found`);
    const ns = issuerResourceNamespace(ctx, issuer);
    try {
      return await request(ns, ref.name, audiences, ROUTE53_TOKEN_SECONDS);
    } catch (e) {
      const message = `route53.auth.kubernetes: token for serviceaccount "${ns}/${ref.name}": ${(e as Error).message}`;
      // no such ServiceAccount, or no RBAC to request its token: retrying will not help
      if (e instanceof StoreError && [401, 403, 404].includes(e.code)) throw new ProviderConfigError(message);
      throw new Error(message);
    }
  };
}

function absolute(name: string): string {
  return name.endsWith('.') ? name : `${name}.`;
}

type Route53SDK = typeof import('@aws-sdk/client-route-53');

/** The AWS SDK takes about a second to load: only the first Route 53 call loads it, never the server's start. */
let sdkLoad: Promise<[Route53SDK, typeof import('@aws-sdk/credential-providers')]> | undefined;
const loadSDK = () => (sdkLoad ??= Promise.all([import('@aws-sdk/client-route-53'), import('@aws-sdk/credential-providers')]));

/**
 * The region requests are signed for: spec.route53.region, else AWS_REGION or AWS_DEFAULT_REGION
 * (as cert-manager's field documents; EKS's IRSA puts AWS_REGION in the pod, and a China or
 * GovCloud account needs its own partition), else us-east-1, where Route 53's global endpoint is.
 */
export function route53Region(region: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return region || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
}

export class Route53Solver {
  private api?: Promise<{ client: Route53Client; sdk: Route53SDK }>;
  constructor(private readonly o: Route53Options) {}

  private connect(): Promise<{ client: Route53Client; sdk: Route53SDK }> {
    return (this.api ??= loadSDK().then(([sdk, { fromTemporaryCredentials, fromWebToken }]) => {
      const o = this.o;
      const region = route53Region(o.region);
      const base = o.credentials;
      const stsConfig = { region, ...(o.stsEndpoint ? { endpoint: o.stsEndpoint } : {}) };
      const webToken = o.webIdentityToken;
      const credentials = webToken && o.role
        // a fresh ServiceAccount token for each exchange; the SDK reuses the credentials until they near expiry
        ? async () => fromWebToken({ roleArn: o.role!, webIdentityToken: await webToken(), roleSessionName: 'certsmith', clientConfig: stsConfig })()
        : o.role
          ? fromTemporaryCredentials({ masterCredentials: base, params: { RoleArn: o.role, RoleSessionName: 'certsmith' }, clientConfig: stsConfig })
          : base;
      return { client: new sdk.Route53Client({ region, credentials, endpoint: o.endpoint, maxAttempts: 4 }), sdk };
    }));
  }

  private async send<T>(what: string, fn: (client: Route53Client, sdk: Route53SDK) => Promise<T>): Promise<T> {
    const { client, sdk } = await this.connect();
    try {
      return await fn(client, sdk);
    } catch (e) {
      const err = e as Error & { name: string; $metadata?: { httpStatusCode?: number } };
      const message = `Route 53 ${what}: ${err.name}: ${err.message}`;
      if (CONFIG_ERRORS.has(err.name) || err.$metadata?.httpStatusCode === 403) throw new ProviderConfigError(message);
      // still throttled after the SDK's own retries; Route 53 names no wait (no Retry-After)
      if (THROTTLED.has(err.name)) throw throttledError(message, null);
      throw new Error(message);
    }
  }

  /**
   * The hosted zone: hostedZoneID, else the closest enclosing public zone by name.
   * With `verify` (the Issuer's check) one record set of a hostedZoneID is listed, which proves the
   * credentials and the zone at once with an action cert-manager's IAM policy allows (not
   * GetHostedZone); present and cleanup skip that call, as their own first listing answers
   * NoSuchHostedZone itself.
   */
  async zoneFor(fqdn: string, verify = true): Promise<string> {
    if (this.o.hostedZoneID) {
      const id = this.o.hostedZoneID.replace(/^\/hostedzone\//, '');
      if (verify) await this.send(`hosted zone ${id}`, (client, sdk) => client.send(new sdk.ListResourceRecordSetsCommand({ HostedZoneId: id, MaxItems: 1 })));
      return id;
    }
    const labels = fqdn.replace(/\.$/, '').split('.');
    for (let i = labels[0] === '_acme-challenge' ? 1 : 0; i < labels.length - 1 && i < MAX_ZONE_PAGES; i++) {
      const name = absolute(labels.slice(i).join('.'));
      const r = await this.send(`zone lookup of ${name}`, (client, sdk) => client.send(new sdk.ListHostedZonesByNameCommand({ DNSName: name, MaxItems: 10 })));
      // a private zone answers only inside its VPC, never the CA: as cert-manager, public zones only
      const zone = (r.HostedZones ?? []).find((z) => z.Name === name && !z.Config?.PrivateZone);
      if (zone?.Id) return zone.Id.replace(/^\/hostedzone\//, '');
    }
    throw new ProviderConfigError(`Route 53: no hosted zone of this account contains ${fqdn.replace(/^_acme-challenge\./, '')}`);
  }

  private async current(zone: string, fqdn: string): Promise<ResourceRecordSet | undefined> {
    const name = absolute(fqdn);
    const r = await this.send(`reading TXT ${name}`, (client, sdk) => client.send(new sdk.ListResourceRecordSetsCommand({ HostedZoneId: zone, StartRecordName: name, StartRecordType: 'TXT', MaxItems: 1 })));
    return r.ResourceRecordSets?.find((s) => s.Name === name && s.Type === 'TXT' && !s.SetIdentifier);
  }

  /**
   * Replaces the TXT set `existing` (undefined: none) by one with `values` (empty: none) in one
   * atomic batch, DELETE of the set exactly as read then CREATE: Route 53 refuses the batch
   * (InvalidChangeBatch) when the set changed since it was read, where an UPSERT of what was read
   * would silently drop a value another challenge added meanwhile. Then read again and redo, a
   * few times; the Challenge's backoff takes over after that.
   */
  private async replace(zone: string, fqdn: string, update: (values: string[]) => string[] | undefined, what: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const existing = await this.current(zone, fqdn);
      const values = (existing?.ResourceRecords ?? []).map((r) => r.Value ?? '');
      const next = update(values);
      if (!next) return;
      const changes: Change[] = [];
      if (existing) changes.push({ Action: 'DELETE', ResourceRecordSet: existing });
      if (next.length) changes.push({ Action: 'CREATE', ResourceRecordSet: { Name: absolute(fqdn), Type: 'TXT', TTL: existing?.TTL ?? TTL, ResourceRecords: next.map((Value) => ({ Value })) } });
      try {
        return await this.change(zone, changes, what);
      } catch (e) {
        if (!(e instanceof ConcurrentChange) || attempt >= REPLACE_ATTEMPTS) throw e;
      }
    }
  }

  private async change(zone: string, changes: Change[], what: string): Promise<void> {
    const r = await this.send(what, (client, sdk) => client.send(new sdk.ChangeResourceRecordSetsCommand({
      HostedZoneId: zone,
      ChangeBatch: { Comment: 'certsmith ACME DNS-01', Changes: changes },
    }))).catch((e: Error) => {
      // the set is not as read: someone changed it in between
      if (/InvalidChangeBatch: .*(already exists|not found|do not match)/.test(e.message)) throw new ConcurrentChange(e.message);
      throw e;
    });
    const id = r.ChangeInfo?.Id;
    if (!id || r.ChangeInfo?.Status === 'INSYNC') return;
    // bounded: the Challenge's own backoff takes over after this
    const deadline = Date.now() + (this.o.syncTimeoutMs ?? 120_000);
    for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
      const s = await this.send('waiting for INSYNC', (client, sdk) => client.send(new sdk.GetChangeCommand({ Id: id })));
      if (s.ChangeInfo?.Status === 'INSYNC') return;
      if (Date.now() + delay > deadline) throw new Error(`Route 53 change ${id} not INSYNC within ${Math.round((this.o.syncTimeoutMs ?? 120_000) / 1000)}s`);
      await new Promise((res) => setTimeout(res, delay));
    }
  }

  async present(fqdn: string, value: string): Promise<void> {
    const zone = await this.zoneFor(fqdn, false);
    await this.replace(zone, fqdn, (values) => (values.some((v) => txtValue(v) === value) ? undefined : [...values, quotedTxt(value)]), `adding TXT ${fqdn}`);
  }

  async cleanUp(fqdn: string, value: string): Promise<void> {
    const zone = await this.zoneFor(fqdn, false);
    await this.replace(zone, fqdn, (values) => (values.some((v) => txtValue(v) === value) ? values.filter((v) => txtValue(v) !== value) : undefined), `removing a TXT value of ${fqdn}`);
  }
}

/** A batch Route 53 refused because the set was not as read. */
class ConcurrentChange extends Error {}

const REPLACE_ATTEMPTS = 5;
