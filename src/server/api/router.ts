// One request's way through the API server: the path to a handler (health, discovery,
// OpenAPI, reviews, aggregated APIs, or a resource's verb), with the errors turned into Statuses.
import type http from 'node:http';
import { aggregatedGroupVersions, apiGroup, apiGroupList, apiResourceList, apiVersions, serverVersion, typesIn } from '../discovery.ts';
import { reviewAPI } from '../self-reviews.ts';
import { requestUser } from '../users.ts';
import type { ApiContext, ResourceCall } from './context.ts';
import { deleteCollection, deleteObject } from './handlers/delete.ts';
import { proxyAggregated, serveOpenAPI, serveReview } from './handlers/non-resource.ts';
import { serveHealth } from './handlers/health.ts';
import { patchObject } from './handlers/patch.ts';
import { getObject, listObjects } from './handlers/read.ts';
import { watchObjects } from './handlers/watch.ts';
import { createObject, updateObject } from './handlers/write.ts';
import { dryRunOf, truthy } from './query.ts';
import { resourceName, resourceRoute, type ResourceRoute } from './resource-route.ts';
import { readObject } from './request-body.ts';
import { isNamespaceType, supportsDeleteCollection } from '../../api/resources.ts';
import { withWarningRecorder } from '../warnings.ts';
import { HttpError, errorStatus, notFoundPath, sendJSON, statusBody, wantsMetadataOnly, wantsTable } from './responses.ts';

/** GET or HEAD (a request without a method is a GET): the requests discovery answers. */
function isRead(req: http.IncomingMessage) {
  const method = req.method ?? 'GET';
  return method === 'GET' || method === 'HEAD';
}

type Handler = (ctx: ApiContext, call: ResourceCall) => Promise<void>;

/**
 * GET of one object with watch=1 (kubectl's own watches use a list): kube-apiserver watches
 * the collection through a metadata.name field selector, beside any the client gave.
 */
const watchNamed: Handler = (ctx, call) => {
  if (call.route.subresource) return getObject(ctx, call);
  const q = new URLSearchParams(call.q);
  const byName = `metadata.name=${call.route.name}`;
  q.set('fieldSelector', q.get('fieldSelector') ? `${q.get('fieldSelector')},${byName}` : byName);
  return watchObjects(ctx, { ...call, q, route: { ...call.route, name: undefined } });
};

/** The handler for a verb: on a collection (no name) or on one object. */
function handlerFor(method: string, route: ResourceRoute, q: URLSearchParams): Handler | undefined {
  const named = !!route.name;
  if (!named) {
    if (method === 'GET') return truthy(q.get('watch')) ? watchObjects : listObjects;
    if (method === 'DELETE' && !supportsDeleteCollection(route.type)) return undefined;
    return ({ POST: createObject, DELETE: deleteCollection } as Record<string, Handler>)[method];
  }
  if (method === 'GET' && truthy(q.get('watch'))) return watchNamed;
  return ({ GET: getObject, PUT: updateObject, PATCH: patchObject, DELETE: deleteObject } as Record<string, Handler>)[method];
}

async function serveResource(ctx: ApiContext, route: ResourceRoute, method: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
  const q = url.searchParams;
  // reads ignore dryRun, as kube-apiserver does; writes refuse a value it does not know
  const writeOptionsKind = ({ POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' } as Record<string, string>)[method];
  const dryRun = writeOptionsKind ? dryRunOf(q.getAll('dryRun'), writeOptionsKind) : false;
  // kube-apiserver serves a namespaced kind's cluster-wide collection for reads only: no delete of every namespace's objects at once
  const acrossNamespaces = route.type.namespaced && route.namespace === undefined && !route.name;
  const handler = acrossNamespaces && method !== 'GET' ? undefined : handlerFor(method, route, q);
  if (!handler) {
    throw new HttpError(405, 'MethodNotAllowed', route.name ? `${method} is not supported on ${resourceName(route.type)}` : `${method} is not supported on a ${route.type.plural} collection`);
  }
  await handler(ctx, { route, q, req, res, dryRun, fieldManager: q.get('fieldManager') ?? undefined, user: requestUser(req), table: wantsTable(req), metadataOnly: wantsMetadataOnly(req) });
}

/** PUT /api/v1/namespaces/NAME/finalize: the Namespace's spec.finalizers, as kube-apiserver's finalize subresource sets them. */
async function finalizeNamespace(ctx: ApiContext, route: ResourceRoute, method: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
  if (method !== 'PUT') throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported on namespaces/finalize`);
  const body = await readObject(req) as { metadata?: { name?: string }; spec?: { finalizers?: unknown } };
  if (body.metadata?.name !== route.name) {
    throw new HttpError(400, 'BadRequest', `the name of the object (${body.metadata?.name ?? ''}) does not match the name on the URL (${route.name})`);
  }
  const finalizers = body.spec?.finalizers ?? [];
  if (!Array.isArray(finalizers)) throw new HttpError(400, 'BadRequest', 'spec.finalizers must be a list');
  const out = await ctx.store.finalizeNamespace!(route.name!, finalizers as string[], { dryRun: dryRunOf(url.searchParams.getAll('dryRun'), 'UpdateOptions'), user: requestUser(req) });
  sendJSON(res, 200, out);
}

/** A resource request, with a known error answered as its Status and any other logged and answered as an InternalError. */
async function serveResourceRequest(ctx: ApiContext, route: ResourceRoute, url: URL, req: http.IncomingMessage, res: http.ServerResponse, path: string,
  serve: typeof serveResource = serveResource) {
  const method = req.method ?? 'GET';
  try {
    // warnings (fieldValidation=Warn, admission webhooks) reach this response's headers, a refusal's too
    await withWarningRecorder(res, () => serve(ctx, route, method, url, req, res));
  } catch (e) {
    const status = errorStatus(e, route);
    if (!status) {
      ctx.log?.error({ err: { message: (e as Error)?.message, stack: (e as Error)?.stack }, method, path }, 'internal error');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    const body = status ?? statusBody(500, 'InternalError', 'an internal error occurred');
    sendJSON(res, body.code, body);
  }
}

/** /api/<v>/... and /apis/<g>/<v>/...: discovery, reviews, aggregated APIs and resources. */
async function serveApiPath(ctx: ApiContext, segs: string[], url: URL, req: http.IncomingMessage, res: http.ServerResponse, path: string) {
  const readOnly = isRead(req);
  let group: string, version: string, rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) [group, version, rest] = ['', segs[1], segs.slice(2)];
  else if (segs[0] === 'apis' && segs.length >= 3) [group, version, rest] = [segs[1], segs[2], segs.slice(3)];
  else if (segs[0] === 'apis' && segs.length === 2 && readOnly) {
    // an APIService's group too, as kube-aggregator serves it
    const g = apiGroup(segs[1], await aggregatedGroupVersions(ctx.store));
    return g ? sendJSON(res, 200, g) : notFoundPath(res, path);
  } else return notFoundPath(res, path);

  // a group/version served by an APIService's backend rather than by this server (API aggregation)
  const reviews = reviewAPI(group, version);
  if (segs[0] === 'apis' && typesIn(group, version).length === 0 && !reviews) {
    return proxyAggregated(ctx, { group, version }, url, req, res);
  }
  if (rest.length === 0) {
    const list = apiResourceList(group, version);
    return list && readOnly ? sendJSON(res, 200, list) : notFoundPath(res, path);
  }
  if (reviews) {
    let user;
    try {
      user = requestUser(req);
    } catch (e) {
      const status = errorStatus(e);
      if (!status) throw e;
      return sendJSON(res, status.code, status);
    }
    return serveReview(reviews, rest, user, req, res, path);
  }
  const route = resourceRoute(group, version, rest);
  if (route?.subresource === 'finalize' && isNamespaceType(route.type) && route.name && ctx.store.finalizeNamespace) {
    return serveResourceRequest(ctx, route, url, req, res, path, finalizeNamespace);
  }
  if (!route || (route.subresource && (route.subresource !== 'status' || !route.type.statusSubresource))) return notFoundPath(res, path);
  return serveResourceRequest(ctx, route, url, req, res, path);
}

/**
 * A "." or ".." segment, plain or percent-encoded, in the path as sent. new URL() would resolve it
 * (DELETE /api/v1/namespaces/../secrets became a delete of every Secret); kube refuses such names.
 */
function dotSegment(rawUrl: string): string | undefined {
  for (const seg of rawUrl.split('?')[0].split('/')) {
    let decoded = seg;
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      // malformed escapes are answered below
    }
    if (decoded === '.' || decoded === '..') return decoded;
  }
  return undefined;
}

export async function handleRequest(ctx: ApiContext, req: http.IncomingMessage, res: http.ServerResponse) {
  const dots = dotSegment(req.url ?? '/');
  if (dots) return sendJSON(res, 400, statusBody(400, 'BadRequest', `the request path ${JSON.stringify(req.url)} may not contain a "${dots}" segment`));
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    // "/\host..." reads as a URL with an invalid host: a client's mistake, not a server error
    return sendJSON(res, 400, statusBody(400, 'BadRequest', `the request path ${JSON.stringify(req.url)} is malformed`));
  }
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (serveHealth(ctx.store, path, url.searchParams, res)) return;
  if (!ctx.authorized(req)) return sendJSON(res, 401, statusBody(401, 'Unauthorized', 'Unauthorized'));
  let segs: string[];
  try {
    segs = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return sendJSON(res, 400, statusBody(400, 'BadRequest', `the request path ${JSON.stringify(url.pathname)} has malformed percent-encoding`));
  }
  const readOnly = isRead(req);
  if (path === '/version' && readOnly) return sendJSON(res, 200, serverVersion);
  if (path === '/api' && readOnly) return sendJSON(res, 200, apiVersions(ctx.serverAddress));
  if (path === '/apis' && readOnly) return sendJSON(res, 200, apiGroupList(await aggregatedGroupVersions(ctx.store)));
  if (segs[0] === 'openapi') return serveOpenAPI(segs, req, res);
  return serveApiPath(ctx, segs, url, req, res, path);
}
