// The objects cert-manager's HTTP-01 solver creates for a Challenge in a cluster: a Pod running
// the acmesolver, a Service selecting it, and an Ingress routing the token path to the Service
// (or a path rule added to an Ingress the user names), or for a gatewayHTTPRoute solver a Gateway
// API HTTPRoute instead of the Ingress. Pure builders; solver.ts writes them.
import net from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, OwnerReference } from '../../../../api/meta.ts';
import type { Challenge, PodTemplate } from '../../../../api/types.ts';
import { HTTP01SolverLabel, INGRESS_CLASS_ANNOTATION } from '../../../../api/annotations.ts';

export const SOLVER_LABEL = HTTP01SolverLabel.solver;
export const DOMAIN_LABEL = HTTP01SolverLabel.domain;
export const TOKEN_LABEL = HTTP01SolverLabel.token;
export { INGRESS_CLASS_ANNOTATION };
export const SOLVER_NAME_PREFIX = 'cm-acme-http-solver-';
/** the port acmesolver listens on inside the Pod, and the Service's port (cert-manager's acmeSolverListenPort) */
export const SOLVER_PORT = 8089;
export const DEFAULT_SOLVER_IMAGE = 'certsmith:latest';
/** cert-manager's defaults for --acme-http01-solver-resource-{request,limits}-{cpu,memory} */
export const DEFAULT_SOLVER_RESOURCES = { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } };

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  args: string[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
}

export interface Pod extends KubeObject {
  spec: {
    containers: Container[];
    restartPolicy?: string;
    nodeSelector?: Record<string, string>;
    tolerations?: unknown[];
    affinity?: unknown;
    priorityClassName?: string;
    serviceAccountName?: string;
    imagePullSecrets?: { name: string }[];
    securityContext?: Record<string, unknown>;
  };
}

export interface Service extends KubeObject {
  spec: {
    type?: string;
    selector?: Record<string, string>;
    ports: { name?: string; port: number; targetPort?: number | string; protocol?: string; nodePort?: number }[];
  };
}

export interface IngressPath {
  path?: string;
  pathType: string;
  backend: { service?: { name: string; port: { number?: number; name?: string } } };
}

export interface IngressRule {
  host?: string;
  http?: { paths: IngressPath[] };
}

export interface Ingress extends KubeObject {
  spec: { ingressClassName?: string; rules?: IngressRule[]; [field: string]: unknown };
}

export interface SolverPodOptions {
  /** default certsmith:latest */
  image?: string;
  /** replaces DEFAULT_SOLVER_RESOURCES; the solver's podTemplate.spec.resources overrides this in turn */
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

/** zlib's Adler-32, the checksum cert-manager labels solver resources with (domain and token exceed label limits). */
export function adler32(s: string): number {
  let a = 1;
  let b = 0;
  for (const byte of Buffer.from(s, 'utf8')) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return (b * 65536 + a) >>> 0;
}

/** The labels every solver object of this challenge carries, and the selector that finds them again. */
export function solverLabels(c: Challenge): Record<string, string> {
  return {
    [DOMAIN_LABEL]: String(adler32(c.spec.dnsName)),
    [TOKEN_LABEL]: String(adler32(c.spec.token)),
    [SOLVER_LABEL]: 'true',
  };
}

export function solverLabelSelector(c: Challenge): string {
  return Object.entries(solverLabels(c)).map(([k, v]) => `${k}=${v}`).join(',');
}

export function challengePath(token: string): string {
  return `/.well-known/acme-challenge/${token}`;
}

function challengeOwner(c: Challenge): OwnerReference {
  if (!c.metadata.uid) throw new Error(`Challenge ${c.metadata.namespace}/${c.metadata.name} has no uid: solver objects must be owned by a stored Challenge`);
  return { apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', name: c.metadata.name!, uid: c.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** true when obj's controlling owner is this Challenge (cert-manager skips look-alikes owned by others). */
export function isControlledBy(obj: KubeObject, c: Challenge): boolean {
  return !!obj.metadata.ownerReferences?.some((r) => r.controller && r.uid === c.metadata.uid);
}

function ingressConfig(c: Challenge) {
  const ingress = c.spec.solver.http01?.ingress;
  if (!ingress) throw new Error(`Challenge ${c.metadata.namespace}/${c.metadata.name} has no http01.ingress solver`);
  return ingress;
}

// Template labels go first: the solver's own labels must win, or the Service selector and the
// clean-up would no longer find the objects.
const withSolverLabels = (c: Challenge, extra?: Record<string, string>) => ({ ...extra, ...solverLabels(c) });

export function solverPod(c: Challenge, opts: SolverPodOptions = {}): Pod {
  const template: PodTemplate | undefined = c.spec.solver.http01?.ingress?.podTemplate ?? c.spec.solver.http01?.gatewayHTTPRoute?.podTemplate;
  const tspec = template?.spec ?? {};
  const base = opts.resources ?? DEFAULT_SOLVER_RESOURCES;
  const override = (tspec.resources ?? {}) as { requests?: Record<string, string>; limits?: Record<string, string> };
  const resources = { requests: { ...(override.requests ?? base.requests) }, limits: { ...(override.limits ?? base.limits) } };
  const pod: Pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      generateName: SOLVER_NAME_PREFIX,
      namespace: c.metadata.namespace,
      labels: withSolverLabels(c, template?.metadata?.labels),
      annotations: {
        'sidecar.istio.io/inject': 'false',
        'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true',
        ...template?.metadata?.annotations,
      },
      ownerReferences: [challengeOwner(c)],
    },
    spec: {
      nodeSelector: { 'kubernetes.io/os': 'linux', ...tspec.nodeSelector },
      restartPolicy: 'OnFailure',
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, ...(tspec.securityContext as Record<string, unknown> | undefined) },
      containers: [{
        name: 'acmesolver',
        image: opts.image ?? DEFAULT_SOLVER_IMAGE,
        imagePullPolicy: 'IfNotPresent',
        // the certsmith image's entrypoint is the CLI: the first argument picks the command
        args: ['acmesolver', `--listen-port=${SOLVER_PORT}`, `--domain=${c.spec.dnsName}`, `--token=${c.spec.token}`, `--key=${c.spec.key}`],
        resources,
        ports: [{ name: 'http', containerPort: SOLVER_PORT }],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      }],
    },
  };
  if (tspec.tolerations?.length) pod.spec.tolerations = [...tspec.tolerations];
  if (tspec.affinity) pod.spec.affinity = tspec.affinity;
  if (tspec.priorityClassName) pod.spec.priorityClassName = tspec.priorityClassName;
  if (tspec.serviceAccountName) pod.spec.serviceAccountName = tspec.serviceAccountName;
  if (tspec.imagePullSecrets?.length) pod.spec.imagePullSecrets = tspec.imagePullSecrets.map((s) => ({ name: s.name ?? '' }));
  return pod;
}

export function solverService(c: Challenge): Service {
  const serviceType = c.spec.solver.http01?.ingress?.serviceType || c.spec.solver.http01?.gatewayHTTPRoute?.serviceType || 'NodePort';
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: {
      generateName: SOLVER_NAME_PREFIX,
      namespace: c.metadata.namespace,
      labels: solverLabels(c),
      annotations: { [`auth.istio.io/${SOLVER_PORT}`]: 'NONE' },
      ownerReferences: [challengeOwner(c)],
    },
    spec: {
      type: serviceType,
      ports: [{ name: 'http', port: SOLVER_PORT, targetPort: SOLVER_PORT }],
      selector: solverLabels(c),
    },
  };
}

function challengeIngressPath(token: string, serviceName: string): IngressPath {
  return {
    path: challengePath(token),
    pathType: 'ImplementationSpecific',
    backend: { service: { name: serviceName, port: { number: SOLVER_PORT } } },
  };
}

/** A new Ingress for the challenge (solvers without ingress.name): class by name or by annotation, template metadata merged. */
export function solverIngress(c: Challenge, serviceName: string): Ingress {
  const cfg = ingressConfig(c);
  const template = cfg.ingressTemplate?.metadata;
  const annotations: Record<string, string> = { 'nginx.ingress.kubernetes.io/whitelist-source-range': '0.0.0.0/0,::/0' };
  for (const [k, v] of Object.entries(template?.annotations ?? {})) {
    // the solver's class decides which controller serves the path; a template must not move it
    if (k !== INGRESS_CLASS_ANNOTATION) annotations[k] = v;
  }
  if (cfg.class) annotations[INGRESS_CLASS_ANNOTATION] = cfg.class;
  const ingress: Ingress = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: {
      generateName: SOLVER_NAME_PREFIX,
      namespace: c.metadata.namespace,
      labels: withSolverLabels(c, template?.labels),
      annotations,
      ownerReferences: [challengeOwner(c)],
    },
    spec: {
      rules: [{ host: c.spec.dnsName, http: { paths: [challengeIngressPath(c.spec.token, serviceName)] } }],
    },
  };
  if (cfg.ingressClassName) ingress.spec.ingressClassName = cfg.ingressClassName;
  return ingress;
}

/** true when the Ingress routes the challenge's host and path to serviceName, as solverIngress built it. */
export function routesChallenge(ing: Ingress, c: Challenge, serviceName: string): boolean {
  return (ing.spec.rules ?? []).some((r) => r.host === c.spec.dnsName && (r.http?.paths ?? []).some((p) =>
    p.path === challengePath(c.spec.token) && p.backend.service?.name === serviceName && p.backend.service.port.number === SOLVER_PORT));
}

/**
 * The user's Ingress (ingress.name) with the challenge path routed to serviceName, or undefined when it
 * already is. As cert-manager: a path for the token is replaced, else the path goes first in the host's
 * rule, else a rule for the host is appended.
 */
export function withChallengePath(ing: Ingress, c: Challenge, serviceName: string): Ingress | undefined {
  const want = challengeIngressPath(c.spec.token, serviceName);
  const next = structuredClone(ing);
  const rules = (next.spec.rules ??= []);
  const rule = rules.find((r) => r.host === c.spec.dnsName);
  if (!rule) {
    rules.push({ host: c.spec.dnsName, http: { paths: [want] } });
    return next;
  }
  const paths = (rule.http ??= { paths: [] }).paths;
  const i = paths.findIndex((p) => p.path === want.path);
  if (i < 0) {
    paths.unshift(want);
    return next;
  }
  const have = paths[i].backend.service;
  if (have?.name === serviceName && have.port.number === SOLVER_PORT) return undefined;
  paths[i] = want;
  return next;
}

/**
 * The user's Ingress without the challenge path, or undefined when it has none. Rules for other hosts
 * and rules without http stay; a host rule left without paths goes.
 */
export function withoutChallengePath(ing: Ingress, c: Challenge): Ingress | undefined {
  const path = challengePath(c.spec.token);
  const touched = (ing.spec.rules ?? []).some((r) => r.host === c.spec.dnsName && r.http?.paths.some((p) => p.path === path));
  if (!touched) return undefined;
  const next = structuredClone(ing);
  next.spec.rules = (next.spec.rules ?? []).flatMap((r) => {
    if (r.host !== c.spec.dnsName || !r.http) return [r];
    const paths = r.http.paths.filter((p) => p.path !== path);
    return paths.length ? [{ ...r, http: { ...r.http, paths } }] : [];
  });
  return next;
}

export interface HTTPRouteBackendRef { group?: string; kind?: string; name: string; namespace?: string; port?: number; weight?: number }

export interface HTTPRouteRule {
  matches?: { path?: { type?: string; value?: string } }[];
  backendRefs?: HTTPRouteBackendRef[];
}

export interface HTTPRoute extends KubeObject {
  spec: { parentRefs?: Record<string, unknown>[]; hostnames?: string[]; rules?: HTTPRouteRule[]; [field: string]: unknown };
}

function gatewayHTTPRouteConfig(c: Challenge) {
  const route = c.spec.solver.http01?.gatewayHTTPRoute;
  if (!route) throw new Error(`Challenge ${c.metadata.namespace}/${c.metadata.name} has no http01.gatewayHTTPRoute solver`);
  return route;
}

function httpRouteSpec(c: Challenge, serviceName: string): HTTPRoute['spec'] {
  return {
    parentRefs: structuredClone(gatewayHTTPRouteConfig(c).parentRefs ?? []),
    // Gateway API hostnames cannot be IP addresses: an IP challenge's route matches any host
    ...(net.isIP(c.spec.dnsName) ? {} : { hostnames: [c.spec.dnsName] }),
    rules: [{
      matches: [{ path: { type: 'Exact', value: challengePath(c.spec.token) } }],
      backendRefs: [{ group: '', kind: 'Service', name: serviceName, namespace: c.metadata.namespace, port: SOLVER_PORT, weight: 1 }],
    }],
  };
}

/** The HTTPRoute of a gatewayHTTPRoute solver: attached to its parentRefs, the token's exact path to serviceName. */
export function solverHTTPRoute(c: Challenge, serviceName: string): HTTPRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute',
    metadata: {
      generateName: SOLVER_NAME_PREFIX,
      namespace: c.metadata.namespace,
      labels: withSolverLabels(c, gatewayHTTPRouteConfig(c).labels),
      ownerReferences: [challengeOwner(c)],
    },
    spec: httpRouteSpec(c, serviceName),
  };
}

/**
 * want within have: objects by their keys (have may carry more, e.g. fields a cluster's Gateway
 * API server defaults: parentRefs' group and kind, a rule's timeouts), arrays element by element.
 */
function contains(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => contains(have[i], w));
  if (want && typeof want === 'object') {
    return !!have && typeof have === 'object' && !Array.isArray(have) &&
      Object.entries(want).every(([k, v]) => contains((have as Record<string, unknown>)[k], v));
  }
  return isDeepStrictEqual(have, want);
}

/**
 * true when the route carries the spec and labels solverHTTPRoute would give it: as upstream, a
 * route that no longer fits (other parentRefs or labels, a new Service name) is replaced.
 */
export function httpRouteFits(route: HTTPRoute, c: Challenge, serviceName: string): boolean {
  return contains(route.spec, httpRouteSpec(c, serviceName)) && contains(route.metadata.labels ?? {}, withSolverLabels(c, gatewayHTTPRouteConfig(c).labels));
}
