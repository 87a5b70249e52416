// One POST of an AdmissionReview to a webhook, as kube-apiserver makes it: HTTPS only, the
// serving certificate checked against the webhook's caBundle (the host's roots without one),
// `?timeout=Ns` on the URL, the whole call bounded by timeoutSeconds, the answer bounded in size.
// No retries: a failed call is the failurePolicy's to decide.
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { serviceEndpoint, ServiceEndpointError, type ServiceEndpoint } from '../service-endpoint.ts';
import type { Store } from '../../store/store.ts';
import type { WebhookClientConfig } from './matching.ts';

/** A webhook could not be called or gave no usable answer; failurePolicy decides what happens. */
export class CallFailure extends Error {}

export interface Endpoint {
  /** the URL as kube-apiserver names it in errors (with ?timeout=) */
  url: URL;
  /** where to connect */
  host: string;
  port: number;
  /** the name the serving certificate must carry */
  serverName: string;
  caPem?: string;
}

/** The answer larger than this is refused (kube-apiserver's own request limit). */
export const maxResponseBytes = 3 * 1024 * 1024;

function caPemOf(config: WebhookClientConfig): string | undefined {
  if (!config.caBundle) return undefined;
  const pem = Buffer.from(config.caBundle, 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new CallFailure('clientConfig.caBundle holds no PEM certificate');
  return pem;
}

/** Where a webhook's clientConfig points; a `service` is dialled as service-endpoint.ts says. */
export async function resolveEndpoint(store: Store, config: WebhookClientConfig | undefined, timeoutSeconds: number): Promise<Endpoint> {
  if (!config) throw new CallFailure('the webhook has no clientConfig');
  const timeoutQuery = `timeout=${timeoutSeconds}s`;
  if (config.url !== undefined) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      throw new CallFailure(`clientConfig.url ${JSON.stringify(config.url)} is not a URL`);
    }
    if (url.protocol !== 'https:') throw new CallFailure(`clientConfig.url ${JSON.stringify(config.url)}: 'https' is the only allowed URL scheme`);
    url.search = url.search ? `${url.search}&${timeoutQuery}` : `?${timeoutQuery}`;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    return { url, host, port: Number(url.port || 443), serverName: host, caPem: caPemOf(config) };
  }
  const ref = config.service;
  if (!ref?.namespace || !ref.name) throw new CallFailure('clientConfig needs url or service with namespace and name');
  let endpoint: ServiceEndpoint;
  try {
    endpoint = await serviceEndpoint(store, { namespace: ref.namespace, name: ref.name, port: ref.port });
  } catch (e) {
    if (e instanceof ServiceEndpointError) throw new CallFailure(e.message);
    throw e;
  }
  const url = new URL(`https://${endpoint.serverName}:${ref.port ?? 443}${ref.path ?? ''}`);
  url.search = url.search ? `${url.search}&${timeoutQuery}` : `?${timeoutQuery}`;
  return { url, ...endpoint, caPem: caPemOf(config) };
}

/** POSTs `body` and resolves with the parsed JSON answer; every failure is a CallFailure naming the URL. */
export function postReview(endpoint: Endpoint, body: unknown, timeoutMs: number): Promise<unknown> {
  const payload = Buffer.from(JSON.stringify(body));
  const failed = (why: string) => new CallFailure(`failed to call webhook: Post "${endpoint.url.href}": ${why}`);
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (err) reject(err); else resolve(value);
    };
    const req = https.request({
      host: endpoint.host, port: endpoint.port, method: 'POST',
      path: endpoint.url.pathname + endpoint.url.search,
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': payload.length, host: endpoint.url.host },
      servername: net.isIP(endpoint.serverName) ? undefined : endpoint.serverName,
      ca: endpoint.caPem, rejectUnauthorized: true,
      // the certificate must name what the configuration names, whatever address was dialled
      checkServerIdentity: (_host, cert) => tls.checkServerIdentity(endpoint.serverName, cert),
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > maxResponseBytes) {
          finish(failed(`the response is larger than ${maxResponseBytes} bytes`));
          req.destroy();
          return;
        }
        chunks.push(d);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) {
          finish(failed(`the server responded with status ${res.statusCode}: ${JSON.stringify(text.slice(0, 200))}`));
          return;
        }
        try {
          finish(undefined, JSON.parse(text));
        } catch (e) {
          finish(new CallFailure(`received invalid webhook response: ${(e as Error).message}`));
        }
      });
      res.on('error', (e) => finish(failed(e.message)));
    });
    const deadline = setTimeout(() => {
      finish(failed('context deadline exceeded'));
      req.destroy();
    }, timeoutMs);
    req.on('error', (e) => finish(failed(e.message)));
    req.end(payload);
  });
}
