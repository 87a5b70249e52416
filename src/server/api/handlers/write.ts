// POST (create) and PUT (update, or the status subresource's update) of an object body.
import type { KubeObject } from '../../../api/meta.ts';
import { apiVersionOf, type ResourceType } from '../../../api/resources.ts';
import { duplicateFields, pruneUnknownFields, strictProblems } from '../../../api/unknown-fields.ts';
import { checkNamespaceExists, managerOrUserAgent, type ApiContext, type ResourceCall } from '../context.ts';
import { decodePrefix, enforceFieldValidation, fieldValidationOf } from '../field-validation.ts';
import { readObjectAndText } from '../request-body.ts';
import { HttpError, sendObject } from '../responses.ts';

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

/** The body's object, its unknown fields pruned and refused or warned of as fieldValidation says. */
async function validatedObject(call: ResourceCall): Promise<KubeObject> {
  const { route: { type, namespace }, q, req, res } = call;
  const mode = fieldValidationOf(q);
  const body = await readObjectAndText(req);
  const obj = objectFromBody(type, body.value, namespace);
  call.route.bodyName = obj.metadata.name;
  const duplicates = mode !== 'Ignore' && body.text !== undefined ? duplicateFields(body.text) : [];
  enforceFieldValidation(mode, strictProblems(duplicates, pruneUnknownFields(type, obj)), res, decodePrefix(type));
  return obj;
}

export async function createObject(ctx: ApiContext, call: ResourceCall) {
  const { type, namespace } = call.route;
  const obj = await validatedObject(call);
  // kube-apiserver's storage refuses it (with a 500; a 400 says whose mistake it is): an object
  // exported with `kubectl get -o yaml` must be stripped before it is created again
  if (obj.metadata?.resourceVersion) throw new HttpError(400, 'BadRequest', 'resourceVersion should not be set on objects to be created');
  await checkNamespaceExists(ctx.store, type, namespace, obj.metadata?.name ?? '');
  const created = await ctx.store.create(type, obj, { dryRun: call.dryRun, fieldManager: managerOrUserAgent(call), user: call.user });
  return sendObject(call.req, call.res, 201, created);
}

export async function updateObject(ctx: ApiContext, call: ResourceCall) {
  const { type, name, subresource } = call.route;
  const obj = await validatedObject(call);
  if (obj.metadata.name !== name) {
    throw new HttpError(400, 'BadRequest', `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
  }
  const writeOpts = { dryRun: call.dryRun, fieldManager: managerOrUserAgent(call), user: call.user };
  const out = subresource === 'status' ? await ctx.store.updateStatus(type, obj, writeOpts) : await ctx.store.update(type, obj, writeOpts);
  return sendObject(call.req, call.res, 200, out);
}
