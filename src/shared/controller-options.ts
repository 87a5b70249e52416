// The server's configuration of the controllers (flags of `certsmith server` and `certsmith
// controller`, options of the test harnesses): read by every controller through its context,
// built by the CLI and the composition, so it lives below both.
import type { ServiceAccountTokenRequest } from '../store/kube/token-request.ts';

export interface ControllerOptions {
  /** leave CertificateRequests for a person or another approver */
  noAutoApprove?: boolean;
  /**
   * the signers the approver approves, as cert-manager's approveSignerNames:
   * `<resource>.<group>/*` or a signer's full name; [] approves every issuer
   * (default DEFAULT_APPROVE_SIGNER_NAMES: cert-manager.io's Issuers and ClusterIssuers)
   */
  approveSignerNames?: string[];
  /** --enable-certificate-owner-ref: each Secret is owned by its Certificate (deleted with it) */
  enableCertificateOwnerRef?: boolean;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** mirror issued Secrets to files */
  secretsDir?: string;
  keepFiles?: boolean;
  /** "uid:gid" or "user[:group]" of the mirrored files and folders */
  filesOwner?: string;
  deployHook?: string;
  /** longest run of one deploy hook before its process group is killed (default 5m) */
  deployHookTimeoutMs?: number;
  acmeHTTP01Listen?: string;
  /**
   * how HTTP-01 tokens are served: 'embedded' from this process's listener (acmeHTTP01Listen), or
   * 'kubernetes' from a solver Pod, Service and Ingress per challenge, as cert-manager does (default 'embedded')
   */
  http01Mode?: 'embedded' | 'kubernetes';
  /** image of the Kubernetes-mode solver Pod (cert-manager's --acme-http01-solver-image); default certsmith:latest */
  acmeHTTP01SolverImage?: string;
  /** port every HTTP-01 self-check GETs on the domain, as the CA does (--acme-http01-self-check-port); 80 unless a test CA validates elsewhere */
  acmeHTTP01SelfCheckPort?: number;
  acmeHTTP01SolverNameservers?: string[];
  /**
   * --acme-http01-webroot: HTTP-01 tokens are written below this folder for the user's own web
   * server to serve (solvers/webroot.ts) instead of from the embedded listener. Server
   * configuration only: no resource can name a folder certsmith writes to.
   */
  acmeHTTP01Webroot?: string;
  /**
   * DNS-01 exec hooks (solvers/dns01/exec-hook.ts), selected by an Issuer's dns01 solver
   * `webhook: {groupName: certsmith.io, solverName: exec}`. Server configuration only: a resource
   * never names a program. certbot's convention (CERTBOT_* environment) and/or lego's exec one.
   */
  dns01AuthHook?: string;
  dns01CleanupHook?: string;
  dns01Exec?: string;
  /** how long one hook run may take before its process group is killed (default 120 s) */
  dns01HookTimeoutMs?: number;
  /**
   * Tests only: the base URL of a DNS provider's API (a loopback server that follows the vendor's
   * documented API). Never a flag and never read from a resource, so credentials only ever go to
   * the vendor's real endpoint in use.
   */
  dns01ProviderAPIs?: {
    cloudflare?: string; digitalocean?: string; route53?: string;
    /** AWS STS (route53 `role` assumption) */
    sts?: string;
    /** Cloud DNS API base (https://dns.googleapis.com); the token endpoint is the service account key's token_uri */
    cloudDNS?: string;
    /** GCE metadata server (application default credentials) */
    googleMetadata?: string;
    /** Azure: the identity platform authority, the ARM endpoint and IMDS (for every environment) */
    azureAuthority?: string;
    azureARM?: string;
    azureIMDS?: string;
    /** Akamai Edge DNS base URL, in place of https://{serviceConsumerDomain} */
    akamai?: string;
  };
  dns01RecursiveNameservers?: string[];
  /**
   * A request through the Kubernetes API's aggregation layer, how webhook DNS-01 solvers are
   * reached (POST /apis/<groupName>/v1alpha1/<solverName>): the embedded server's own
   * aggregation, or the cluster's API server. The composition fills it in.
   */
  aggregatedAPI?: AggregatedAPICall;
  /**
   * A token for a ServiceAccount, how `route53.auth.kubernetes` gets the web identity it exchanges
   * at STS: the cluster's TokenRequest API in `certsmith controller`. Absent on the embedded
   * server, which has no ServiceAccount tokens; such solvers are refused there with the reason.
   */
  serviceAccountToken?: ServiceAccountTokenRequest;
  /**
   * Where notifications go (a webhook URL and/or an executable) and when they fire; none is sent
   * without a target. Server configuration only, never from a resource.
   */
  notifications?: {
    webhookUrl?: string;
    exec?: string;
    timeoutMs?: number;
    /** failed issuances in a row (default 3) */
    failures?: number;
    /** past the renewal time by more than this (default 1h) */
    renewalGraceMs?: number;
    /** less than this left before expiry (default a tenth of the lifetime) */
    expiryThresholdMs?: number;
  };
  dns01RecursiveNameserversOnly?: boolean;
  /** where the Secrets of ClusterIssuers live (cert-manager's --cluster-resource-namespace) */
  clusterResourceNamespace?: string;
  /** DNS-01 solvers of ClusterIssuers may use ambient cloud credentials (cert-manager's flag; default true) */
  clusterIssuerAmbientCredentials?: boolean;
  /** DNS-01 solvers of namespaced Issuers may use ambient cloud credentials (cert-manager's flag; default false) */
  issuerAmbientCredentials?: boolean;
  /** host:port of the operational servers; port 0 picks a free port; '' turns them off */
  metricsListen?: string;
  healthListen?: string;
  /** false turns off ingress-shim (Certificates from annotated Ingresses); on by default, as upstream */
  ingressShim?: boolean;
  /** issuer for Ingresses that ask with an auto-certificate annotation (cert-manager's --default-issuer-name/kind/group) */
  defaultIssuerName?: string;
  defaultIssuerKind?: string;
  defaultIssuerGroup?: string;
  /** cert-manager's --auto-certificate-annotations; default kubernetes.io/tls-acme */
  autoCertificateAnnotations?: string[];
  /**
   * cert-manager's --enable-gateway-api: gateway-shim (Certificates from annotated Gateways) and the
   * HTTP-01 gatewayHTTPRoute solver's HTTPRoutes; off unless set, as the Gateway API CRDs may be missing
   */
  enableGatewayAPI?: boolean;
  /** false turns off the CA injector (caBundle of annotated webhook configurations, APIServices, CRDs); on by default */
  caInjector?: boolean;
  /** PEM of the API server's CA, injected where cert-manager.io/inject-apiserver-ca is "true" */
  apiServerCABundle?: string;
}

/** One request to an aggregated API (see ControllerOptions.aggregatedAPI). */
export type AggregatedAPICall = (method: 'POST', path: string, body: unknown) => Promise<{ status: number; body: unknown }>;
