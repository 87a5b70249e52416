// GET of one object and of a collection (list), as objects or as a Table.
import type { KubeObject } from '../../../api/meta.ts';
import { apiVersionOf } from '../../../api/resources.ts';
import { StoreError, tooLargeResourceVersion, type ListResult } from '../../../store/store.ts';
import { partialObjectMetadata, tableFor } from '../../table.ts';
import type { ApiContext, ResourceCall } from '../context.ts';
import { intParam, requestedRevision, watchListOptions } from '../query.ts';
import { resourceName } from '../resource-route.ts';
import { prefersProtobuf, sendJSON, sendJSONItems, sendObject } from '../responses.ts';
import { hasProtobufSchema } from '../../protobuf/codec.ts';

function asTable(ctx: ApiContext, call: ResourceCall, objs: KubeObject[], meta: { resourceVersion?: string; continue?: string }) {
  const includeObject = (call.q.get('includeObject') as 'None' | 'Metadata' | 'Object' | null) ?? undefined;
  return tableFor(call.route.type, objs, { now: ctx.now(), includeObject, ...meta });
}

export async function getObject(ctx: ApiContext, call: ResourceCall) {
  const { type, namespace, name } = call.route;
  const obj = await ctx.store.get(type, namespace, name!);
  if (!obj) throw new StoreError('NotFound', `${resourceName(type)} "${name}" not found`);
  if (call.table) return sendJSON(call.res, 200, asTable(ctx, call, [obj], { resourceVersion: obj.metadata.resourceVersion }));
  if (call.metadataOnly) return sendJSON(call.res, 200, partialObjectMetadata(obj));
  return sendObject(call.req, call.res, 200, obj);
}

/**
 * What a list response reads from the store at a time: one object first (objects' size is not
 * known yet), then as many as make about listPageBytes of JSON, at most maxPageObjects. The
 * pages come through the store's own limit and continue, so they are one snapshot; a client that
 * stops reading holds the page being written, not the list.
 */
const firstPageObjects = 1;
const listPageBytes = 2 * 1024 * 1024;
const maxPageObjects = 500;

type ListPage = ListResult<KubeObject>;

/**
 * The store's pages from `first` on, `limit` objects in all, each as JSON texts of what `render`
 * makes of its objects (the objects themselves when none); `last` is told of each page read, so
 * the caller can learn the final continue token. Pages are sized by the objects' JSON, whatever
 * is written of them.
 */
async function* jsonPages(ctx: ApiContext, call: ResourceCall, first: ListPage, limit: number, render?: (objs: KubeObject[]) => unknown[], last?: (page: ListPage) => void): AsyncGenerator<string[]> {
  let page: ListPage | undefined = first;
  let left = limit;
  while (page) {
    left -= page.items.length;
    last?.(page);
    const objectTexts = page.items.map((o) => JSON.stringify(o));
    const perObject = objectTexts.reduce((n, t) => n + t.length, 0) / (objectTexts.length || 1);
    const texts = render ? render(page.items).map((x) => JSON.stringify(x)) : objectTexts;
    const next: string | undefined = page.continue;
    // the objects are not held while their text waits for the client
    page = undefined;
    yield texts;
    if (!next || left <= 0) return;
    const size = Math.max(1, Math.min(maxPageObjects, left, Math.floor(listPageBytes / (perObject || 1))));
    page = await ctx.store.list(call.route.type, { ...selection(call), limit: size, continue: next });
  }
}

function selection(call: ResourceCall) {
  const { route: { namespace }, q } = call;
  return { namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined };
}

export async function listObjects(ctx: ApiContext, call: ResourceCall) {
  const { route: { type }, q } = call;
  watchListOptions(q, false);
  const wantedRV = requestedRevision(q);
  const exact = q.get('resourceVersionMatch') === 'Exact' ? wantedRV : undefined;
  const limit = intParam(q, 'limit') || Infinity;
  const first = await ctx.store.list(type, {
    ...selection(call), limit: Math.min(limit, firstPageObjects), continue: q.get('continue') ?? undefined, ...(exact !== undefined ? { atRevision: exact } : {}),
  });
  if (wantedRV !== undefined && wantedRV > Number(first.resourceVersion)) throw tooLargeResourceVersion(wantedRV, first.resourceVersion);
  // the continue token is in the metadata, before the items: with a limit the pages are read
  // once to find it (the objects dropped as they come), then again as they are written
  let continueToken = first.continue;
  if (limit !== Infinity && first.continue && first.items.length < limit) {
    for await (const texts of jsonPages(ctx, call, first, limit, () => [], (page) => (continueToken = page.continue))) void texts;
  }
  const meta = { resourceVersion: first.resourceVersion, ...(limit !== Infinity && continueToken ? { continue: continueToken } : {}) };
  if (call.table) {
    return sendJSONItems(call.res, 200, { ...asTable(ctx, call, [], meta) }, 'rows', jsonPages(ctx, call, first, limit, (objs) => asTable(ctx, call, objs, meta).rows));
  }
  if (call.metadataOnly) {
    const partialHead = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: meta };
    return sendJSONItems(call.res, 200, partialHead, 'items', jsonPages(ctx, call, first, limit, (objs) => objs.map(partialObjectMetadata)));
  }
  const head = { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: meta };
  if (prefersProtobuf(call.req) && hasProtobufSchema(head.apiVersion, head.kind)) {
    // protobuf's envelope gives its length first: the list is read whole for it, the rest in one
    // read (paging it would only serialize each object to size pages that are all kept)
    const rest = first.continue && first.items.length < limit
      ? (await ctx.store.list(type, { ...selection(call), continue: first.continue, ...(limit === Infinity ? {} : { limit: limit - first.items.length }) })).items
      : [];
    return sendObject(call.req, call.res, 200, { ...head, items: [...first.items, ...rest] });
  }
  return sendJSONItems(call.res, 200, head, 'items', jsonPages(ctx, call, first, limit));
}
