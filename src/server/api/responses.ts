// What the API server answers with: kube Status bodies for errors, objects as JSON or protobuf.
import type http from 'node:http';
import { StoreError } from '../../store/store.ts';
import { encodeObject, protobufMediaType } from '../protobuf/codec.ts';
import type { ResourceRoute } from './resource-route.ts';

/** A refusal with kube's HTTP code and reason, answered as a Status. */
export class HttpError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string, readonly details?: object) {
    super(message);
  }
}

export function statusBody(code: number, reason: string, message: string, details?: object) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) };
}

/** The Status a known error answers with; undefined for anything else (an internal error). */
export function errorStatus(e: unknown, route?: ResourceRoute) {
  if (e instanceof StoreError) {
    // kube-apiserver names the kind in an Invalid's details and the resource otherwise; kubectl prints them
    const kind = e.reason === 'Invalid' ? route?.type.kind : route?.type.plural;
    const s = e.toStatus(kind, route?.name ?? route?.bodyName) as ReturnType<StoreError['toStatus']> & { details?: Record<string, unknown> };
    if (s.details?.kind && route?.type.group) s.details.group = route.type.group;
    return s;
  }
  if (e instanceof HttpError) return statusBody(e.code, e.reason, e.message, e.details);
  return undefined;
}

export function sendJSON(res: http.ServerResponse, code: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

export function notFoundPath(res: http.ServerResponse, path: string) {
  sendJSON(res, 404, statusBody(404, 'NotFound', `the server could not find the requested resource (${path})`));
}

/**
 * Whether the response goes out as protobuf: when the client names it before JSON in Accept,
 * as client-go does for the built-in kinds ("application/vnd.kubernetes.protobuf,application/json").
 */
function prefersProtobuf(req: http.IncomingMessage): boolean {
  for (const range of (req.headers.accept ?? '').split(',')) {
    const mediaType = range.split(';')[0].trim().toLowerCase();
    if (mediaType === protobufMediaType) return true;
    if (mediaType === 'application/json' || mediaType === '*/*' || mediaType === 'application/*') return false;
  }
  return false;
}

/** An object or list, in protobuf when the client prefers it and its kind has a message; JSON otherwise (custom resources, tables). */
export function sendObject(req: http.IncomingMessage, res: http.ServerResponse, code: number, body: { apiVersion?: string; kind?: string; [field: string]: unknown }) {
  const bytes = prefersProtobuf(req) ? encodeObject(body) : undefined;
  if (!bytes) return sendJSON(res, code, body);
  res.writeHead(code, { 'Content-Type': protobufMediaType, 'Content-Length': bytes.length, 'Cache-Control': 'no-cache, private' });
  res.end(bytes);
}

/** Whether the client asked for a Table (kubectl get) rather than the objects. */
export function wantsTable(req: http.IncomingMessage) {
  return /as=Table/.test(req.headers.accept ?? '');
}
