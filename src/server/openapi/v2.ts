// `/openapi/v2`: the Swagger 2.0 form of the same schemas and paths `/openapi/v3` serves, in JSON
// or in gnostic's protobuf. kubectl before 1.27 validates `apply` and answers `explain` only from
// it (in protobuf); later ones use it when v3 is missing, and for `explain --output plaintext-openapiv2`.
// The paths matter to kubectl before 1.22 (Debian's v1.20): before `diff` and any `--dry-run=server`
// it looks for the PATCH operation whose x-kubernetes-group-version-kind is the object's kind and
// refuses ("doesn't support dry-run") unless that operation lists a `dryRun` query parameter of
// its own (cli-runtime's DryRunVerifier; a `$ref`'d one does not count).
import { createRequire } from 'node:module';
import type protobuf from 'protobufjs';
import type * as YAMLModule from 'yaml';
import { resourceTypes } from '../../api/resources.ts';
import { openAPIV3Document } from '../../api/openapi.ts';
import { openAPIV2Proto } from './v2-schema.ts';
import { byCodeUnits } from '../../api/ordering.ts';

/** what kube-apiserver accepts for (and answers with) the protobuf document; client-go asks with "@" */
export const openAPIV2ProtobufMediaTypes = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
export const openAPIV2ProtobufContentType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

type JSONSchema = Record<string, unknown>;

const v3Prefix = '#/components/schemas/';

/**
 * A v3 schema as v2 writes it: references under #/definitions, and a property that is only a
 * reference (v3's `allOf: [{$ref}]`, there to carry a default) a plain `$ref`, which is how
 * kube-apiserver's v2 document writes it and what kubectl's v2 reader follows.
 */
function toV2(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toV2);
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as JSONSchema;
  const allOf = s.allOf as JSONSchema[] | undefined;
  if (Array.isArray(allOf) && allOf.length === 1 && typeof allOf[0].$ref === 'string') {
    const { allOf: _a, default: _d, ...rest } = s;
    return { ...(toV2(rest) as JSONSchema), $ref: (allOf[0].$ref as string).replace(v3Prefix, '#/definitions/') };
  }
  const out: JSONSchema = {};
  for (const [k, v] of Object.entries(s)) {
    // Swagger 2.0 has no anyOf; kube-apiserver drops it from CRD schemas (only int-or-string uses it there)
    if (k === 'anyOf' && s['x-kubernetes-int-or-string'] === true) continue;
    if (k === '$ref' && typeof v === 'string') out[k] = v.replace(v3Prefix, '#/definitions/');
    // a map of names (properties) holds schemas; every other object value is a schema or a literal
    else if (k === 'properties' && v && typeof v === 'object') out[k] = Object.fromEntries(Object.entries(v).map(([name, p]) => [name, toV2(p)]));
    else if (k.startsWith('x-') || k === 'default' || k === 'enum' || k === 'example') out[k] = v;
    else out[k] = toV2(v);
  }
  return out;
}

/** the operations a Swagger 2.0 path item may hold, in gnostic's PathItem field order */
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

interface V3Parameter { name: string; in: string; description?: string; required?: boolean; schema?: JSONSchema }
type V3Content = Record<string, { schema?: JSONSchema }>;
interface V3Operation {
  parameters?: V3Parameter[];
  requestBody?: { content: V3Content; required?: boolean };
  responses?: Record<string, { description: string; content?: V3Content }>;
  [extension: `x-${string}`]: unknown;
}

/** v3's `schema: {type}` of a query or path parameter is v2's `type` on the parameter itself */
const v2Parameter = ({ schema, ...p }: V3Parameter): JSONSchema => ({ ...p, ...schema });

/**
 * A v3 operation as v2 writes it: the request body a `body` parameter (first, as kube-apiserver
 * lists it) with the media types in `consumes`, each response's one schema, and `produces`.
 */
function v2Operation(op: V3Operation): JSONSchema {
  const { parameters = [], requestBody, responses = {}, ...extensions } = op;
  const out: JSONSchema = {};
  const params: JSONSchema[] = [];
  if (requestBody) {
    out.consumes = Object.keys(requestBody.content);
    const schema = Object.values(requestBody.content)[0]?.schema;
    params.push({ name: 'body', in: 'body', required: requestBody.required ?? false, ...(schema ? { schema: toV2(schema) } : {}) });
  }
  params.push(...parameters.map(v2Parameter));
  if (params.length) out.parameters = params;
  const produces = [...new Set(Object.values(responses).flatMap((r) => Object.keys(r.content ?? {})))];
  if (produces.length) out.produces = produces;
  out.responses = Object.fromEntries(Object.entries(responses).map(([code, r]) => {
    const schema = Object.values(r.content ?? {})[0]?.schema;
    return [code, { description: r.description, ...(schema ? { schema: toV2(schema) } : {}) }];
  }));
  return { ...out, ...extensions };
}

function v2PathItem(item: Record<string, unknown>): JSONSchema {
  const out: JSONSchema = {};
  for (const m of methods) if (item[m]) out[m] = v2Operation(item[m] as V3Operation);
  const parameters = item.parameters as V3Parameter[] | undefined;
  if (parameters?.length) out.parameters = parameters.map(v2Parameter);
  return out;
}

let jsonCache: JSONSchema | undefined;

/** The Swagger 2.0 document: every served group's paths and definitions, from the v3 documents (built once). */
export function openAPIV2Document(): JSONSchema {
  if (jsonCache) return jsonCache;
  const definitions: Record<string, unknown> = {};
  const paths: Record<string, unknown> = {};
  for (const key of new Set(resourceTypes.map((t) => `${t.group}/${t.version}`))) {
    const [group, version] = key.split('/');
    const doc = openAPIV3Document(group, version) as { paths?: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, unknown> } } | undefined;
    for (const [path, item] of Object.entries(doc?.paths ?? {})) paths[path] ??= v2PathItem(item);
    for (const [name, schema] of Object.entries(doc?.components?.schemas ?? {})) definitions[name] ??= toV2(schema);
  }
  const sorted = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => byCodeUnits(a, b)));
  jsonCache = { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: sorted(paths), definitions: sorted(definitions) };
  return jsonCache;
}

// protobufjs and YAML load (synchronously, both are CommonJS) on the first request for the
// protobuf document, not with the server: only old kubectl and `explain` ask for it
const requireModule = createRequire(import.meta.url);
let documentTypeCache: protobuf.Type | undefined;
function documentType(): protobuf.Type {
  return (documentTypeCache ??= (requireModule('protobufjs') as typeof protobuf).parse(openAPIV2Proto, { keepCase: true }).root.lookupType('openapi.v2.Document'));
}
let yaml: typeof YAMLModule | undefined;

/** gnostic writes every literal (default, enum, example, extension value) as YAML text */
const any = (v: unknown) => ({ yaml: (yaml ??= requireModule('yaml') as typeof YAMLModule).stringify(v) });

/** A JSON schema as gnostic's Schema message, in the shape protobufjs's fromObject takes. */
function schemaMessage(s: JSONSchema): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  const str = (k: string, field = k) => {
    if (typeof s[k] === 'string') m[field] = s[k];
  };
  const num = (k: string, field: string) => {
    if (typeof s[k] === 'number') m[field] = s[k];
  };
  str('$ref', '_ref');
  str('format');
  str('title');
  str('description');
  str('pattern');
  num('maximum', 'maximum');
  num('minimum', 'minimum');
  num('maxLength', 'max_length');
  num('minLength', 'min_length');
  num('maxItems', 'max_items');
  num('minItems', 'min_items');
  num('maxProperties', 'max_properties');
  num('minProperties', 'min_properties');
  if (s.default !== undefined) m.default = any(s.default);
  if (s.example !== undefined) m.example = any(s.example);
  if (Array.isArray(s.required)) m.required = s.required;
  if (Array.isArray(s.enum)) m.enum = s.enum.map(any);
  if (typeof s.type === 'string') m.type = { value: [s.type] };
  if (s.items && typeof s.items === 'object') m.items = { schema: [schemaMessage(s.items as JSONSchema)] };
  if (typeof s.additionalProperties === 'boolean') m.additional_properties = { boolean: s.additionalProperties };
  else if (s.additionalProperties && typeof s.additionalProperties === 'object') m.additional_properties = { schema: schemaMessage(s.additionalProperties as JSONSchema) };
  if (Array.isArray(s.allOf)) m.all_of = (s.allOf as JSONSchema[]).map(schemaMessage);
  if (s.properties && typeof s.properties === 'object') {
    m.properties = { additional_properties: Object.entries(s.properties as Record<string, JSONSchema>).map(([name, value]) => ({ name, value: schemaMessage(value) })) };
  }
  const extensions = vendorExtensions(s);
  if (extensions) m.vendor_extension = extensions;
  return m;
}

function vendorExtensions(o: JSONSchema): { name: string; value: { yaml: string } }[] | undefined {
  const extensions = Object.entries(o).filter(([k]) => k.startsWith('x-'));
  return extensions.length ? extensions.map(([name, value]) => ({ name, value: any(value) })) : undefined;
}

/** gnostic's NonBodyParameter holds a query or path parameter in a message of its own */
const nonBodyField: Record<string, string> = { query: 'query_parameter_sub_schema', path: 'path_parameter_sub_schema' };

/** A v2 parameter as gnostic's ParametersItem. */
function parameterMessage(p: JSONSchema): Record<string, unknown> {
  const common = { name: p.name, in: p.in, description: p.description, required: p.required };
  if (p.in === 'body') return { parameter: { body_parameter: { ...common, ...(p.schema ? { schema: schemaMessage(p.schema as JSONSchema) } : {}) } } };
  const field = nonBodyField[p.in as string];
  // the documents hold no header or form parameters; one would need gnostic's messages for it
  if (!field) throw new Error(`openapi v2: no protobuf form for a parameter in ${String(p.in)}`);
  return { parameter: { non_body_parameter: { [field]: { ...common, type: p.type, format: p.format, unique_items: p.uniqueItems } } } };
}

function operationMessage(op: JSONSchema): Record<string, unknown> {
  const responses = Object.entries(op.responses as Record<string, JSONSchema>).map(([name, r]) => ({
    name,
    value: { response: { description: r.description, ...(r.schema ? { schema: { schema: schemaMessage(r.schema as JSONSchema) } } : {}) } },
  }));
  return {
    produces: op.produces,
    consumes: op.consumes,
    parameters: ((op.parameters ?? []) as JSONSchema[]).map(parameterMessage),
    responses: { response_code: responses },
    vendor_extension: vendorExtensions(op),
  };
}

function pathItemMessage(item: JSONSchema): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  for (const method of methods) if (item[method]) m[method] = operationMessage(item[method] as JSONSchema);
  if (item.parameters) m.parameters = (item.parameters as JSONSchema[]).map(parameterMessage);
  return m;
}

let protobufCache: Buffer | undefined;

/** The same document as gnostic's openapi.v2.Document (no `k8s\0` envelope: client-go unmarshals it as is). */
export function openAPIV2Protobuf(): Buffer {
  if (protobufCache) return protobufCache;
  const doc = openAPIV2Document();
  const message = {
    swagger: doc.swagger,
    info: doc.info,
    paths: { path: Object.entries(doc.paths as Record<string, JSONSchema>).map(([name, value]) => ({ name, value: pathItemMessage(value) })) },
    definitions: { additional_properties: Object.entries(doc.definitions as Record<string, JSONSchema>).map(([name, value]) => ({ name, value: schemaMessage(value) })) },
  };
  protobufCache = Buffer.from(documentType().encode(documentType().fromObject(message)).finish());
  return protobufCache;
}

/** Decodes the protobuf document back to plain objects (for tests and diagnostics). */
export function decodeOpenAPIV2Protobuf(bytes: Uint8Array): Record<string, any> {
  return documentType().toObject(documentType().decode(bytes), { longs: Number, oneofs: true }) as Record<string, any>;
}
