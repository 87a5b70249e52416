// kubectl's client-side apply record: the annotation kubectl.kubernetes.io/last-applied-configuration
// holds the manifest as last applied, and a later `kubectl apply` (or `kubectl diff`) takes it as
// the original of its three-way merge; without it kubectl warns and cannot tell which fields a
// manifest dropped. `certsmith apply` writes it byte for byte as kubectl does
// (k8s.io/kubectl/pkg/util GetModifiedConfiguration): the document with its namespace filled in,
// the annotation itself taken out (an empty `annotations` map stays), encoded as Go's encoding/json
// encodes it (keys sorted, <, > and & escaped) with its trailing newline.
import type { KubeObject } from '../api/meta.ts';

export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/** JSON as Go's json.Encoder writes a decoded document: map keys sorted, HTML characters escaped. */
function goJSON(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJSON).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${goString(k)}:${goJSON(o[k])}`).join(',')}}`;
  }
  return typeof value === 'string' ? goString(value) : JSON.stringify(value);
}

const goEscapes: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => goEscapes[c]);
}

/** The annotation's value for a manifest document (its namespace already set as it will be stored). */
export function lastAppliedConfiguration(obj: KubeObject): string {
  const { [lastAppliedAnnotation]: _previous, ...annotations } = obj.metadata.annotations ?? {};
  return `${goJSON({ ...obj, metadata: { ...obj.metadata, annotations } })}\n`;
}

/** The document a stored object was last applied from, when it says (and says it in JSON). */
export function lastAppliedOf(stored: KubeObject): KubeObject | undefined {
  const text = stored.metadata.annotations?.[lastAppliedAnnotation];
  if (!text) return undefined;
  try {
    const doc = JSON.parse(text) as KubeObject;
    return doc && typeof doc === 'object' && doc.metadata && typeof doc.metadata === 'object' ? doc : undefined;
  } catch {
    return undefined;
  }
}
