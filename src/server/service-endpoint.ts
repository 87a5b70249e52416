// Where a Service reference (an APIService's spec.service, a webhook's clientConfig.service) is
// dialled on the embedded server. There is no kube-proxy on one host: the Service's
// `spec.clusterIP` is the address to dial (e.g. 127.0.0.1), the port is the Service port's
// `targetPort` when it is a number, else the port itself, and the serving certificate must name
// `<service>.<namespace>.svc`, as kube-apiserver checks it.
import net from 'node:net';
import { ServiceType } from '../api/resources.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Store } from '../store/store.ts';

interface Service extends KubeObject {
  spec?: { clusterIP?: string; ports?: { port: number; targetPort?: number | string }[] };
}

export interface ServiceEndpoint {
  host: string;
  port: number;
  /** the name the serving certificate must carry */
  serverName: string;
}

/** Why a Service reference cannot be dialled; each caller turns it into its own error (503, failed webhook call). */
export class ServiceEndpointError extends Error {}

/** Resolves `ref` (port 443 by default, as kube's ServiceReference). */
export async function serviceEndpoint(store: Store, ref: { namespace: string; name: string; port?: number }): Promise<ServiceEndpoint> {
  const service = await store.get<Service>(ServiceType, ref.namespace, ref.name);
  const named = `service "${ref.namespace}/${ref.name}"`;
  if (!service) throw new ServiceEndpointError(`${named} not found`);
  const ip = service.spec?.clusterIP;
  if (!ip || !net.isIP(ip)) throw new ServiceEndpointError(`${named} has no cluster IP to dial (on one host, spec.clusterIP is the address the backend listens on)`);
  const wanted = ref.port ?? 443;
  const entry = service.spec?.ports?.find((p) => p.port === wanted);
  if (!entry) throw new ServiceEndpointError(`${named} has no port ${wanted}`);
  return { host: ip, port: typeof entry.targetPort === 'number' ? entry.targetPort : entry.port, serverName: `${ref.name}.${ref.namespace}.svc` };
}
