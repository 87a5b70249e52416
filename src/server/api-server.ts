// The Kubernetes REST API over a Store: enough of kube-apiserver for kubectl, the certsmith
// CLI and HttpStore (and so the cluster backend) to work against the embedded store.
import http from 'node:http';
import https from 'node:https';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type * as YAMLModule from 'yaml';
import type { Logger } from 'pino';
import type { KubeObject } from '../api/meta.ts';
import { NamespaceType, apiVersionOf, type ResourceType } from '../api/resources.ts';
import { openAPIV3Index, openAPIV3Document } from '../api/openapi.ts';
import { duplicateFields, jsonPointer, parseFieldValidation, pruneUnknownFields, pruneUnknownPatchFields, strictProblems, type FieldValidation } from '../api/unknown-fields.ts';
import { applyJSONPatch } from '../store/patch.ts';
import { StoreError, WatchTooSlowError, tooLargeResourceVersion, type Store, type PatchType, type DeleteOptions, type WatchEvent, type Watch } from '../store/store.ts';
import { checkValueShape, maxNestingDepth, nestingError, textNestsDeeperThan } from '../store/object-checks.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, serverVersion, typesIn } from './discovery.ts';
import { tableFor } from './table.ts';
import { builtInNamespaces } from './namespaces.ts';
import { ProtobufDecodeError, decodeObject, encodeObject, isProtobufMediaType, protobufMediaType } from './protobuf/codec.ts';
import { authorizationGroup, authorizationVersion, reviewAccess, reviewRules } from './authorization.ts';
import { AggregationError, aggregatedBackend, proxyRequest } from './aggregation.ts';
import { openAPIV2Document, openAPIV2Protobuf, openAPIV2ProtobufContentType, openAPIV2ProtobufMediaTypes } from './openapi/v2.ts';

export interface ApiServerOptions {
  store: Store;
  /** default 127.0.0.1 */
  host?: string;
  /** 0 (the default) picks a free port */
  port?: number;
  tls?: { certPem: string; keyPem: string };
  /** when set, every request but the health probes needs `Authorization: Bearer <token>` */
  token?: string;
  logger?: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  /** how long a watch stays open when the client names no timeoutSeconds */
  defaultWatchTimeoutSeconds?: number;
  now?: () => Date;
  /**
   * Namespaces that exist from the start, as on a cluster: objects may only be created in a
   * namespace that exists. Default: default, kube-system, kube-public and cert-manager (the
   * cluster resource namespace and leader election's).
   */
  namespaces?: readonly string[];
}

export interface RunningApiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const maxBodyBytes = 3 * 1024 * 1024; // kube-apiserver's request size limit
/**
 * A watch never stays open longer than this, whatever timeoutSeconds asks: kube-apiserver's
 * default is 30-60 minutes, and setTimeout fires at once past 2^31 ms (which made clients
 * reconnect in a tight loop).
 */
const maxWatchTimeoutSeconds = 3600;
/**
 * Serialized events a watch holds for a client that stopped reading, when the store cannot
 * pause (the SQLite store pauses, so this is a backstop): past it the watch is closed.
 */
const maxWatchBufferBytes = 8 * 1024 * 1024;
/** how long a closed watch's client gets to take what was already written before its connection is cut */
const watchLingerMs = 10_000;
const utf8 = new TextDecoder('utf-8', { fatal: true });

class HttpError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string, readonly details?: object) {
    super(message);
  }
}

interface ResourceRoute {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** the name a create carried in its body, for error details */
  bodyName?: string;
}

/** Splits /api/v1/... and /apis/<g>/<v>/... into a resource, namespace, name and subresource. */
function resourceRoute(group: string, version: string, segs: string[]): ResourceRoute | undefined {
  const types = typesIn(group, version);
  const byPlural = (p: string) => types.find((t) => t.plural === p);
  if (segs[0] === 'namespaces' && segs.length >= 3 && byPlural(segs[2])?.namespaced) {
    if (segs.length > 5) return undefined;
    return { type: byPlural(segs[2])!, namespace: segs[1], name: segs[3], subresource: segs[4] };
  }
  const type = byPlural(segs[0]);
  if (!type || segs.length > 3) return undefined;
  return { type, name: segs[1], subresource: segs[2] };
}

function resourceName(t: ResourceType) {
  return t.group ? `${t.plural}.${t.group}` : t.plural;
}

function statusBody(code: number, reason: string, message: string, details?: object) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) };
}

function errorStatus(e: unknown, route?: ResourceRoute) {
  if (e instanceof StoreError) {
    // kube-apiserver names the kind in an Invalid's details and the resource otherwise; kubectl prints them
    const kind = e.reason === 'Invalid' ? route?.type.kind : route?.type.plural;
    const s = e.toStatus(kind, route?.name ?? route?.bodyName) as ReturnType<StoreError['toStatus']> & { details?: Record<string, unknown> };
    if (s.details && route?.type.group) s.details.group = route.type.group;
    return s;
  }
  if (e instanceof HttpError) return statusBody(e.code, e.reason, e.message, e.details);
  return undefined;
}

function sendJSON(res: http.ServerResponse, code: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

async function readBodyBytes(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new HttpError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${maxBodyBytes}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function textOf(bytes: Buffer): string {
  try {
    // bytes that are not UTF-8 would otherwise become U+FFFD silently, and be stored so
    return utf8.decode(bytes);
  } catch {
    throw new HttpError(400, 'BadRequest', 'the request body is not valid UTF-8');
  }
}

let yamlModule: typeof YAMLModule | undefined;
/** The YAML parser loads on the first server-side apply (CommonJS, so synchronously), not with the server. */
function yamlParser(): typeof YAMLModule {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof YAMLModule);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  return textOf(await readBodyBytes(req));
}

/**
 * An object body: JSON, or Kubernetes protobuf for the built-in kinds (kubectl sends those as
 * protobuf: `kubectl create secret`, `create namespace`, `auth can-i`). A protobuf object gets
 * the same shape checks as a JSON one; its nesting is bounded by its message definitions.
 */
async function readObject(req: http.IncomingMessage, what = 'request body'): Promise<any> {
  return (await readObjectAndText(req, what)).value;
}

/** readObject, with the JSON text it came from (duplicate keys are only visible there); protobuf has none. */
async function readObjectAndText(req: http.IncomingMessage, what = 'request body'): Promise<{ value: any; text?: string }> {
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
function sendObject(req: http.IncomingMessage, res: http.ServerResponse, code: number, body: { apiVersion?: string; kind?: string; [field: string]: unknown }) {
  const bytes = prefersProtobuf(req) ? encodeObject(body) : undefined;
  if (!bytes) return sendJSON(res, code, body);
  res.writeHead(code, { 'Content-Type': protobufMediaType, 'Content-Length': bytes.length, 'Cache-Control': 'no-cache, private' });
  res.end(bytes);
}

/**
 * A JSON body, refused before parsing when it nests past the limit (our copies and patches
 * recurse), and after when a string or key in it is not well-formed Unicode.
 */
function parseJSON(text: string, what = 'request body'): any {
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

/** A query parameter that kube decodes as an integer: absent, or digits (with a sign when allowed). */
function intParam(q: URLSearchParams, name: string, opts: { signed?: boolean } = {}): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!(opts.signed ? /^-?[0-9]{1,18}$/ : /^[0-9]{1,18}$/).test(v)) {
    throw new HttpError(400, 'BadRequest', `invalid value for query parameter ${name}: ${JSON.stringify(v)} is not ${opts.signed ? 'an integer' : 'a non-negative integer'}`);
  }
  return Number(v);
}

/** dryRun as kube validates it: every value must be "All". */
function dryRunOf(values: unknown[], kind: string): boolean {
  for (const v of values) {
    if (v !== 'All') {
      throw new StoreError('Invalid', `${kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`,
        [{ field: 'dryRun', message: `Unsupported value: ${JSON.stringify(v)}: supported values: "All"`, reason: 'FieldValueNotSupported' }]);
    }
  }
  return values.length > 0;
}

function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  const ct = (contentType ?? '').split(';')[0].trim().toLowerCase();
  switch (ct) {
    case 'application/merge-patch+json':
    case 'application/strategic-merge-patch+json': // our CRDs have no patch strategies; Secrets are flat maps
      return 'merge';
    case 'application/json-patch+json':
      return 'json';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+json':
      return 'apply';
    default:
      return undefined;
  }
}

const truthy = (v: string | null) => v === '1' || v === 'true';

function wantsTable(req: http.IncomingMessage) {
  return /as=Table/.test(req.headers.accept ?? '');
}

function hashOf(s: string) {
  return createHash('sha256').update(s).digest();
}

function fieldValidationOf(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  const mode = parseFieldValidation(v);
  if (!mode) throw new HttpError(400, 'BadRequest', `fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`);
  return mode;
}

/**
 * Unknown and duplicate fields as kube-apiserver treats them: Strict refuses the write with its
 * strict decoding error (`decodePrefix` is what kube says before it when a body fails to
 * decode), Warn sends each problem as a Warning header (code 299, as kubectl prints them),
 * Ignore says nothing. The unknown fields are already pruned from what will be stored.
 */
function enforceFieldValidation(mode: FieldValidation, problems: string[], res: http.ServerResponse, decodePrefix = '') {
  if (!problems.length || mode === 'Ignore') return;
  if (mode === 'Strict') throw new HttpError(400, 'BadRequest', `${decodePrefix}strict decoding error: ${problems.join(', ')}`);
  res.setHeader('Warning', problems.map((p) => `299 - ${headerQuoted(p)}`));
}

/** A quoted string as Go's %q writes it for a header: only printable ASCII goes out as is (a field name can be any Unicode). */
function headerQuoted(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const jsonPatchOpFields = new Set(['op', 'path', 'value', 'from']);

/** kube's complaints about the operations of a JSON patch themselves: unknown members of an operation, duplicate ones. */
function jsonPatchProblems(ops: unknown, text: string): string[] {
  const out = duplicateFields(text).map((p) => `json patch duplicate field "${p}"`);
  if (Array.isArray(ops)) {
    ops.forEach((op, i) => {
      if (op && typeof op === 'object' && !Array.isArray(op)) {
        for (const k of Object.keys(op)) if (!jsonPatchOpFields.has(k)) out.push(`json patch unknown field "[${i}].${k}"`);
      }
    });
  }
  return out;
}

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const { store } = opts;
  const host = opts.host ?? '127.0.0.1';
  const log = opts.logger;
  const now = opts.now ?? (() => new Date());
  const tokenHash = opts.token ? hashOf(opts.token) : undefined;
  const openWatches = new Set<() => void>();
  let serverAddress = '';
  await ensureNamespaces(store, opts.namespaces ?? builtInNamespaces);

  function authorized(req: http.IncomingMessage) {
    if (!tokenHash) return true;
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    return !!m && timingSafeEqual(hashOf(m[1].trim()), tokenHash);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      // "/\host..." reads as a URL with an invalid host: a client's mistake, not a server error
      return sendJSON(res, 400, statusBody(400, 'BadRequest', `the request path ${JSON.stringify(req.url)} is malformed`));
    }
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';

    if (path === '/healthz' || path === '/readyz' || path === '/livez') {
      // not ready while writes fail for lack of space: a load balancer or supervisor sees it
      const problem = path === '/readyz' ? store.storageProblem?.() : undefined;
      res.writeHead(problem ? 503 : 200, { 'Content-Type': 'text/plain' });
      res.end(problem ? `[-]storage failed: ${problem}\nreadyz check failed\n` : 'ok');
      return;
    }
    if (!authorized(req)) {
      sendJSON(res, 401, statusBody(401, 'Unauthorized', 'Unauthorized'));
      return;
    }
    let segs: string[];
    try {
      segs = path.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      return sendJSON(res, 400, statusBody(400, 'BadRequest', `the request path ${JSON.stringify(url.pathname)} has malformed percent-encoding`));
    }
    const readOnly = method === 'GET' || method === 'HEAD';

    if (path === '/version' && readOnly) return sendJSON(res, 200, serverVersion);
    if (path === '/api' && readOnly) return sendJSON(res, 200, apiVersions(serverAddress));
    if (path === '/apis' && readOnly) return sendJSON(res, 200, apiGroupList());
    if (segs[0] === 'openapi') return serveOpenAPI(segs, req, res);

    let group: string, version: string, rest: string[];
    if (segs[0] === 'api' && segs.length >= 2) [group, version, rest] = ['', segs[1], segs.slice(2)];
    else if (segs[0] === 'apis' && segs.length >= 3) [group, version, rest] = [segs[1], segs[2], segs.slice(3)];
    else if (segs[0] === 'apis' && segs.length === 2 && readOnly) {
      const g = apiGroup(segs[1]);
      return g ? sendJSON(res, 200, g) : notFoundPath(res, path);
    } else return notFoundPath(res, path);

    // a group/version served by an APIService's backend rather than by this server (API aggregation)
    if (segs[0] === 'apis' && typesIn(group, version).length === 0 && group !== authorizationGroup) {
      return proxyAggregated(group, version, method, url, req, res, path);
    }
    if (rest.length === 0) {
      const list = apiResourceList(group, version);
      return list && readOnly ? sendJSON(res, 200, list) : notFoundPath(res, path);
    }
    if (group === authorizationGroup && version === authorizationVersion) return serveReview(rest, method, req, res, path);
    const route = resourceRoute(group, version, rest);
    if (!route || (route.subresource && (route.subresource !== 'status' || !route.type.statusSubresource))) return notFoundPath(res, path);
    try {
      await serveResource(route, method, url, req, res);
    } catch (e) {
      const status = errorStatus(e, route);
      if (!status) {
        log?.error({ err: { message: (e as Error)?.message, stack: (e as Error)?.stack }, method, path }, 'internal error');
      }
      if (res.headersSent) {
        res.end();
        return;
      }
      const body = status ?? statusBody(500, 'InternalError', 'an internal error occurred');
      sendJSON(res, body.code, body);
    }
  }

  /** A request for an aggregated API, passed to its backend as kube-aggregator does (src/server/aggregation.ts). */
  async function proxyAggregated(group: string, version: string, method: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse, path: string) {
    try {
      const backend = await aggregatedBackend(store, group, version);
      if (!backend) return notFoundPath(res, path);
      const headers: Record<string, string> = {};
      for (const h of ['content-type', 'accept']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
      const body = method === 'GET' || method === 'HEAD' ? undefined : await readBodyBytes(req);
      const answer = await proxyRequest(backend, { method, path: url.pathname + url.search, headers, body, user: 'admin', maxBytes: maxBodyBytes });
      res.writeHead(answer.status, { 'Content-Type': answer.contentType ?? 'application/json', 'Content-Length': answer.body.length, 'Cache-Control': 'no-cache, private' });
      res.end(answer.body);
    } catch (e) {
      if (e instanceof AggregationError) return sendJSON(res, e.code, statusBody(e.code, e.reason, e.message));
      const status = errorStatus(e);
      if (status) return sendJSON(res, status.code, status);
      log?.error({ err: { message: (e as Error)?.message }, method, path }, 'aggregated API request failed');
      return sendJSON(res, 503, statusBody(503, 'ServiceUnavailable', `the server is currently unable to handle the request: ${(e as Error).message}`));
    }
  }

  /** SelfSubjectAccessReview and SelfSubjectRulesReview: answered, never stored */
  async function serveReview(rest: string[], method: string, req: http.IncomingMessage, res: http.ServerResponse, path: string) {
    const review = rest.length === 1 ? ({ selfsubjectaccessreviews: reviewAccess, selfsubjectrulesreviews: reviewRules } as Record<string, (b: unknown) => Record<string, unknown>>)[rest[0]] : undefined;
    if (!review) return notFoundPath(res, path);
    try {
      if (method !== 'POST') throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported on ${rest[0]}.${authorizationGroup}: only create`);
      return sendObject(req, res, 201, review(await readObject(req)));
    } catch (e) {
      const status = errorStatus(e);
      if (!status) throw e;
      sendJSON(res, status.code, status);
    }
  }

  function notFoundPath(res: http.ServerResponse, path: string) {
    sendJSON(res, 404, statusBody(404, 'NotFound', `the server could not find the requested resource (${path})`));
  }

  function serveOpenAPI(segs: string[], req: http.IncomingMessage, res: http.ServerResponse) {
    if (segs[1] === 'v2' && segs.length === 2) {
      // protobuf only when asked for: older kubectl asks for nothing else, JSON readers never ask for it
      const accepted = (req.headers.accept ?? '').split(',').map((r) => r.split(';')[0].trim().toLowerCase());
      if (!accepted.some((a) => openAPIV2ProtobufMediaTypes.includes(a))) return sendJSON(res, 200, openAPIV2Document());
      const bytes = openAPIV2Protobuf();
      res.writeHead(200, { 'Content-Type': openAPIV2ProtobufContentType, 'Content-Length': bytes.length, 'Cache-Control': 'no-cache, private' });
      res.end(bytes);
      return;
    }
    if (segs[1] !== 'v3') return notFoundPath(res, '/' + segs.join('/'));
    if (segs.length === 2) return sendJSON(res, 200, openAPIV3Index());
    let doc: unknown;
    if (segs[2] === 'api' && segs.length === 4) doc = openAPIV3Document('', segs[3]);
    else if (segs[2] === 'apis' && segs.length === 5) doc = openAPIV3Document(segs[3], segs[4]);
    return doc ? sendJSON(res, 200, doc) : notFoundPath(res, '/' + segs.join('/'));
  }

  async function serveResource(route: ResourceRoute, method: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
    const { type, namespace, name, subresource } = route;
    const q = url.searchParams;
    // reads ignore dryRun, as kube-apiserver does; writes refuse a value it does not know
    const writeOptionsKind = ({ POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' } as Record<string, string>)[method];
    const dryRun = writeOptionsKind ? dryRunOf(q.getAll('dryRun'), writeOptionsKind) : false;
    const fieldManager = q.get('fieldManager') ?? undefined;
    const table = wantsTable(req);
    const asTable = (objs: KubeObject[], meta: { resourceVersion?: string; continue?: string } = {}) =>
      tableFor(type, objs, { now: now(), includeObject: (q.get('includeObject') as 'None' | 'Metadata' | 'Object' | null) ?? undefined, ...meta });

    if (!name) {
      switch (method) {
        case 'GET': {
          if (truthy(q.get('watch'))) return serveWatch(route, q, res, table);
          const wantedRV = requestedRevision(q);
          const list = await store.list(type, {
            namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined,
            limit: intParam(q, 'limit'), continue: q.get('continue') ?? undefined,
          });
          if (wantedRV !== undefined && wantedRV > Number(list.resourceVersion)) throw tooLargeResourceVersion(wantedRV, list.resourceVersion);
          const meta = { resourceVersion: list.resourceVersion, ...(list.continue ? { continue: list.continue } : {}) };
          if (table) return sendJSON(res, 200, asTable(list.items, meta));
          return sendObject(req, res, 200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: meta, items: list.items });
        }
        case 'POST': {
          await checkNamespaceExists(type, namespace);
          const mode = fieldValidationOf(q);
          const body = await readObjectAndText(req);
          const obj = objectFromBody(type, body.value, namespace);
          route.bodyName = obj.metadata.name;
          const duplicates = mode !== 'Ignore' && body.text !== undefined ? duplicateFields(body.text) : [];
          enforceFieldValidation(mode, strictProblems(duplicates, pruneUnknownFields(type, obj)), res, decodePrefix(type));
          const created = await store.create(type, obj, { dryRun, fieldManager });
          return sendObject(req, res, 201, created);
        }
        case 'DELETE': {
          const deleteOpts = deleteOptionsFrom(await readBody(req), q);
          const list = await store.list(type, { namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
          const items: KubeObject[] = [];
          for (const o of list.items) {
            const gone = await store.delete(type, o.metadata.namespace, o.metadata.name!, { ...deleteOpts, ...(dryRun ? { dryRun } : {}) } as DeleteOptions);
            items.push(gone ?? o);
          }
          return sendJSON(res, 200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: list.resourceVersion }, items });
        }
        default:
          throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported on a ${type.plural} collection`);
      }
    }

    switch (method) {
      case 'GET': {
        const obj = await store.get(type, namespace, name);
        if (!obj) throw new StoreError('NotFound', `${resourceName(type)} "${name}" not found`);
        return table ? sendJSON(res, 200, asTable([obj], { resourceVersion: obj.metadata.resourceVersion })) : sendObject(req, res, 200, obj);
      }
      case 'PUT': {
        const mode = fieldValidationOf(q);
        const body = await readObjectAndText(req);
        const obj = objectFromBody(type, body.value, namespace);
        const duplicates = mode !== 'Ignore' && body.text !== undefined ? duplicateFields(body.text) : [];
        enforceFieldValidation(mode, strictProblems(duplicates, pruneUnknownFields(type, obj)), res, decodePrefix(type));
        if (obj.metadata.name !== name) {
          throw new HttpError(400, 'BadRequest', `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
        }
        const out = subresource === 'status'
          ? await store.updateStatus(type, obj, { dryRun, fieldManager })
          : await store.update(type, obj, { dryRun, fieldManager });
        return sendObject(req, res, 200, out);
      }
      case 'PATCH': {
        const patchType = patchTypeOf(req.headers['content-type']);
        if (!patchType) {
          throw new HttpError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`);
        }
        if (patchType === 'apply' && !fieldManager) {
          throw new HttpError(400, 'BadRequest', 'PATCH requests with application/apply-patch+yaml require fieldManager');
        }
        const mode = fieldValidationOf(q);
        const text = await readBody(req);
        let patch: unknown;
        if (patchType === 'apply') {
          // flow collections nest like JSON; block nesting deep enough to hurt needs more text than the body limit allows
          if (textNestsDeeperThan(text)) throw nestingError(maxNestingDepth);
          try {
            patch = yamlParser().parse(text);
          } catch (e) {
            if (e instanceof RangeError) throw nestingError(maxNestingDepth);
            throw new HttpError(400, 'BadRequest', `the apply body is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
          }
          if (!patch || typeof patch !== 'object') throw new HttpError(400, 'BadRequest', 'the apply body must be an object');
          checkValueShape(patch);
          // YAML refuses duplicate keys while parsing; what is left are unknown fields
          enforceFieldValidation(mode, strictProblems([], pruneUnknownFields(type, patch)), res);
        } else {
          patch = parseJSON(text, 'patch');
          if (patchType === 'merge') {
            const duplicates = mode !== 'Ignore' ? duplicateFields(text) : [];
            const unknown = patch && typeof patch === 'object' ? pruneUnknownPatchFields(type, patch) : [];
            enforceFieldValidation(mode, strictProblems(duplicates, unknown), res);
          } else {
            patch = await prunedJSONPatch(route, patch, mode, text, res);
          }
        }
        // an apply that creates answers 201, as kube-apiserver's does
        const creates = patchType === 'apply' && !subresource && !(await store.get(type, namespace, name));
        if (creates) await checkNamespaceExists(type, namespace);
        const out = await store.patch(type, namespace, name, patchType, patch, {
          dryRun, fieldManager, force: truthy(q.get('force')), ...(subresource === 'status' ? { subresource: 'status' as const } : {}),
        });
        return sendObject(req, res, creates ? 201 : 200, out);
      }
      case 'DELETE': {
        if (subresource) throw new HttpError(405, 'MethodNotAllowed', 'DELETE is not supported on a subresource');
        const deleteOpts = deleteOptionsFrom(await readBody(req), q);
        const out = await store.delete(type, namespace, name, { ...deleteOpts, ...(dryRun ? { dryRun } : {}) } as DeleteOptions);
        if (out) return sendObject(req, res, 200, out);
        return sendJSON(res, 200, {
          kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
          details: { name, kind: type.plural, ...(type.group ? { group: type.group } : {}) },
        });
      }
      default:
        throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported on ${resourceName(type)}`);
    }
  }

  /**
   * kube-apiserver's NamespaceLifecycle admission: nothing is created in a namespace that does
   * not exist (the store would otherwise make the namespace up), with kube's 404.
   */
  async function checkNamespaceExists(type: ResourceType, namespace: string | undefined) {
    if (!type.namespaced || !namespace) return;
    if (await store.get(NamespaceType, undefined, namespace)) return;
    throw new HttpError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
  }

  /**
   * A JSON patch is checked on its result, as kube-apiserver checks it: the patch is tried on
   * the stored object, and a remove operation is added for each unknown field it would leave.
   * (A patch that cannot apply is left for the store to refuse with its own error.)
   */
  async function prunedJSONPatch(route: ResourceRoute, patch: unknown, mode: FieldValidation, text: string, res: http.ServerResponse): Promise<unknown> {
    const problems = mode === 'Ignore' ? [] : jsonPatchProblems(patch, text);
    const current = Array.isArray(patch) ? await store.get(route.type, route.namespace, route.name!) : undefined;
    let unknown: ReturnType<typeof pruneUnknownFields> = [];
    if (current) {
      try {
        unknown = pruneUnknownFields(route.type, applyJSONPatch(structuredClone(current), patch as any));
      } catch {
        unknown = [];
      }
    }
    enforceFieldValidation(mode, [...problems, ...strictProblems([], unknown)], res);
    return unknown.length ? [...(patch as unknown[]), ...unknown.map((u) => ({ op: 'remove', path: jsonPointer(u.pointer) }))] : patch;
  }

  async function serveWatch(route: ResourceRoute, q: URLSearchParams, res: http.ServerResponse, table: boolean) {
    const { type, namespace } = route;
    const timeoutSeconds = Math.min(intParam(q, 'timeoutSeconds') || (opts.defaultWatchTimeoutSeconds ?? 1800), Math.max(maxWatchTimeoutSeconds, opts.defaultWatchTimeoutSeconds ?? 0));
    const wantedRV = requestedRevision(q);
    const labelSelector = q.get('labelSelector') ?? undefined;
    const fieldSelector = q.get('fieldSelector') ?? undefined;
    if (wantedRV !== undefined) {
      // answered before the stream starts, as kube-apiserver does: a client must not wait on a revision that may never come
      const current = (await store.list(type, { namespace, limit: 1 })).resourceVersion;
      if (wantedRV > Number(current)) throw tooLargeResourceVersion(wantedRV, current);
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    let done = false;
    // assigned after store.watch returns; the callbacks may run before that
    const current: { watch?: Watch } = {};
    /** the socket's buffer is full: the store's watcher is paused until 'drain' */
    let waiting = false;
    /** events a store that cannot pause delivered meanwhile */
    const overflow: string[] = [];
    let overflowBytes = 0;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      openWatches.delete(finish);
      current.watch?.stop();
      overflow.length = 0;
      res.end();
      // a client that never reads would hold what was written (and its socket) forever
      if (!res.writableFinished) {
        const linger = setTimeout(() => res.destroy(), watchLingerMs);
        linger.unref();
        res.once('finish', () => clearTimeout(linger));
        res.once('close', () => clearTimeout(linger));
      }
    };
    const timer = setTimeout(finish, timeoutSeconds * 1000);
    openWatches.add(finish);
    res.on('close', finish);
    res.on('drain', () => {
      if (done) return;
      while (overflow.length) {
        const text = overflow.shift()!;
        overflowBytes -= text.length;
        if (!res.write(text)) return;
      }
      waiting = false;
      current.watch?.resume?.();
    });
    /** false: stop sending until 'drain' (the store pauses this watcher) */
    const write = (line: unknown): boolean => {
      if (done) return false;
      const text = JSON.stringify(line) + '\n';
      if (waiting) {
        overflow.push(text);
        overflowBytes += text.length;
        // kube-apiserver closes a watcher that cannot keep up; the client re-lists
        if (overflowBytes > maxWatchBufferBytes) finish();
        return false;
      }
      if (res.write(text)) return true;
      waiting = true;
      return false;
    };
    const rv = q.get('resourceVersion');
    const watch = store.watch(type, {
      namespace, labelSelector, fieldSelector,
      // kube-apiserver starts a watch without a resourceVersion with the current state
      resourceVersion: rv ? rv : '0',
      allowBookmarks: truthy(q.get('allowWatchBookmarks')),
      backpressure: true,
    }, (e: WatchEvent) => {
      const object = table && e.type !== 'BOOKMARK' ? tableFor(type, [e.object], { now: now() }) : e.object;
      return write({ type: e.type, object });
    }, (err) => {
      // a watcher closed for being too slow just ends, as kube-apiserver ends it: the client re-lists
      if (!(err instanceof WatchTooSlowError)) {
        const status = errorStatus(err, route) ?? statusBody(500, 'InternalError', 'the watch failed');
        waiting = false;
        write({ type: 'ERROR', object: status });
      }
      finish();
    });
    current.watch = watch;
    if (done) watch.stop();
    // the headers go out only once the watch is registered: a client that waits for them
    // knows that every write it makes afterwards will be seen
    else res.flushHeaders();
  }

  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((e) => {
      log?.error({ err: { message: (e as Error)?.message } }, 'request failed');
      if (!res.headersSent) sendJSON(res, 500, statusBody(500, 'InternalError', 'an internal error occurred'));
      else res.end();
    });
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, listener)
    : http.createServer(listener);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  serverAddress = `${urlHost}:${port}`;
  const url = `${opts.tls ? 'https' : 'http'}://${serverAddress}`;
  log?.info({ url }, 'API server listening');

  return {
    url,
    port,
    async close() {
      for (const finish of [...openWatches]) finish();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function ensureNamespaces(store: Store, names: readonly string[]) {
  for (const name of names) {
    if (await store.get(NamespaceType, undefined, name)) continue;
    try {
      await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      // another writer made it meanwhile
      if (!(e instanceof StoreError && e.reason === 'AlreadyExists')) throw e;
    }
  }
}

/** What kube-apiserver says before a decoding error of a body of this kind. */
function decodePrefix(type: ResourceType): string {
  return `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: `;
}

/** The object a POST or PUT carries, checked against the URL it was sent to. */
function objectFromBody(type: ResourceType, body: any, namespace: string | undefined): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'BadRequest', 'the request body must be a JSON object');
  const apiVersion = apiVersionOf(type);
  if (body.apiVersion && body.apiVersion !== apiVersion) {
    throw new HttpError(400, 'BadRequest', `the API version in the data (${body.apiVersion}) does not match the expected API version (${apiVersion})`);
  }
  if (body.kind && body.kind !== type.kind) {
    throw new HttpError(400, 'BadRequest', `the kind in the data (${body.kind}) does not match the expected kind (${type.kind})`);
  }
  body.apiVersion = apiVersion;
  body.kind = type.kind;
  body.metadata = body.metadata && typeof body.metadata === 'object' ? body.metadata : {};
  if (type.namespaced && namespace) {
    if (body.metadata.namespace && body.metadata.namespace !== namespace) {
      throw new HttpError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    }
    body.metadata.namespace = namespace;
  }
  if (!type.namespaced) delete body.metadata.namespace;
  return body as KubeObject;
}

/** Go's name for a JSON value's type, for decode errors worded as kube-apiserver's. */
function goType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v;
}

function decodeFailure(v: unknown, field: string, goTypeName: string): HttpError {
  return new HttpError(400, 'BadRequest', `json: cannot unmarshal ${goType(v)} into Go ${field ? `struct field DeleteOptions.${field}` : 'value'} of type ${goTypeName}`);
}

/**
 * DeleteOptions from the body and the query, decoded and validated as kube-apiserver does
 * before anything is deleted: a malformed precondition must never read as "no precondition".
 */
function deleteOptionsFrom(text: string, q: URLSearchParams): DeleteOptions & { dryRun?: boolean } {
  const body: unknown = text.trim() ? parseJSON(text, 'DeleteOptions') : {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw decodeFailure(body, '', 'v1.DeleteOptions');
  const b = body as Record<string, unknown>;
  const optional = (field: string, ok: (v: unknown) => boolean, goTypeName: string, v: unknown = b[field]) => {
    if (v !== undefined && v !== null && !ok(v)) throw decodeFailure(v, field, goTypeName);
  };
  const isString = (v: unknown) => typeof v === 'string';
  optional('kind', isString, 'string');
  optional('apiVersion', isString, 'string');
  optional('gracePeriodSeconds', (v) => Number.isSafeInteger(v), 'int64');
  optional('orphanDependents', (v) => typeof v === 'boolean', 'bool');
  optional('propagationPolicy', isString, 'v1.DeletionPropagation');
  optional('dryRun', (v) => Array.isArray(v), '[]string');
  optional('preconditions', (v) => typeof v === 'object' && !Array.isArray(v), 'v1.Preconditions');
  const pre = (b.preconditions ?? undefined) as Record<string, unknown> | undefined;
  if (pre) {
    optional('preconditions.uid', isString, 'types.UID', pre.uid);
    optional('preconditions.resourceVersion', isString, 'string', pre.resourceVersion);
  }
  const dryRunValues = (b.dryRun ?? []) as unknown[];
  for (const v of dryRunValues) if (typeof v !== 'string') throw decodeFailure(v, 'dryRun', 'string');
  intParam(q, 'gracePeriodSeconds', { signed: true });
  const orphan = q.get('orphanDependents');
  if (orphan !== null && !['true', 'false', '1', '0'].includes(orphan)) throw new HttpError(400, 'BadRequest', `invalid value for query parameter orphanDependents: ${JSON.stringify(orphan)}`);
  const dryRun = dryRunOf(dryRunValues, 'DeleteOptions');
  const policy = (b.propagationPolicy ?? q.get('propagationPolicy') ?? undefined) as string | undefined;
  if (policy && !['Background', 'Foreground', 'Orphan'].includes(policy)) {
    throw new StoreError('Invalid', `DeleteOptions is invalid: propagationPolicy: Unsupported value: "${policy}"`, [{ field: 'propagationPolicy', message: `Unsupported value: "${policy}"`, reason: 'FieldValueNotSupported' }]);
  }
  const orphanDependents = typeof b.orphanDependents === 'boolean' ? b.orphanDependents : orphan === null ? undefined : truthy(orphan);
  if (orphanDependents !== undefined && policy) {
    throw new StoreError('Invalid', 'DeleteOptions is invalid: propagationPolicy: Invalid value: "' + policy + '": orphanDependents and deletionPropagation cannot be both set',
      [{ field: 'propagationPolicy', message: 'orphanDependents and deletionPropagation cannot be both set', reason: 'FieldValueInvalid' }]);
  }
  const preconditions = pre && (pre.uid || pre.resourceVersion)
    ? { ...(pre.uid ? { uid: pre.uid as string } : {}), ...(pre.resourceVersion ? { resourceVersion: pre.resourceVersion as string } : {}) }
    : undefined;
  const effectivePolicy = policy ?? (orphanDependents === true ? 'Orphan' : undefined);
  return {
    ...(effectivePolicy ? { propagationPolicy: effectivePolicy as DeleteOptions['propagationPolicy'] } : {}),
    ...(preconditions ? { preconditions } : {}),
    ...(dryRun ? { dryRun } : {}),
  };
}

/** A list's or watch's resourceVersion, when it names one ("" and "0" mean "any"). */
function requestedRevision(q: URLSearchParams): number | undefined {
  const rv = q.get('resourceVersion');
  if (rv === null || rv === '' || rv === '0') return undefined;
  if (!/^[0-9]{1,18}$/.test(rv)) throw new HttpError(400, 'BadRequest', `invalid resourceVersion ${JSON.stringify(rv)}: a resource version is an integer`);
  return Number(rv);
}
