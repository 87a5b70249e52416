// OpenAPI v3 documents as kube-apiserver serves them at /openapi/v3 and
// /openapi/v3/{api/v1, apis/<group>/<version>}. kubectl (v1.27+) reads the PATCH operation of each
// kind: when it lists the `fieldValidation` parameter, kubectl leaves validation to the server
// (sending fieldValidation=Strict) instead of downloading the protobuf OpenAPI v2 document.

import { createHash } from 'node:crypto';
import * as R from './resources.ts';
import { crdSchema, crdTypes, type JSONSchemaObject } from './crdgen.ts';

const metaRef = (name: string) => `#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.${name}`;

/** `cert-manager.io` → `io.cert-manager`, the prefix Kubernetes gives component schemas of a group. */
export function componentPrefix(t: R.ResourceType): string {
  if (t.group === '') return 'io.k8s.api.core';
  if (t.group.endsWith('.k8s.io')) return `io.k8s.api.${t.group.slice(0, -'.k8s.io'.length)}`;
  return t.group.split('.').reverse().join('.');
}

export function componentName(t: R.ResourceType, kind = t.kind): string {
  return `${componentPrefix(t)}.${t.version}.${kind}`;
}

const gvk = (t: R.ResourceType, kind = t.kind) => ({ group: t.group, kind, version: t.version });

const typeMeta = {
  apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
  kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
};

const objectMetaSchema: JSONSchemaObject = {
  type: 'object',
  description: 'ObjectMeta is metadata that all persisted resources must have.',
  properties: {
    name: { type: 'string' }, generateName: { type: 'string' }, namespace: { type: 'string' }, selfLink: { type: 'string' },
    uid: { type: 'string' }, resourceVersion: { type: 'string' }, generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' }, deletionTimestamp: { type: 'string', format: 'date-time' },
    deletionGracePeriodSeconds: { type: 'integer', format: 'int64' },
    labels: { type: 'object', additionalProperties: { type: 'string', default: '' } },
    annotations: { type: 'object', additionalProperties: { type: 'string', default: '' } },
    ownerReferences: {
      type: 'array',
      items: {
        type: 'object',
        required: ['apiVersion', 'kind', 'name', 'uid'],
        properties: {
          apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' }, uid: { type: 'string' },
          controller: { type: 'boolean' }, blockOwnerDeletion: { type: 'boolean' },
        },
      },
      'x-kubernetes-list-map-keys': ['uid'], 'x-kubernetes-list-type': 'map',
    },
    finalizers: { type: 'array', items: { type: 'string', default: '' }, 'x-kubernetes-list-type': 'set' },
    managedFields: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
  },
};

const metaSchemas: Record<string, JSONSchemaObject> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': objectMetaSchema,
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta': {
    type: 'object',
    properties: { continue: { type: 'string' }, remainingItemCount: { type: 'integer', format: 'int64' }, resourceVersion: { type: 'string' }, selfLink: { type: 'string' } },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status': {
    type: 'object',
    properties: {
      ...typeMeta, code: { type: 'integer', format: 'int32' }, message: { type: 'string' }, reason: { type: 'string' }, status: { type: 'string' },
      details: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, metadata: { allOf: [{ $ref: metaRef('ListMeta') }], default: {} },
    },
    'x-kubernetes-group-version-kind': [{ group: '', kind: 'Status', version: 'v1' }],
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': { type: 'object', description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions': {
    type: 'object',
    properties: { ...typeMeta, dryRun: { type: 'array', items: { type: 'string' } }, gracePeriodSeconds: { type: 'integer', format: 'int64' }, propagationPolicy: { type: 'string' } },
  },
};

const openObject = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** Loose schemas for the core kinds the server stores: enough for kubectl, not a full core/v1. */
function coreSchema(t: R.ResourceType): JSONSchemaObject {
  const extra: Record<string, Record<string, unknown>> = {
    Secret: {
      data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
      stringData: { type: 'object', additionalProperties: { type: 'string' } },
      type: { type: 'string' },
      immutable: { type: 'boolean' },
    },
    Event: {
      involvedObject: openObject, reason: { type: 'string' }, message: { type: 'string' }, type: { type: 'string' },
      source: openObject, count: { type: 'integer', format: 'int32' }, firstTimestamp: { type: 'string', format: 'date-time' },
      lastTimestamp: { type: 'string', format: 'date-time' }, eventTime: { type: 'string', format: 'date-time' }, series: openObject,
      action: { type: 'string' }, related: openObject, reportingComponent: { type: 'string' }, reportingInstance: { type: 'string' },
    },
    Namespace: { spec: openObject, status: openObject },
    Pod: { spec: openObject, status: openObject },
    Service: { spec: openObject, status: openObject },
    Ingress: { spec: openObject, status: openObject },
    Lease: {
      spec: {
        type: 'object',
        properties: {
          holderIdentity: { type: 'string' }, leaseDurationSeconds: { type: 'integer', format: 'int32' },
          acquireTime: { type: 'string', format: 'date-time' }, renewTime: { type: 'string', format: 'date-time' },
          leaseTransitions: { type: 'integer', format: 'int32' }, strategy: { type: 'string' }, preferredHolder: { type: 'string' },
        },
      },
    },
  };
  return { type: 'object', properties: { ...typeMeta, metadata: { allOf: [{ $ref: metaRef('ObjectMeta') }], default: {} }, ...extra[t.kind] } };
}

function kindSchema(t: R.ResourceType): JSONSchemaObject {
  const base = crdTypes.includes(t) ? crdSchema(t.kind) : coreSchema(t);
  const props = { ...(base.properties as Record<string, unknown>), metadata: { allOf: [{ $ref: metaRef('ObjectMeta') }], default: {} } };
  return { ...base, properties: props, 'x-kubernetes-group-version-kind': [gvk(t)] };
}

function listSchema(t: R.ResourceType): JSONSchemaObject {
  return {
    type: 'object',
    description: `${t.listKind} is a list of ${t.kind}`,
    required: ['items'],
    properties: {
      ...typeMeta,
      items: { type: 'array', items: { allOf: [{ $ref: `#/components/schemas/${componentName(t)}` }], default: {} } },
      metadata: { allOf: [{ $ref: metaRef('ListMeta') }], default: {} },
    },
    'x-kubernetes-group-version-kind': [gvk(t, t.listKind)],
  };
}

// ---------------------------------------------------------------------------------------------
// paths

const queryParam = (name: string, description: string, type = 'string') => ({ name, in: 'query', description, schema: { type, uniqueItems: true } });
const writeParams = [
  queryParam('dryRun', 'When present, indicates that modifications should not be persisted.'),
  queryParam('fieldManager', 'A name associated with the actor or entity that is making these changes.'),
  queryParam('fieldValidation', 'Ignore, Warn or Strict: how the server treats unknown or duplicate fields in the request body.'),
];
const patchParams = [...writeParams, queryParam('force', 'Force is going to "force" Apply requests.', 'boolean')];
const listParams = ['labelSelector', 'fieldSelector', 'resourceVersion', 'continue'].map((n) => queryParam(n, `${n} for list and watch`))
  .concat([queryParam('limit', 'limit for list', 'integer'), queryParam('watch', 'watch for changes', 'boolean')]);

const jsonBody = (ref: string) => ({ content: { 'application/json': { schema: { $ref: ref } } }, required: true });
const okResponse = (ref: string, codes = ['200']) => ({
  responses: Object.fromEntries(codes.map((c) => [c, { description: c === '201' ? 'Created' : 'OK', content: { 'application/json': { schema: { $ref: ref } } } }])),
});
const patchBody = (t: R.ResourceType) => ({
  content: Object.fromEntries(R.patchMediaTypes(t).map((m) => [m, { schema: { $ref: metaRef('Patch') } }])),
  required: true,
});

function pathsFor(t: R.ResourceType): Record<string, unknown> {
  const ref = `#/components/schemas/${componentName(t)}`;
  const listRef = `#/components/schemas/${componentName(t, t.listKind)}`;
  const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  const scoped = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
  const ext = (action: string) => ({ 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk(t) });
  const nameParam = { name: 'name', in: 'path', required: true, description: `name of the ${t.kind}`, schema: { type: 'string', uniqueItems: true } };
  const nsParam = { name: 'namespace', in: 'path', required: true, description: 'object name and auth scope', schema: { type: 'string', uniqueItems: true } };
  const scopeParams = t.namespaced ? [nsParam] : [];
  const item = (suffix: string) => ({
    get: { ...ext('get'), responses: okResponse(ref).responses },
    put: { ...ext('put'), parameters: writeParams, requestBody: jsonBody(ref), responses: okResponse(ref, ['200', '201']).responses },
    patch: { ...ext('patch'), parameters: patchParams, requestBody: patchBody(t), responses: okResponse(ref, ['200', '201']).responses },
    ...(suffix ? {} : { delete: { ...ext('delete'), responses: okResponse(metaRef('Status')).responses } }),
    parameters: [nameParam, ...scopeParams],
  });
  const paths: Record<string, unknown> = {
    [scoped]: {
      get: { ...ext('list'), parameters: listParams, responses: okResponse(listRef).responses },
      post: { ...ext('post'), parameters: writeParams, requestBody: jsonBody(ref), responses: okResponse(ref, ['200', '201']).responses },
      parameters: scopeParams,
    },
    [`${scoped}/{name}`]: item(''),
  };
  if (t.statusSubresource && crdTypes.includes(t)) paths[`${scoped}/{name}/status`] = item('status');
  if (t.namespaced) paths[`${base}/${t.plural}`] = { get: { ...ext('list'), parameters: listParams, responses: okResponse(listRef).responses } };
  return paths;
}

// ---------------------------------------------------------------------------------------------
// documents

function groupVersionKey(t: R.ResourceType): string {
  return t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`;
}

const documentCache = new Map<string, JSONSchemaObject>();

/** The OpenAPI v3 document for one group/version (group '' is the core `api/v1`), or undefined if not served. */
export function openAPIV3Document(group: string, version: string): JSONSchemaObject | undefined {
  const key = group ? `apis/${group}/${version}` : `api/${version}`;
  const cached = documentCache.get(key);
  if (cached) return cached;
  const types = R.resourceTypes.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const schemas: Record<string, JSONSchemaObject> = { ...metaSchemas };
  let paths: Record<string, unknown> = {};
  for (const t of types) {
    schemas[componentName(t)] = kindSchema(t);
    schemas[componentName(t, t.listKind)] = listSchema(t);
    paths = { ...paths, ...pathsFor(t) };
  }
  const doc = {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas },
  };
  documentCache.set(key, doc);
  return doc;
}

/** The `/openapi/v3` index; each URL carries a content hash, as kube-apiserver's do, so clients can cache. */
export function openAPIV3Index(): { paths: Record<string, { serverRelativeURL: string }> } {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const key of [...new Set(R.resourceTypes.map(groupVersionKey))].sort()) {
    const [group, version] = key.startsWith('api/') ? ['', key.slice(4)] : key.slice(5).split('/');
    const hash = createHash('sha512').update(JSON.stringify(openAPIV3Document(group, version))).digest('hex').toUpperCase().slice(0, 128);
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { paths };
}
