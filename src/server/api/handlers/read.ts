// GET of one object and of a collection (list), as objects or as a Table.
import type { KubeObject } from '../../../api/meta.ts';
import { apiVersionOf } from '../../../api/resources.ts';
import { StoreError, tooLargeResourceVersion } from '../../../store/store.ts';
import { tableFor } from '../../table.ts';
import type { ApiContext, ResourceCall } from '../context.ts';
import { intParam, requestedRevision, watchListOptions } from '../query.ts';
import { resourceName } from '../resource-route.ts';
import { sendJSON, sendObject } from '../responses.ts';

function asTable(ctx: ApiContext, call: ResourceCall, objs: KubeObject[], meta: { resourceVersion?: string; continue?: string }) {
  const includeObject = (call.q.get('includeObject') as 'None' | 'Metadata' | 'Object' | null) ?? undefined;
  return tableFor(call.route.type, objs, { now: ctx.now(), includeObject, ...meta });
}

export async function getObject(ctx: ApiContext, call: ResourceCall) {
  const { type, namespace, name } = call.route;
  const obj = await ctx.store.get(type, namespace, name!);
  if (!obj) throw new StoreError('NotFound', `${resourceName(type)} "${name}" not found`);
  if (call.table) return sendJSON(call.res, 200, asTable(ctx, call, [obj], { resourceVersion: obj.metadata.resourceVersion }));
  return sendObject(call.req, call.res, 200, obj);
}

export async function listObjects(ctx: ApiContext, call: ResourceCall) {
  const { route: { type, namespace }, q } = call;
  watchListOptions(q, false);
  const wantedRV = requestedRevision(q);
  const exact = q.get('resourceVersionMatch') === 'Exact' ? wantedRV : undefined;
  const list = await ctx.store.list(type, {
    namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined,
    limit: intParam(q, 'limit'), continue: q.get('continue') ?? undefined, ...(exact !== undefined ? { atRevision: exact } : {}),
  });
  if (wantedRV !== undefined && wantedRV > Number(list.resourceVersion)) throw tooLargeResourceVersion(wantedRV, list.resourceVersion);
  const meta = { resourceVersion: list.resourceVersion, ...(list.continue ? { continue: list.continue } : {}) };
  if (call.table) return sendJSON(call.res, 200, asTable(ctx, call, list.items, meta));
  return sendObject(call.req, call.res, 200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: meta, items: list.items });
}
