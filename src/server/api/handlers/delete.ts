// DELETE of one object and of a collection (deletecollection), with DeleteOptions decoded and
// validated as kube-apiserver does.
import type { KubeObject } from '../../../api/meta.ts';
import { apiVersionOf, isCustomResource, isNamespaceType, PodType, ServiceType, type ResourceType } from '../../../api/resources.ts';
import { StoreError, type DeleteOptions } from '../../../store/store.ts';
import type { ApiContext, ResourceCall } from '../context.ts';
import { dryRunOf, intParam, truthy } from '../query.ts';
import { parseJSON, readBody } from '../request-body.ts';
import { HttpError, sendJSON, sendObject } from '../responses.ts';

/** Go's name for a JSON value's type, for decode errors worded as kube-apiserver's. */
function goType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v;
}

function decodeFailure(v: unknown, field: string, goTypeName: string): HttpError {
  return new HttpError(400, 'BadRequest', `json: cannot unmarshal ${goType(v)} into Go ${field ? `struct field DeleteOptions.${field}` : 'value'} of type ${goTypeName}`);
}

/** The DeleteOptions body, each field of the type Go would decode it as. */
function decodedDeleteOptionsBody(text: string): Record<string, unknown> {
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
  for (const v of (b.dryRun ?? []) as unknown[]) if (typeof v !== 'string') throw decodeFailure(v, 'dryRun', 'string');
  return b;
}

/**
 * DeleteOptions from the body and the query, decoded and validated as kube-apiserver does
 * before anything is deleted: a malformed precondition must never read as "no precondition".
 */
function deleteOptionsFrom(text: string, q: URLSearchParams): DeleteOptions & { dryRun?: boolean } {
  const b = decodedDeleteOptionsBody(text);
  const pre = (b.preconditions ?? undefined) as Record<string, unknown> | undefined;
  intParam(q, 'gracePeriodSeconds', { signed: true });
  const orphan = q.get('orphanDependents');
  if (orphan !== null && !['true', 'false', '1', '0'].includes(orphan)) throw new HttpError(400, 'BadRequest', `invalid value for query parameter orphanDependents: ${JSON.stringify(orphan)}`);
  const dryRun = dryRunOf((b.dryRun ?? []) as unknown[], 'DeleteOptions');
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

/**
 * kube-apiserver's registries that set ReturnDeletedObject: custom resources, Namespaces, Pods and
 * Services answer a delete with the object; the rest served here (Secrets, Events, Leases,
 * Ingresses, webhook configurations, APIServices) with a Status, so a Secret's keys are not sent back.
 */
function returnsDeletedObject(type: ResourceType): boolean {
  return isCustomResource(type) || isNamespaceType(type) || (type.group === '' && (type.kind === PodType.kind || type.kind === ServiceType.kind));
}

export async function deleteObject(ctx: ApiContext, call: ResourceCall) {
  const { route: { type, namespace, name, subresource }, q, req, res, dryRun } = call;
  if (subresource) throw new HttpError(405, 'MethodNotAllowed', 'DELETE is not supported on a subresource');
  const deleteOpts = deleteOptionsFrom(await readBody(req), q);
  const out = await ctx.store.delete(type, namespace, name!, { ...deleteOpts, user: call.user, ...(dryRun ? { dryRun } : {}) } as DeleteOptions);
  // an object a finalizer still holds is only marked: kube answers with it, whatever the kind
  if (out && (returnsDeletedObject(type) || out.metadata?.finalizers?.length)) return sendObject(req, res, 200, out);
  return sendJSON(res, 200, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
    details: { name, ...(type.group ? { group: type.group } : {}), kind: type.plural, ...(out?.metadata?.uid ? { uid: out.metadata.uid } : {}) },
  });
}

export async function deleteCollection(ctx: ApiContext, call: ResourceCall) {
  const { route: { type, namespace }, q, req, res, dryRun } = call;
  const deleteOpts = deleteOptionsFrom(await readBody(req), q);
  const list = await ctx.store.list(type, { namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
  const items: KubeObject[] = [];
  for (const o of list.items) {
    const gone = await ctx.store.delete(type, o.metadata.namespace, o.metadata.name!, { ...deleteOpts, user: call.user, ...(dryRun ? { dryRun } : {}) } as DeleteOptions);
    items.push(gone ?? o);
  }
  return sendJSON(res, 200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: list.resourceVersion }, items });
}
