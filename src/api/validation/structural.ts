// Structural errors: what the schema (src/api/schema.ts) says about an object, in Kubernetes field
// paths, merged with the webhook rules' errors; and the unknown fields fieldValidation reports.
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { KubeObject } from '../meta.ts';
import type { ResourceType } from '../resources.ts';
import { schemasByKind } from '../schema.ts';
import { child, index, isObj, mapKey, type FieldError } from './field-errors.ts';

/**
 * A kind's schema is compiled once it has been checked `compileAfter` times: the compiled check
 * is faster than Value.Check's walk of the schema (issue 17), but compiling costs 20-30 ms for
 * the larger kinds, more than a server that writes a few of them would ever save. Both call the
 * same TypeRegistry and FormatRegistry entries, so they accept the same objects.
 */
const compileAfter = 200;
const checks = new Map<TSchema, number>();
const compiled = new Map<TSchema, TypeCheck<TSchema>>();

function passes(schema: TSchema, obj: unknown): boolean {
  const c = compiled.get(schema);
  if (c) return c.Check(obj);
  const n = (checks.get(schema) ?? 0) + 1;
  if (n < compileAfter) checks.set(schema, n);
  else compiled.set(schema, TypeCompiler.Compile(schema));
  return Value.Check(schema, obj);
}

export function structuralErrors(type: ResourceType, obj: KubeObject): FieldError[] {
  const schema = schemasByKind[type.kind];
  if (!schema || !type.group.endsWith('cert-manager.io')) return [];
  // nearly every object is valid: only an invalid one pays for walking Errors' iterator
  if (passes(schema, obj)) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of Value.Errors(schema, obj)) {
    const field = pointerToFieldPath(e.path, obj);
    // TypeBox reports a missing required property twice (missing, then wrong type): keep the first.
    if (seen.has(field)) continue;
    seen.add(field);
    out.push(schemaError(field, e));
  }
  return out;
}

function schemaError(field: string, e: ValueError): FieldError {
  const s = e.schema as unknown as Record<string | symbol, unknown>;
  // A key present with an undefined value never survives JSON; treat it as the missing field it is.
  if (e.type === ValueErrorType.ObjectRequiredProperty || e.value === undefined) return { field, message: '', reason: 'FieldValueRequired' };
  if (s[Kind] === 'StringEnum') {
    return { field, message: `supported values: ${(s.enum as string[]).map((x) => JSON.stringify(x)).join(', ')}`, reason: 'FieldValueNotSupported', value: e.value };
  }
  const invalid = (message: string): FieldError => ({ field, message, reason: 'FieldValueInvalid', value: e.value });
  switch (e.type) {
    case ValueErrorType.StringFormat:
      return invalid(s.format === 'date-time' ? 'must be an RFC 3339 date-time' : s.format === 'byte' ? 'must be base64-encoded' : `must be in ${String(s.format)} format`);
    case ValueErrorType.StringMaxLength: return invalid(`must be no more than ${String(s.maxLength)} characters`);
    // kube-apiserver's wording for the OpenAPI bounds of CRD schemas
    case ValueErrorType.StringMinLength: return invalid(`${field} in body should be at least ${String(s.minLength)} chars long`);
    case ValueErrorType.StringPattern: return invalid(`${field} in body should match '${String(s.pattern)}'`);
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum: return invalid(`${field} in body should be greater than or equal to ${String(s.minimum)}`);
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum: return invalid(`${field} in body should be less than or equal to ${String(s.maximum)}`);
    case ValueErrorType.Kind:
      if (s[Kind] === 'StringOrStringArray') return invalid('must be a string or a list of strings');
      if (s[Kind] === 'IntOrString') {
        return invalid(typeof e.value === 'string' && s.pattern ? `${field} in body should match '${String(s.pattern)}'` : 'must be an integer or a string');
      }
      return invalid('must be of type object');
    default:
      return invalid(typeof s.type === 'string' ? `must be of type ${s.type}` : e.message);
  }
}

/** `/spec/dnsNames/0` → `spec.dnsNames[0]`; map keys that are not plain identifiers become `[key]`. */
function pointerToFieldPath(pointer: string, root: unknown): string {
  let out = '';
  let cur: unknown = root;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) out = index(out, Number(seg));
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out = child(out, seg);
    else out = mapKey(out, seg);
    cur = isObj(cur) || Array.isArray(cur) ? (cur as Record<string, unknown>)[seg] : undefined;
  }
  return out;
}

function isUnder(path: string, ancestor: string): boolean {
  return path.startsWith(ancestor) && (path[ancestor.length] === '.' || path[ancestor.length] === '[');
}

/**
 * One error per mistake: a webhook rule's message wins over the schema's at the same path (and
 * over a schema "required" on a parent), and rules under a field the schema already rejected as
 * mistyped are dropped.
 */
export function mergeErrors(schema: FieldError[], rules: FieldError[]): FieldError[] {
  const keptSchema = schema.filter((s) => !rules.some((r) => r.field === s.field || (s.reason === 'FieldValueRequired' && isUnder(r.field, s.field))));
  const keptRules = rules.filter((r) => !schema.some((s) => s.reason !== 'FieldValueRequired' && isUnder(r.field, s.field)));
  return [...keptSchema, ...keptRules];
}

function walkUnknown(schema: TSchema | undefined, value: unknown, path: string, out: string[]): void {
  if (!schema) return;
  const s = schema as unknown as Record<string | symbol, unknown>;
  if (s[Kind] === 'OpenObject' || s[Kind] === 'StringOrStringArray') return;
  if (s.type === 'array' && Array.isArray(value)) {
    value.forEach((v, i) => walkUnknown(s.items as TSchema, v, index(path, i), out));
    return;
  }
  if (s.type !== 'object' || !isObj(value)) return;
  if (s.patternProperties) {
    const item = Object.values(s.patternProperties as Record<string, TSchema>)[0];
    for (const [k, v] of Object.entries(value)) walkUnknown(item, v, mapKey(path, k), out);
    return;
  }
  const props = (s.properties ?? {}) as Record<string, TSchema>;
  const open = s['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [k, v] of Object.entries(value)) {
    if (k in props) walkUnknown(props[k], v, child(path, k), out);
    else if (!open) out.push(child(path, k));
  }
}

const objectMetaFields = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

function extraTopLevelFields(type: ResourceType): Record<string, true> {
  if (type.kind === 'Secret') return { data: true, stringData: true, type: true, immutable: true };
  if (type.kind === 'Event') {
    return Object.fromEntries(['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime',
      'series', 'action', 'related', 'reportingComponent', 'reportingInstance'].map((k) => [k, true]));
  }
  return {};
}

/**
 * Paths of fields the schema does not know, for `fieldValidation=Strict|Warn`. Fields under
 * objects that cert-manager leaves open (provider configs, pod specs) are never reported.
 */
export function findUnknownFields(type: ResourceType, obj: unknown): string[] {
  const schema = schemasByKind[type.kind];
  const out: string[] = [];
  if (!isObj(obj)) return out;
  for (const k of Object.keys(obj)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec', 'status'].includes(k) && !(k in extraTopLevelFields(type))) out.push(k);
  }
  if (isObj(obj.metadata)) {
    for (const k of Object.keys(obj.metadata)) if (!objectMetaFields.has(k)) out.push(`metadata.${k}`);
  }
  if (schema) {
    const props = (schema as unknown as { properties: Record<string, TSchema> }).properties;
    for (const k of ['spec', 'status'] as const) if (k in obj) walkUnknown(props[k], obj[k], k, out);
  }
  return out;
}
