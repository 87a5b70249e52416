// The `default` values of a structural schema, applied as kube-apiserver applies those of a CRD on
// write: a property missing from an object that is present gets its default (a copy), in nested
// objects, list items and map values alike; nothing is created under an absent parent.
import type { TSchema } from '@sinclair/typebox';

type SchemaNode = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fills in `value` (modified in place) from `schema`'s defaults. */
export function applySchemaDefaults(schema: TSchema, value: unknown): void {
  const s = schema as unknown as SchemaNode;
  if (Array.isArray(value)) {
    if (s.items) for (const item of value) applySchemaDefaults(s.items as TSchema, item);
    return;
  }
  if (!isObject(value)) return;
  if (isObject(s.patternProperties)) {
    const item = Object.values(s.patternProperties)[0] as TSchema;
    for (const v of Object.values(value)) applySchemaDefaults(item, v);
    return;
  }
  if (!isObject(s.properties)) return;
  for (const [k, p] of Object.entries(s.properties as Record<string, SchemaNode>)) {
    if (!(k in value) && p.default !== undefined) value[k] = structuredClone(p.default);
    if (k in value) applySchemaDefaults(p as unknown as TSchema, value[k]);
  }
}
