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

/** what a streamed response gathers before it writes: fewer, larger chunks than an item each */
const streamChunkChars = 64 * 1024;

/** Resolves once `res` takes more (true), or with false when it closed first (a dropped or stalled client). */
function drained(res: http.ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (more: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(more);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/**
 * `head` as JSON with its last field, the array `field`, made of the items `pages` yield as JSON
 * text (so their producer knows their size): the same text JSON.stringify gives of the whole, written as the client takes it (waiting for
 * 'drain'), so a large list is never one string, and a client that stops reading holds a page
 * and a socket's buffer of it, not the list (8 such reads of a 107 MB list held 2.85 GB).
 * The pages are read only as they are needed; a response that fails after its headers went out
 * is cut off, so the client sees an error rather than a list that looks whole.
 */
export async function sendJSONItems(res: http.ServerResponse, code: number, head: Record<string, unknown>, field: string, pages: AsyncIterable<string[]>) {
  const whole = JSON.stringify({ ...head, [field]: [] });
  // the text up to the array's '[': ']}' closes it
  let out = whole.slice(0, -2);
  let first = true;
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  try {
    for await (const page of pages) {
      for (const item of page) {
        out += (first ? '' : ',') + item;
        first = false;
        if (out.length < streamChunkChars) continue;
        if (res.destroyed) return;
        const more = res.write(out);
        out = '';
        if (!more && !(await drained(res))) return;
      }
    }
  } catch (e) {
    res.destroy();
    throw e;
  }
  res.end(out + whole.slice(-2));
}

export function notFoundPath(res: http.ServerResponse, path: string) {
  sendJSON(res, 404, statusBody(404, 'NotFound', `the server could not find the requested resource (${path})`));
}

/**
 * Whether the response goes out as protobuf: when the client names it before JSON in Accept,
 * as client-go does for the built-in kinds ("application/vnd.kubernetes.protobuf,application/json").
 */
export function prefersProtobuf(req: http.IncomingMessage): boolean {
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

/**
 * Whether the client asked for PartialObjectMetadata (client-go's metadata client sends
 * as=PartialObjectMetadata or as=PartialObjectMetadataList first, plain JSON last); a Table, when
 * also named, is answered as a Table.
 */
export function wantsMetadataOnly(req: http.IncomingMessage) {
  return /as=PartialObjectMetadata/.test(req.headers.accept ?? '') && !wantsTable(req);
}

/** Whether the client asked for a Table (kubectl get) rather than the objects. */
export function wantsTable(req: http.IncomingMessage) {
  return /as=Table/.test(req.headers.accept ?? '');
}
