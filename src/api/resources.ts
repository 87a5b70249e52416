// The resource types certsmith serves and stores: the one registry that the store, the
// API server, discovery and the CLI agree on.

export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  /** true when writes to the main resource ignore status and /status writes ignore the rest */
  statusSubresource: boolean;
  listKind: string;
  /**
   * discovery categories (`kubectl get cert-manager`, `kubectl get all`): cert-manager's CRDs
   * declare them for its kinds, kube-apiserver puts pods and services in `all`
   */
  categories?: string[];
}

function rt(group: string, version: string, kind: string, plural: string, namespaced: boolean, statusSubresource: boolean, shortNames: string[] = [], categories?: string[]): ResourceType {
  return { group, version, kind, plural, singular: kind.toLowerCase(), shortNames, namespaced, statusSubresource, listKind: `${kind}List`, ...(categories ? { categories } : {}) };
}

const certManager = ['cert-manager'];
const certManagerACME = ['cert-manager', 'cert-manager-acme'];

export const Certificate = rt('cert-manager.io', 'v1', 'Certificate', 'certificates', true, true, ['cert', 'certs'], certManager);
export const CertificateRequest = rt('cert-manager.io', 'v1', 'CertificateRequest', 'certificaterequests', true, true, ['cr', 'crs'], certManager);
export const Issuer = rt('cert-manager.io', 'v1', 'Issuer', 'issuers', true, true, ['iss'], certManager);
export const ClusterIssuer = rt('cert-manager.io', 'v1', 'ClusterIssuer', 'clusterissuers', false, true, ['ciss'], certManager);
export const Order = rt('acme.cert-manager.io', 'v1', 'Order', 'orders', true, true, [], certManagerACME);
export const Challenge = rt('acme.cert-manager.io', 'v1', 'Challenge', 'challenges', true, true, [], certManagerACME);
export const SecretType = rt('', 'v1', 'Secret', 'secrets', true, false);
export const EventType = rt('', 'v1', 'Event', 'events', true, false, ['ev']);
export const NamespaceType = rt('', 'v1', 'Namespace', 'namespaces', false, true, ['ns']);
export const isNamespaceType = (type: ResourceType): boolean => type.group === '' && type.kind === 'Namespace';
/** kube-apiserver's namespace storage has no DeleteCollection: one DELETE would take every namespace. */
export const supportsDeleteCollection = (type: ResourceType): boolean => !isNamespaceType(type);
export const LeaseType = rt('coordination.k8s.io', 'v1', 'Lease', 'leases', true, false);
// The HTTP-01 solver's workload in Kubernetes mode (a Pod running `certsmith acmesolver`, its Service and Ingress).
export const PodType = rt('', 'v1', 'Pod', 'pods', true, true, ['po'], ['all']);
export const ServiceType = rt('', 'v1', 'Service', 'services', true, true, ['svc'], ['all']);
export const IngressType = rt('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, true, ['ing']);
// Gateway API: the gateway-shim's source and the HTTP-01 solver's route.
export const GatewayType = rt('gateway.networking.k8s.io', 'v1', 'Gateway', 'gateways', true, true, ['gtw']);
export const HTTPRouteType = rt('gateway.networking.k8s.io', 'v1', 'HTTPRoute', 'httproutes', true, true);
// What the CA injector writes CA bundles into.
export const ValidatingWebhookConfigurationType = rt('admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false, false);
export const MutatingWebhookConfigurationType = rt('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false, false);
export const APIServiceType = rt('apiregistration.k8s.io', 'v1', 'APIService', 'apiservices', false, true);
/**
 * Kinds a cluster serves from CustomResourceDefinitions (cert-manager's, the Gateway API's), not
 * built into kube-apiserver: no protobuf, no strategic merge patch.
 */
export function isCustomResource(type: ResourceType): boolean {
  return type.group === 'cert-manager.io' || type.group === 'acme.cert-manager.io' || type.group === 'gateway.networking.k8s.io';
}

/** The PATCH media types kube-apiserver accepts for a kind, in its order: a custom resource has no strategic merge (kubernetes#97423). */
export function patchMediaTypes(type: ResourceType): string[] {
  return ['application/json-patch+json', 'application/merge-patch+json', ...(isCustomResource(type) ? [] : ['application/strategic-merge-patch+json']), 'application/apply-patch+yaml'];
}

/**
 * Whether kube-apiserver keeps metadata.generation for a kind: custom resources and the
 * built-ins whose strategy sets it (CRDs, Ingresses, webhook configurations); a Secret,
 * Namespace, Event, Lease, Pod, Service or APIService has none.
 */
export function tracksGeneration(type: ResourceType): boolean {
  return isCustomResource(type) || type === CustomResourceDefinitionType || type === IngressType
    || type === ValidatingWebhookConfigurationType || type === MutatingWebhookConfigurationType;
}

/**
 * Whether an update without metadata.resourceVersion is allowed (the strategy's
 * AllowUnconditionalUpdate): not for custom resources, CRDs and APIServices, whose writers must
 * say which version they replace.
 */
export function allowsUnconditionalUpdate(type: ResourceType): boolean {
  return !isCustomResource(type) && type !== CustomResourceDefinitionType && type !== APIServiceType;
}

export const CustomResourceDefinitionType = rt('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, true, ['crd', 'crds']);

export const resourceTypes: ResourceType[] = [
  Certificate, CertificateRequest, Issuer, ClusterIssuer, Order, Challenge,
  SecretType, EventType, NamespaceType, LeaseType, PodType, ServiceType, IngressType,
  GatewayType, HTTPRouteType,
  ValidatingWebhookConfigurationType, MutatingWebhookConfigurationType, APIServiceType, CustomResourceDefinitionType,
];

export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

export function resourceTypeFor(apiVersion: string, kind: string): ResourceType | undefined {
  return resourceTypes.find((t) => apiVersionOf(t) === apiVersion && t.kind === kind);
}

/** Finds a type by the names people type: kind, plural, singular, short name, or plural.group. */
export function resolveResourceName(name: string): ResourceType | undefined {
  const n = name.toLowerCase();
  return resourceTypes.find((t) =>
    t.plural === n || t.singular === n || t.shortNames.includes(n) ||
    (t.group && (n === `${t.plural}.${t.group}` || n === `${t.singular}.${t.group}`)));
}

/** REST path of a collection or an object, as Kubernetes lays them out. */
export function restPath(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  let p = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  if (t.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${t.plural}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}
