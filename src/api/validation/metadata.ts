// Rules every kind shares: well-formed Unicode in every string, and object metadata (name,
// labels, annotation keys) by Kubernetes' name rules (src/api/names.ts).
import type { KubeObject } from '../meta.ts';
import type { ResourceType } from '../resources.ts';
import { dns1123LabelError, dns1123SubdomainError, labelValueError, qualifiedNameError } from '../names.ts';
import { isWellFormed, loneSurrogate } from '../unicode.ts';
import { child, index, isObj, isStr, mapKey, type Errors } from './field-errors.ts';

/** kube-apiserver's apimachinery TotalAnnotationSizeLimitB: the store enforces it on every object, validation on templates */
export const maxAnnotationBytes = 262_144;

function wellFormedError(s: string): string {
  const c = loneSurrogate(s)!.toString(16).toUpperCase();
  return `must be well-formed Unicode: contains a lone UTF-16 surrogate (U+${c}), which no certificate can encode`;
}

/** A map key as it may appear in a field path: lone surrogates spelled as \uXXXX, so the message stays well-formed. */
function pathKey(k: string): string {
  return k.replace(/\p{Cs}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/** String.prototype.isWellFormed (Node 20+; ES2022's lib lacks it): native, where a regex test is not. */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Whether every string and key in v is well-formed Unicode and no object or array in it sits
 * `limit` levels deep (the root is level 0). The answer for nearly every write, without the
 * field path of each value that a walk reporting problems builds (most of its cost, and every
 * write was walked three or four times, issue 17): that walk runs only when this says no.
 */
export function soundValue(v: unknown, limit = Infinity): boolean {
  const values: unknown[] = [v];
  const depths: number[] = [0];
  while (values.length > 0) {
    const x = values.pop();
    const depth = depths.pop()!;
    if (typeof x === 'string') {
      if (!wellFormed(x)) return false;
      continue;
    }
    if (x === null || typeof x !== 'object') continue;
    if (depth >= limit) return false;
    if (Array.isArray(x)) {
      for (const c of x) {
        values.push(c);
        depths.push(depth + 1);
      }
    } else {
      for (const k of Object.keys(x)) {
        if (!wellFormed(k)) return false;
        values.push((x as Record<string, unknown>)[k]);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}

export function validateWellFormed(v: unknown, path: string, errs: Errors): void {
  if (soundValue(v)) return;
  // Iterative: an object deep enough to overflow the stack must not crash admission.
  const stack: [unknown, string][] = [[v, path]];
  while (stack.length > 0) {
    const [value, p] = stack.pop()!;
    if (isStr(value)) {
      if (!isWellFormed(value)) errs.invalid(p, value, wellFormedError(value));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], index(p, i)]);
    } else if (isObj(value)) {
      for (const [k, x] of Object.entries(value).reverse()) {
        const kp = /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? child(p, k) : mapKey(p, pathKey(k));
        if (!isWellFormed(k)) errs.invalid(kp, pathKey(k), `key ${wellFormedError(k)}`);
        stack.push([x, kp]);
      }
    }
  }
}

export function validateLabels(labels: unknown, path: string, errs: Errors): void {
  if (!isObj(labels)) return;
  for (const [k, v] of Object.entries(labels)) {
    const ke = qualifiedNameError(k);
    if (ke) errs.invalid(path, k, ke);
    const ve = isStr(v) ? labelValueError(v) : undefined;
    if (ve) errs.invalid(mapKey(path, k), v, ve);
  }
}

export function validateAnnotationKeys(annotations: unknown, path: string, errs: Errors): void {
  if (!isObj(annotations)) return;
  for (const k of Object.keys(annotations)) {
    const ke = qualifiedNameError(k.toLowerCase());
    if (ke) errs.invalid(path, k, ke);
  }
}

export function validateMetadata(type: ResourceType, obj: KubeObject, errs: Errors): void {
  const md = obj.metadata;
  if (!isObj(md)) {
    errs.required('metadata');
    return;
  }
  if (isStr(md.name) && md.name !== '') {
    const e = type.kind === 'Namespace' ? dns1123LabelError(md.name) : dns1123SubdomainError(md.name);
    if (e) errs.invalid('metadata.name', md.name, e);
  } else if (!isStr(md.generateName) || md.generateName === '') {
    errs.required('metadata.name', 'name or generateName is required');
  }
  validateLabels(md.labels, 'metadata.labels', errs);
  validateAnnotationKeys(md.annotations, 'metadata.annotations', errs);
}
