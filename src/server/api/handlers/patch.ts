// PATCH: JSON merge (and, for the built-in kinds, strategic merge, which they make the same),
// JSON patch, and server-side apply, with fieldValidation applied to each as kube-apiserver
// applies it.
import type http from 'node:http';
import { jsonPointer, pruneUnknownFields, pruneUnknownPatchFields, strictProblems, duplicateFields, type FieldValidation } from '../../../api/unknown-fields.ts';
import { applyJSONPatch } from '../../../store/patch.ts';
import { StoreError, type PatchType, type Store } from '../../../store/store.ts';
import { apiVersionOf, isCustomResource, patchMediaTypes, type ResourceType } from '../../../api/resources.ts';
import { checkNamespaceExists, managerOrUserAgent, type ApiContext, type ResourceCall } from '../context.ts';
import { enforceFieldValidation, fieldValidationOf, jsonPatchProblems } from '../field-validation.ts';
import { truthy } from '../query.ts';
import { parseApplyBody, parseJSON, readBody } from '../request-body.ts';
import type { ResourceRoute } from '../resource-route.ts';
import { HttpError, sendObject } from '../responses.ts';
import { plainCopy } from '../../../api/plain-copy.ts';

function patchTypeOf(type: ResourceType, contentType: string | undefined): PatchType | undefined {
  const ct = (contentType ?? '').split(';')[0].trim().toLowerCase();
  switch (ct) {
    case 'application/strategic-merge-patch+json':
      // the built-in kinds served here (Secrets, Namespaces, Events ...) have no list that merges by key
      return isCustomResource(type) ? undefined : 'merge';
    case 'application/merge-patch+json':
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

/**
 * A JSON patch is checked on its result, as kube-apiserver checks it: the patch is tried on
 * the stored object, and a remove operation is added for each unknown field it would leave.
 * (A patch that cannot apply is left for the store to refuse with its own error.)
 */
async function prunedJSONPatch(store: Store, route: ResourceRoute, patch: unknown, mode: FieldValidation, text: string, res: http.ServerResponse): Promise<unknown> {
  const problems = mode === 'Ignore' ? [] : jsonPatchProblems(patch, text);
  const current = Array.isArray(patch) ? await store.get(route.type, route.namespace, route.name!) : undefined;
  let unknown: ReturnType<typeof pruneUnknownFields> = [];
  if (current) {
    try {
      unknown = pruneUnknownFields(route.type, applyJSONPatch(plainCopy(current), patch as any));
    } catch {
      unknown = [];
    }
  }
  enforceFieldValidation(mode, [...problems, ...strictProblems([], unknown)], res);
  return unknown.length ? [...(patch as unknown[]), ...unknown.map((u) => ({ op: 'remove', path: jsonPointer(u.pointer) }))] : patch;
}

/** The patch the body carries, decoded for its type, with its unknown fields pruned and refused or warned of. */
async function validatedPatch(ctx: ApiContext, call: ResourceCall, patchType: PatchType): Promise<unknown> {
  const { route, q, req, res } = call;
  const mode = fieldValidationOf(q);
  const text = await readBody(req);
  if (patchType === 'apply') {
    const patch = parseApplyBody(text);
    const expected = apiVersionOf(route.type);
    // kube-apiserver's field manager refuses what only it may write (kubernetes#81453)
    if ((patch as { metadata?: { managedFields?: unknown } }).metadata?.managedFields != null) throw new HttpError(400, 'BadRequest', 'metadata.managedFields must be nil');
    // an apply patch names its type itself (nothing defaults it): a missing apiVersion or kind is refused too
    const { apiVersion: given, kind } = patch as { apiVersion?: unknown; kind?: unknown };
    if (given !== expected) {
      throw new HttpError(400, 'BadRequest', `Incorrect version specified in apply patch. Specified patch version: ${typeof given === 'string' ? given : ''}, expected: ${expected}`);
    }
    if (kind !== route.type.kind) {
      // kube's versionCheckManager, which prints the GroupVersionKind as "group/version, Kind=kind"
      const gv = route.type.group ? expected : `/${expected}`;
      throw new HttpError(400, 'BadRequest', `invalid object type: ${gv}, Kind=${typeof kind === 'string' ? kind : ''}`);
    }
    // YAML refuses duplicate keys while parsing; what is left are unknown fields
    enforceFieldValidation(mode, strictProblems([], pruneUnknownFields(route.type, patch)), res);
    return patch;
  }
  const patch: unknown = parseJSON(text, 'patch');
  if (patchType !== 'merge') return prunedJSONPatch(ctx.store, route, patch, mode, text, res);
  const duplicates = mode !== 'Ignore' ? duplicateFields(text) : [];
  const unknown = patch && typeof patch === 'object' ? pruneUnknownPatchFields(route.type, patch) : [];
  enforceFieldValidation(mode, strictProblems(duplicates, unknown), res);
  return patch;
}

export async function patchObject(ctx: ApiContext, call: ResourceCall) {
  const { route: { type, namespace, name, subresource }, q, req, res, dryRun, fieldManager } = call;
  const patchType = patchTypeOf(type, req.headers['content-type']);
  if (!patchType) {
    throw new HttpError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${patchMediaTypes(type).join(', ')}`);
  }
  if (patchType === 'apply' && !fieldManager) {
    throw new HttpError(400, 'BadRequest', 'PATCH requests with application/apply-patch+yaml require fieldManager');
  }
  if (patchType !== 'apply' && q.has('force')) {
    throw new StoreError('Invalid', 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
      [{ field: 'force', message: 'Forbidden: may not be specified for non-apply patch', reason: 'FieldValueForbidden' }]);
  }
  const patch = await validatedPatch(ctx, call, patchType);
  // an apply that creates answers 201, as kube-apiserver's does
  const creates = patchType === 'apply' && !subresource && !(await ctx.store.get(type, namespace, name!));
  if (creates) await checkNamespaceExists(ctx.store, type, namespace, name!);
  const out = await ctx.store.patch(type, namespace, name!, patchType, patch, {
    dryRun, fieldManager: patchType === 'apply' ? fieldManager : managerOrUserAgent(call), user: call.user, force: truthy(q.get('force')), ...(subresource === 'status' ? { subresource: 'status' as const } : {}),
  });
  return sendObject(req, res, creates ? 201 : 200, out);
}
