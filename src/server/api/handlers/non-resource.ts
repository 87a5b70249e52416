// The paths that are not a stored resource (health probes aside: health.ts): OpenAPI documents, access reviews
// (answered, never stored) and aggregated APIs (passed on to their backend).
import type http from 'node:http';
import type { UserInfo } from '../../../api/meta.ts';
import type { ReviewAPI } from '../../self-reviews.ts';
import { AggregationError, aggregatedBackend, proxyRequest } from '../../aggregation.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../../users.ts';
import { maxBodyBytes, readBodyBytes, readObject } from '../request-body.ts';
import { HttpError, errorStatus, notFoundPath, sendJSON, sendObject, statusBody } from '../responses.ts';

// The OpenAPI documents load on the first request for one, not with the server: generating them
// brings the schema builder (typebox) and the YAML printer, ~320 files kubectl may never ask for (issue 17).
export async function serveOpenAPI(segs: string[], req: http.IncomingMessage, res: http.ServerResponse) {
  if (segs[1] === 'v2' && segs.length === 2) {
    const { openAPIV2Document, openAPIV2Protobuf, openAPIV2ProtobufContentType, openAPIV2ProtobufMediaTypes } = await import('../../openapi/v2.ts');
    // protobuf only when asked for: older kubectl asks for nothing else, JSON readers never ask for it
    const accepted = (req.headers.accept ?? '').split(',').map((r) => r.split(';')[0].trim().toLowerCase());
    if (!accepted.some((a) => openAPIV2ProtobufMediaTypes.includes(a))) return sendJSON(res, 200, openAPIV2Document());
    const bytes = openAPIV2Protobuf();
    res.writeHead(200, { 'Content-Type': openAPIV2ProtobufContentType, 'Content-Length': bytes.length, 'Cache-Control': 'no-cache, private' });
    res.end(bytes);
    return;
  }
  if (segs[1] !== 'v3') return notFoundPath(res, '/' + segs.join('/'));
  const { openAPIV3Index, openAPIV3Document } = await import('../../../api/openapi.ts');
  if (segs.length === 2) return sendJSON(res, 200, openAPIV3Index());
  let doc: unknown;
  if (segs[2] === 'api' && segs.length === 4) doc = openAPIV3Document('', segs[3]);
  else if (segs[2] === 'apis' && segs.length === 5) doc = openAPIV3Document(segs[3], segs[4]);
  return doc ? sendJSON(res, 200, doc) : notFoundPath(res, '/' + segs.join('/'));
}

/** A self-review (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview): answered, never stored */
export async function serveReview(api: ReviewAPI, rest: string[], user: UserInfo, req: http.IncomingMessage, res: http.ServerResponse, path: string) {
  const resource = rest.length === 1 ? api.resources.find((r) => r.name === rest[0]) : undefined;
  if (!resource) return notFoundPath(res, path);
  const method = req.method ?? 'GET';
  try {
    if (method !== 'POST') throw new HttpError(405, 'MethodNotAllowed', `${method} is not supported on ${resource.name}.${api.group}: only create`);
    return sendObject(req, res, 201, resource.answer(await readObject(req), user));
  } catch (e) {
    const status = errorStatus(e);
    if (!status) throw e;
    sendJSON(res, status.code, status);
  }
}

/** A request for an aggregated API, passed to its backend as kube-aggregator does (src/server/aggregation.ts). */
export async function proxyAggregated(ctx: ApiContext, api: { group: string; version: string }, url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
  const method = req.method ?? 'GET';
  const path = url.pathname.replace(/\/+$/, '') || '/';
  try {
    const backend = await aggregatedBackend(ctx.store, api.group, api.version);
    if (!backend) return notFoundPath(res, path);
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'accept']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h] as string;
    const body = method === 'GET' || method === 'HEAD' ? undefined : await readBodyBytes(req);
    const answer = await proxyRequest(backend, { method, path: url.pathname + url.search, headers, body, user: requestUser(req), maxBytes: maxBodyBytes });
    res.writeHead(answer.status, { 'Content-Type': answer.contentType ?? 'application/json', 'Content-Length': answer.body.length, 'Cache-Control': 'no-cache, private' });
    res.end(answer.body);
  } catch (e) {
    if (e instanceof AggregationError) return sendJSON(res, e.code, statusBody(e.code, e.reason, e.message));
    const status = errorStatus(e);
    if (status) return sendJSON(res, status.code, status);
    ctx.log?.error({ err: { message: (e as Error)?.message }, method, path }, 'aggregated API request failed');
    return sendJSON(res, 503, statusBody(503, 'ServiceUnavailable', `the server is currently unable to handle the request: ${(e as Error).message}`));
  }
}
