// API aggregation, as kube-apiserver's kube-aggregator does it: a request under
// /apis/<group>/<version>/ for a group/version the server does not serve itself goes to the
// Service an APIService named `<version>.<group>` points at, over TLS checked against the
// APIService's caBundle for the name `<service>.<namespace>.svc`. This is how cert-manager
// reaches webhook DNS-01 solvers, so community solvers (and certsmith's webhook solver client)
// work against the embedded server.
//
// On one host the Service is dialled as service-endpoint.ts says. kube-apiserver authenticates to aggregated servers with a front-proxy client
// certificate and X-Remote-User/X-Remote-Group headers; certsmith sends the headers only
// (a solver that insists on the front-proxy certificate will refuse, see README).
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { APIServiceType } from '../api/resources.ts';
import { serviceEndpoint, ServiceEndpointError, type ServiceEndpoint } from './service-endpoint.ts';
import type { KubeObject, UserInfo } from '../api/meta.ts';
import { inProcessUser } from './users.ts';
import type { Store } from '../store/store.ts';

interface APIService extends KubeObject {
  spec?: {
    group?: string;
    version?: string;
    service?: { namespace?: string; name?: string; port?: number } | null;
    caBundle?: string;
    insecureSkipTLSVerify?: boolean;
  };
}

export interface AggregatedBackend {
  host: string;
  port: number;
  /** the name the serving certificate must carry */
  serverName: string;
  caPem?: string;
  insecureSkipTLSVerify: boolean;
}

export class AggregationError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) {
    super(message);
  }
}

/**
 * The backend of group/version, undefined when no APIService claims it (then the path is the
 * server's own: 404). An APIService that cannot be reached is kube's 503 ServiceUnavailable.
 */
export async function aggregatedBackend(store: Store, group: string, version: string): Promise<AggregatedBackend | undefined> {
  const name = `${version}.${group}`;
  const svc = await store.get<APIService>(APIServiceType, undefined, name);
  if (!svc?.spec?.service) return undefined;
  const ref = svc.spec.service;
  const unavailable = (why: string) => new AggregationError(503, 'ServiceUnavailable', `the server is currently unable to handle the request (APIService ${name}: ${why})`);
  if (!ref.namespace || !ref.name) throw unavailable('spec.service needs namespace and name');
  let endpoint: ServiceEndpoint;
  try {
    endpoint = await serviceEndpoint(store, { namespace: ref.namespace, name: ref.name, port: ref.port });
  } catch (e) {
    if (e instanceof ServiceEndpointError) throw unavailable(e.message);
    throw e;
  }
  return {
    ...endpoint,
    caPem: svc.spec.caBundle ? Buffer.from(svc.spec.caBundle, 'base64').toString('utf8') : undefined,
    insecureSkipTLSVerify: !!svc.spec.insecureSkipTLSVerify,
  };
}

export interface ProxiedResponse {
  status: number;
  contentType?: string;
  body: Buffer;
}

const PROXY_TIMEOUT_MS = 30_000;

/** One request to the backend; the answer is read whole, up to maxBytes. */
export function proxyRequest(backend: AggregatedBackend, req: {
  method: string; path: string; headers: Record<string, string>; body?: Buffer; user: UserInfo; maxBytes: number;
}): Promise<ProxiedResponse> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {
      ...req.headers, 'x-remote-user': req.user.username, 'x-remote-group': req.user.groups ?? [],
      ...(req.body ? { 'content-length': req.body.length } : {}),
    };
    const r = https.request({
      host: backend.host, port: backend.port, method: req.method, path: req.path, headers,
      servername: net.isIP(backend.serverName) ? undefined : backend.serverName,
      ca: backend.caPem, rejectUnauthorized: !backend.insecureSkipTLSVerify,
      // the certificate must name the Service as kube-apiserver expects, whatever address was dialled
      checkServerIdentity: (_host, cert) => (backend.insecureSkipTLSVerify ? undefined : tlsCheckIdentity(backend.serverName, cert)),
      agent: false, timeout: PROXY_TIMEOUT_MS,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > req.maxBytes) {
          res.destroy(new AggregationError(502, 'InternalError', `the aggregated API's answer is larger than ${req.maxBytes} bytes`));
          return;
        }
        chunks.push(d);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 502, contentType: res.headers['content-type'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.on('timeout', () => r.destroy(new AggregationError(504, 'Timeout', `the aggregated API did not answer within ${PROXY_TIMEOUT_MS / 1000}s`)));
    r.on('error', (e) => reject(e instanceof AggregationError ? e : new AggregationError(503, 'ServiceUnavailable', `error trying to reach service: ${e.message}`)));
    r.end(req.body);
  });
}

/** node's default check, against the Service's DNS name instead of the dialled address */
function tlsCheckIdentity(name: string, cert: tls.PeerCertificate): Error | undefined {
  return tls.checkServerIdentity(name, cert);
}

/** A caller for the controllers (webhook solvers) that goes through this server's aggregation. */
export function aggregatedAPICaller(store: Store, user: UserInfo = inProcessUser) {
  return async (method: 'POST', path: string, body: unknown): Promise<{ status: number; body: unknown }> => {
    const m = /^\/apis\/([^/]+)\/([^/]+)\//.exec(path);
    if (!m) throw new Error(`not an aggregated API path: ${path}`);
    const backend = await aggregatedBackend(store, decodeURIComponent(m[1]), decodeURIComponent(m[2]));
    if (!backend) throw new AggregationError(404, 'NotFound', `the server could not find the requested resource (no APIService ${m[2]}.${m[1]})`);
    const res = await proxyRequest(backend, {
      method, path, headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: Buffer.from(JSON.stringify(body)), user, maxBytes: 3 * 1024 * 1024,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body.toString('utf8'));
    } catch {
      parsed = { message: res.body.toString('utf8').slice(0, 300) };
    }
    return { status: res.status, body: parsed };
  };
}
