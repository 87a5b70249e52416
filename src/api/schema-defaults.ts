// The `default` values of a structural schema, applied as kube-apiserver applies those of a CRD on
// write: a property missing from an object that is present gets its default (a copy), in nested
// objects, list items and map values alike; nothing is created under an absent parent.
import type { TSchema } from '@sinclair/typebox';
import { plainCopy } from './plain-copy.ts';

type SchemaNode = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` with `schema`'s defaults filled in, never modified: value itself when no default
 * applies (nearly every write), otherwise a copy of each object and list on the way to a filled
 * property, sharing the rest. Admission no longer deep-copies every object to default a few
 * (issue 17): the store copies what it keeps anyway.
 */
export function withSchemaDefaults(schema: TSchema, value: unknown): unknown {
  const s = schema as unknown as SchemaNode;
  if (Array.isArray(value)) {
    if (!s.items) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = withSchemaDefaults(s.items as TSchema, value[i]);
      if (v !== value[i]) (out ??= [...value])[i] = v;
    }
    return out ?? value;
  }
  if (!isObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  if (isObject(s.patternProperties)) {
    const item = Object.values(s.patternProperties)[0] as TSchema;
    for (const k of Object.keys(value)) {
      const v = withSchemaDefaults(item, value[k]);
      if (v !== value[k]) (out ??= { ...value })[k] = v;
    }
    return out ?? value;
  }
  if (!isObject(s.properties)) return value;
  for (const [k, p] of Object.entries(s.properties as Record<string, SchemaNode>)) {
    if (!(k in value) && p.default !== undefined) (out ??= { ...value })[k] = plainCopy(p.default);
    const cur = out ?? value;
    if (k in cur) {
      const v = withSchemaDefaults(p as unknown as TSchema, cur[k]);
      if (v !== cur[k]) (out ??= { ...value })[k] = v;
    }
  }
  return out ?? value;
}
