// gateway-shim's source, as cert-manager's: an annotated Gateway's TLS listeners become shim
// entries, one per Secret their certificateRefs name, with the listener hostnames as hosts.
// Listeners naming one Secret share its Certificate. The rest of the decision is the shim's.
import type { KubeObject } from '../../api/meta.ts';
import { IGNORE_TLS_LISTENERS_ANNOTATION } from '../../api/annotations.ts';
import type { Certificate as CertificateObj } from '../../api/types.ts';
import type { EventSpec } from '../decision.ts';
import { isObj } from '../../api/validation/field-errors.ts';
import { decideShim, warning, type IngressShimOptions, type ShimDecision, type ShimEntry, type ShimSource } from './shim.ts';

export interface GatewayCertificateRef { group?: string; kind?: string; name: string; namespace?: string }

export interface GatewayListener {
  name?: string;
  hostname?: string;
  port?: number;
  protocol?: string;
  tls?: { mode?: string; certificateRefs?: GatewayCertificateRef[] };
}

export interface GatewayObj extends KubeObject {
  spec?: { gatewayClassName?: string; listeners?: GatewayListener[]; [field: string]: unknown };
}

/** Comma-separated listener names the shim leaves alone (cert-manager's cert-manager.io/ignore-tls-listeners). */
export const IGNORE_TLS_LISTENERS_ANN = IGNORE_TLS_LISTENERS_ANNOTATION;

// Gateway API allows TLS configuration on these protocols only; an HTTP listener has nothing to certify.
const TLS_PROTOCOLS = new Set(['HTTPS', 'TLS']);

/** Why the listener cannot have a Certificate, as upstream's field errors word it; empty when it can. */
function listenerErrors(l: GatewayListener, i: number, namespace: string | undefined): string[] {
  const path = `spec.listeners[${i}]`;
  const errors: string[] = [];
  if (!l.hostname) errors.push(`${path}.hostname: Required value: the hostname cannot be empty`);
  if (!l.tls) return [...errors, `${path}.tls: Required value: the TLS block cannot be empty`];
  const refs = l.tls.certificateRefs ?? [];
  if (!refs.length) errors.push(`${path}.tls.certificateRef: Required value: listener has no certificateRefs`);
  for (const [j, ref] of refs.entries()) {
    const at = `${path}.tls.certificateRef[${j}]`;
    if (ref.group !== undefined && ref.group !== '' && ref.group !== 'core') errors.push(`${at}.group: Unsupported value: "${ref.group}": supported values: "core", ""`);
    if (ref.kind !== undefined && ref.kind !== '' && ref.kind !== 'Secret') errors.push(`${at}.kind: Unsupported value: "${ref.kind}": supported values: "Secret", ""`);
    if (ref.namespace !== undefined && ref.namespace !== namespace) {
      errors.push(`${at}.namespace: Invalid value: "${ref.namespace}": cross-namespace secret references are not allowed in listeners`);
    }
  }
  // the Gateway API server defaults an unset mode to Terminate; the embedded server stores as-is
  const mode = l.tls.mode ?? 'Terminate';
  if (mode !== 'Terminate') errors.push(`${path}.tls.mode: Unsupported value: "${mode}": supported values: "Terminate"`);
  return errors;
}

/**
 * Why a listener of a Gateway as stored is not one, or undefined: the embedded server keeps what
 * it is sent, where a cluster's Gateway API CRD schema would have refused these shapes.
 */
function listenerShapeError(l: unknown, i: number): string | undefined {
  const path = `spec.listeners[${i}]`;
  if (!isObj(l)) return `${path}: Invalid value: must be an object`;
  for (const f of ['name', 'hostname', 'protocol'] as const) if (l[f] !== undefined && typeof l[f] !== 'string') return `${path}.${f}: Invalid value: must be a string`;
  if (l.tls === undefined) return undefined;
  if (!isObj(l.tls)) return `${path}.tls: Invalid value: must be an object`;
  const refs = l.tls.certificateRefs;
  if (refs !== undefined && !(Array.isArray(refs) && refs.every((r) => isObj(r) && typeof r.name === 'string'))) {
    return `${path}.tls.certificateRefs: Invalid value: must be a list of references with a name`;
  }
  return undefined;
}

export function gatewaySource(gateway: GatewayObj): ShimSource {
  const raw: unknown = gateway.spec?.listeners ?? [];
  if (!Array.isArray(raw)) {
    return {
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', entries: [], skipped: [], referencedSecrets: new Set(), autoCertificateAnnotations: false,
      fatal: [warning('spec.listeners: Invalid value: must be a list of listeners; no Certificates were created or updated')],
    };
  }
  const shapeErrors: EventSpec[] = [];
  const listeners = raw.filter((l: unknown, i) => {
    const shape = listenerShapeError(l, i);
    if (shape) shapeErrors.push(warning(`Skipped a listener block: ${shape}`));
    return !shape;
  }) as GatewayListener[];
  const ignored = new Set((gateway.metadata.annotations?.[IGNORE_TLS_LISTENERS_ANN] ?? '').split(',').map((s) => s.trim()).filter(Boolean));
  const hostsBySecret = new Map<string, string[]>();
  const skipped: EventSpec[] = shapeErrors;
  for (const l of listeners) {
    const i = raw.indexOf(l);
    if (!TLS_PROTOCOLS.has(l.protocol ?? '')) continue;
    // the Gateway hands the client's TLS to the backend: there is no certificate of its own to issue
    if (l.tls?.mode === 'Passthrough') continue;
    if (l.name && ignored.has(l.name)) continue;
    const errors = listenerErrors(l, i, gateway.metadata.namespace);
    if (errors.length) {
      skipped.push(warning(`Skipped a listener block: ${errors.join(', ')}`));
      continue;
    }
    for (const ref of l.tls!.certificateRefs!) {
      const hosts = hostsBySecret.get(ref.name) ?? [];
      hosts.push(l.hostname!);
      hostsBySecret.set(ref.name, hosts);
    }
  }
  const entries: ShimEntry[] = [...hostsBySecret].map(([secretName, hosts]) => ({ secretName, hosts }));
  return {
    apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', entries, skipped, fatal: [],
    referencedSecrets: new Set(listeners.flatMap((l) => (l.tls?.certificateRefs ?? []).map((r) => r.name))),
    // upstream: the auto-certificate annotations (kubernetes.io/tls-acme) are for Ingresses only
    autoCertificateAnnotations: false,
  };
}

/** What to write for one Gateway, given the Certificates of its namespace (from the cache). */
export function decideGatewayShim(gateway: GatewayObj, certificates: CertificateObj[], options: IngressShimOptions = {}): ShimDecision {
  return decideShim(gateway, gatewaySource, certificates, options);
}
