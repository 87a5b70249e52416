// Reading a request's body: the size limit, UTF-8, JSON with its nesting and shape checks,
// Kubernetes protobuf for the built-in kinds, and YAML for server-side apply.
import type http from 'node:http';
import { createRequire } from 'node:module';
import type * as YAMLModule from 'yaml';
import { checkValueShape, maxNestingDepth, nestingError, textNestsDeeperThan } from '../../store/object-checks.ts';
import { ProtobufDecodeError, decodeObject, isProtobufMediaType } from '../protobuf/codec.ts';
import { HttpError } from './responses.ts';

export const maxBodyBytes = 3 * 1024 * 1024; // kube-apiserver's request size limit
/** how long the rest of a body over the limit is read and dropped before its connection is closed */
const discardBodyMs = 2000;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body, read through 'data' events: an async iterator over the request costs more than the
 * rest of reading a small body (a create's), once per request.
 */
export function readBodyBytes(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        detach();
        // the rest is read and dropped for a moment, so that the 413 reaches a client still sending
        // (as Go's lingering close), then the connection goes: nothing more of the body is kept
        req.on('data', () => {});
        setTimeout(() => req.destroy(), discardBodyMs).unref();
        reject(new HttpError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${maxBodyBytes}`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      detach();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      detach();
      reject(err);
    };
    const onClose = () => {
      // closed before its end (the client went away): what for-await reports as a premature close
      if (req.readableEnded) return;
      detach();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    const detach = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function textOf(bytes: Buffer): string {
  try {
    // bytes that are not UTF-8 would otherwise become U+FFFD silently, and be stored so
    return utf8.decode(bytes);
  } catch {
    throw new HttpError(400, 'BadRequest', 'the request body is not valid UTF-8');
  }
}

export async function readBody(req: http.IncomingMessage): Promise<string> {
  return textOf(await readBodyBytes(req));
}

/**
 * An object body: JSON, or Kubernetes protobuf for the built-in kinds (kubectl sends those as
 * protobuf: `kubectl create secret`, `create namespace`, `auth can-i`). A protobuf object gets
 * the same shape checks as a JSON one; its nesting is bounded by its message definitions.
 */
export async function readObject(req: http.IncomingMessage, what = 'request body'): Promise<any> {
  return (await readObjectAndText(req, what)).value;
}

/** readObject, with the JSON text it came from (duplicate keys are only visible there); protobuf has none. */
export async function readObjectAndText(req: http.IncomingMessage, what = 'request body'): Promise<{ value: any; text?: string }> {
  const bytes = await readBodyBytes(req);
  if (!isProtobufMediaType(req.headers['content-type'])) {
    const text = textOf(bytes);
    return { value: parseJSON(text, what), text };
  }
  let value: Record<string, unknown>;
  try {
    value = decodeObject(bytes);
  } catch (e) {
    if (e instanceof ProtobufDecodeError) throw new HttpError(400, 'BadRequest', e.message);
    throw e;
  }
  checkValueShape(value);
  return { value };
}

/**
 * A JSON body, refused before parsing when it nests past the limit (our copies and patches
 * recurse), and after when a string or key in it is not well-formed Unicode.
 */
export function parseJSON(text: string, what = 'request body'): any {
  if (textNestsDeeperThan(text)) throw nestingError(maxNestingDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, 'BadRequest', `the ${what} is not valid JSON: ${(e as Error).message}`);
  }
  checkValueShape(value);
  return value;
}

let yamlModule: typeof YAMLModule | undefined;
/** The YAML parser loads on the first server-side apply (CommonJS, so synchronously), not with the server. */
function yamlParser(): typeof YAMLModule {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof YAMLModule);
}

/** A server-side apply body: YAML (JSON is YAML), an object, with the same nesting and shape checks as JSON. */
export function parseApplyBody(text: string): object {
  // flow collections nest like JSON; block nesting deep enough to hurt needs more text than the body limit allows
  if (textNestsDeeperThan(text)) throw nestingError(maxNestingDepth);
  let patch: unknown;
  try {
    // YAML 1.1's explicit tags (!!binary bytes, !!timestamp dates) would give values JSON cannot hold: their text stays a string
    patch = yamlParser().parse(text, { resolveKnownTags: false, logLevel: 'error' });
  } catch (e) {
    if (e instanceof RangeError) throw nestingError(maxNestingDepth);
    throw new HttpError(400, 'BadRequest', `the apply body is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!patch || typeof patch !== 'object') throw new HttpError(400, 'BadRequest', 'the apply body must be an object');
  checkValueShape(patch);
  return patch;
}
