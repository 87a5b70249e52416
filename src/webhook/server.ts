// The webhook's HTTPS endpoint: POST /validate and /mutate (cert-manager's paths) carry
// AdmissionReviews to admission-review.ts; GET /healthz and /readyz answer 200. Whatever a
// client sends, the answer is an HTTP response: a body past the limit, bad JSON or a throwing
// rule become a 4xx/5xx with a message, never a crashed process.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reviewAdmission, type AdmissionMode } from './admission-review.ts';
import { refuseRenegotiation, SERVER_TLS_OPTIONS } from '../server/tls.ts';

/** kube-apiserver's own request limit: no AdmissionReview it sends is larger */
export const maxReviewBytes = 3 * 1024 * 1024;

export interface WebhookServerOptions {
  host: string;
  port: number;
  certPem: string;
  keyPem: string;
  maxBodyBytes?: number;
  /** why the webhook should not get traffic now (for /readyz), or undefined when it may */
  notReady?: () => string | undefined;
  /** called for requests that failed in an unexpected way (a bug), for the log */
  onInternalError?: (err: Error) => void;
}

export interface RunningWebhookServer {
  host: string;
  port: number;
  /** swaps the serving certificate for new connections */
  setCertificate(certPem: string, keyPem: string): void;
  close(): Promise<void>;
}

function sendText(res: ServerResponse, status: number, text: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...extraHeaders });
  res.end(`${text}\n`);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        resolve('too-large');
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!done) {
        done = true;
        resolve(Buffer.concat(chunks));
      }
    });
    req.on('error', (e) => {
      if (!done) {
        done = true;
        reject(e);
      }
    });
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, o: WebhookServerOptions): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz' || path === '/readyz' || path === '/livez') {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendText(res, 405, `${req.method} is not allowed on ${path}: use GET`, { Allow: 'GET, HEAD' });
    const problem = path === '/readyz' ? o.notReady?.() : undefined;
    return problem ? sendText(res, 503, `not ready: ${problem}`) : sendText(res, 200, 'ok');
  }
  if (path !== '/validate' && path !== '/mutate') return sendText(res, 404, `no such path ${JSON.stringify(path)}: the webhook serves POST /validate, POST /mutate, GET /healthz, GET /readyz`);
  if (req.method !== 'POST') return sendText(res, 405, `${req.method} is not allowed on ${path}: AdmissionReviews are POSTed`, { Allow: 'POST' });
  const contentType = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (contentType !== '' && contentType !== 'application/json') {
    return sendText(res, 415, `unsupported content type ${JSON.stringify(contentType)}: AdmissionReviews are sent as application/json`);
  }
  const limit = o.maxBodyBytes ?? maxReviewBytes;
  const body = await readBody(req, limit);
  if (body === 'too-large') {
    // the rest of the upload is not read: the connection goes with the answer
    sendText(res, 413, `the AdmissionReview is larger than ${limit} bytes, the most this webhook reads`, { Connection: 'close' });
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    return sendText(res, 400, `malformed AdmissionReview: the body is not JSON: ${(e as Error).message}`);
  }
  const result = reviewAdmission(path === '/validate' ? 'validate' : 'mutate' satisfies AdmissionMode, parsed);
  if (result.httpStatus !== 200) return sendText(res, result.httpStatus, result.message);
  const out = JSON.stringify(result.review);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(out) });
  res.end(out);
}

export async function startWebhookServer(o: WebhookServerOptions): Promise<RunningWebhookServer> {
  const server = https.createServer({ ...SERVER_TLS_OPTIONS, cert: o.certPem, key: o.keyPem }, (req, res) => {
    handle(req, res, o).catch((e: Error) => {
      o.onInternalError?.(e);
      sendText(res, 500, `internal error while reviewing the request: ${e.message}`);
    });
  });
  refuseRenegotiation(server);
  // slow or silent clients must not hold sockets forever (kube-apiserver waits at most 30 s)
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 30_000;
  server.on('clientError', (_err, socket) => socket.destroy());
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    setCertificate(certPem, keyPem) {
      server.setSecureContext({ cert: certPem, key: keyPem, minVersion: 'TLSv1.2' });
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
