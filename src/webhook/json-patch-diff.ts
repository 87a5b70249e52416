// The RFC 6902 patch a mutating webhook answers with: the operations that turn the object the
// API server sent into the defaulted one. Minimal in the sense that kube-apiserver cares about:
// only members that differ are touched, so a patch never rewrites what the user wrote.
import { jsonEqual, type JSONPatchOperation } from '../store/patch.ts';

/** One reference token of a JSON pointer (RFC 6901): `~` becomes `~0`, `/` becomes `~1`, in that order. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Operations that make `from` equal to `to` when applied in order. Keys holding undefined count as absent, as in JSON. */
export function diffToJSONPatch(from: unknown, to: unknown): JSONPatchOperation[] {
  const ops: JSONPatchOperation[] = [];
  diffAt('', from, to, ops);
  return ops;
}

function diffAt(path: string, from: unknown, to: unknown, ops: JSONPatchOperation[]): void {
  if (jsonEqual(from, to)) return;
  if (isPlainObject(from) && isPlainObject(to)) {
    for (const k of Object.keys(from)) {
      if (from[k] !== undefined && to[k] === undefined) ops.push({ op: 'remove', path: `${path}/${escapePointerToken(k)}` });
    }
    for (const k of Object.keys(to)) {
      if (to[k] === undefined) continue;
      const p = `${path}/${escapePointerToken(k)}`;
      if (from[k] === undefined) ops.push({ op: 'add', path: p, value: structuredClone(to[k]) });
      else diffAt(p, from[k], to[k], ops);
    }
    return;
  }
  // Arrays of the same length are compared element by element (defaulting fills in members of
  // list items); a changed length replaces the list, which stays correct without a move/LCS search.
  if (Array.isArray(from) && Array.isArray(to) && from.length === to.length) {
    to.forEach((v, i) => diffAt(`${path}/${i}`, from[i], v, ops));
    return;
  }
  ops.push({ op: 'replace', path, value: structuredClone(to) });
}
