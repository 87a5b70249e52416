// Label and field selectors with the Kubernetes syntax and semantics (k8s.io/apimachinery
// labels.Parse and fields.ParseSelector), shared by the store backends and the API server.
import type { KubeObject } from '../api/meta.ts';
import { isNamespaceType, type ResourceType } from '../api/resources.ts';
import { labelValueError, qualifiedNameError } from '../api/names.ts';
import { StoreError } from './store.ts';

export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** All requirements must hold; no requirements selects everything. */
export interface LabelSelector {
  requirements: LabelRequirement[];
}

/** metav1.LabelSelector, as it appears in specs. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Why a label key is invalid, or undefined when it is valid. */
export function labelKeyProblem(key: string): string | undefined {
  const e = qualifiedNameError(key);
  return e ? `invalid label key "${key}": ${e}` : undefined;
}

/** Why a label value is invalid, or undefined when it is valid (the empty value is valid). */
export function labelValueProblem(value: string): string | undefined {
  const e = labelValueError(value);
  return e ? `invalid label value "${value}": ${e}` : undefined;
}

function checkRequirement(r: LabelRequirement): LabelRequirement {
  const kp = labelKeyProblem(r.key);
  if (kp) throw new StoreError('BadRequest', `unable to parse requirement: ${kp}`);
  if ((r.operator === 'In' || r.operator === 'NotIn') && r.values.length === 0) {
    throw new StoreError('BadRequest', `unable to parse requirement: for 'in', 'notin' operators, values set can't be empty (key "${r.key}")`);
  }
  if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && r.values.length > 0) {
    throw new StoreError('BadRequest', `unable to parse requirement: values set must be empty for exists and does not exist (key "${r.key}")`);
  }
  if (r.operator === 'Gt' || r.operator === 'Lt') {
    if (r.values.length !== 1 || !/^-?[0-9]+$/.test(r.values[0])) {
      throw new StoreError('BadRequest', `unable to parse requirement: for 'Gt', 'Lt' operators, exactly one integer value is required (key "${r.key}")`);
    }
  } else {
    for (const v of r.values) {
      const vp = labelValueProblem(v);
      if (vp) throw new StoreError('BadRequest', `unable to parse requirement: ${vp}`);
    }
  }
  return r;
}

type Token = { kind: 'id' | 'op' | '(' | ')' | ',' | '!'; text: string; pos: number };

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '(' || c === ')' || c === ',') { out.push({ kind: c, text: c, pos: i }); i++; continue; }
    if (c === '!' && s[i + 1] === '=') { out.push({ kind: 'op', text: '!=', pos: i }); i += 2; continue; }
    if (c === '!') { out.push({ kind: '!', text: '!', pos: i }); i++; continue; }
    if (c === '=' && s[i + 1] === '=') { out.push({ kind: 'op', text: '==', pos: i }); i += 2; continue; }
    if (c === '=' || c === '>' || c === '<') { out.push({ kind: 'op', text: c, pos: i }); i++; continue; }
    const start = i;
    while (i < s.length && !/[\s(),!=<>]/.test(s[i])) i++;
    out.push({ kind: 'id', text: s.slice(start, i), pos: start });
  }
  return out;
}

/**
 * Parses the string form: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
 * `a>1`, `a<1`, joined by commas. Throws StoreError BadRequest naming the problem.
 */
export function parseLabelSelector(s: string | undefined): LabelSelector {
  const requirements: LabelRequirement[] = [];
  if (!s || !s.trim()) return { requirements };
  const toks = tokenize(s);
  let i = 0;
  const fail = (msg: string): never => {
    throw new StoreError('BadRequest', `unable to parse label selector "${s}": ${msg}`);
  };
  const peek = () => toks[i];
  const next = () => toks[i++];
  for (;;) {
    let t = next();
    if (!t) fail('expected a requirement');
    if (t.kind === '!') {
      const k = next();
      if (!k || k.kind !== 'id') fail(`expected a key after "!" at ${t.pos}`);
      requirements.push(checkRequirement({ key: k.text, operator: 'DoesNotExist', values: [] }));
    } else if (t.kind === 'id') {
      const key = t.text;
      const o = peek();
      if (!o || o.kind === ',') {
        requirements.push(checkRequirement({ key, operator: 'Exists', values: [] }));
      } else if (o.kind === 'op') {
        next();
        const v = peek();
        let value = '';
        if (v && v.kind === 'id') { value = v.text; next(); }
        if ((o.text === '>' || o.text === '<') && !value) fail(`expected an integer after "${o.text}"`);
        const operator: LabelOperator = o.text === '!=' ? 'NotEquals' : o.text === '>' ? 'Gt' : o.text === '<' ? 'Lt' : 'Equals';
        requirements.push(checkRequirement({ key, operator, values: [value] }));
      } else if (o.kind === 'id' && (o.text === 'in' || o.text === 'notin')) {
        next();
        if (next()?.kind !== '(') fail(`expected "(" after "${o.text}" at ${o.pos}`);
        const values: string[] = [];
        for (;;) {
          t = next();
          if (!t) fail('missing ")"');
          if (t.kind === ')') break;
          if (t.kind === ',') { values.push(''); continue; }
          if (t.kind !== 'id') fail(`unexpected "${t.text}" at ${t.pos}`);
          values.push(t.text);
          const after = next();
          if (after?.kind === ')') break;
          if (after?.kind !== ',') fail(`expected "," or ")" at ${after?.pos ?? s.length}`);
        }
        // "()" is the empty value, as kube's parseValues reads it
        if (!values.length) values.push('');
        requirements.push(checkRequirement({ key, operator: o.text === 'in' ? 'In' : 'NotIn', values: [...new Set(values)] }));
      } else {
        fail(`unexpected "${o.text}" at ${o.pos}`);
      }
    } else {
      fail(`unexpected "${t.text}" at ${t.pos}`);
    }
    const sep = next();
    if (!sep) break;
    if (sep.kind !== ',') fail(`expected "," at ${sep.pos}`);
  }
  return { requirements };
}

/** Converts a metav1.LabelSelector; an absent or empty one selects everything, as in Kubernetes. */
export function labelSelectorFromObject(o: LabelSelectorObject | undefined | null): LabelSelector {
  const requirements: LabelRequirement[] = [];
  if (!o) return { requirements };
  for (const [key, value] of Object.entries(o.matchLabels ?? {})) {
    requirements.push(checkRequirement({ key, operator: 'Equals', values: [value] }));
  }
  for (const e of o.matchExpressions ?? []) {
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) {
      throw new StoreError('BadRequest', `"${e.operator}" is not a valid label selector operator`);
    }
    requirements.push(checkRequirement({ key: e.key, operator: e.operator as LabelOperator, values: [...(e.values ?? [])] }));
  }
  return { requirements };
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return sel.requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.operator) {
      case 'Equals': return has && v === r.values[0];
      case 'NotEquals': return !has || v !== r.values[0];
      case 'In': return has && r.values.includes(v);
      case 'NotIn': return !has || !r.values.includes(v);
      case 'Exists': return has;
      case 'DoesNotExist': return !has;
      case 'Gt':
      case 'Lt': {
        if (!has || !/^-?[0-9]+$/.test(v)) return false;
        return r.operator === 'Gt' ? Number(v) > Number(r.values[0]) : Number(v) < Number(r.values[0]);
      }
    }
  });
}

/** The canonical string form, parseable by parseLabelSelector and by the Kubernetes API server. */
export function formatLabelSelector(sel: LabelSelector): string {
  return sel.requirements.map((r) => {
    switch (r.operator) {
      case 'Equals': return `${r.key}=${r.values[0]}`;
      case 'NotEquals': return `${r.key}!=${r.values[0]}`;
      case 'In': return `${r.key} in (${r.values.join(',')})`;
      case 'NotIn': return `${r.key} notin (${r.values.join(',')})`;
      case 'Exists': return r.key;
      case 'DoesNotExist': return `!${r.key}`;
      case 'Gt': return `${r.key}>${r.values[0]}`;
      case 'Lt': return `${r.key}<${r.values[0]}`;
    }
  }).join(',');
}

export interface FieldRequirement {
  field: string;
  operator: 'Equals' | 'NotEquals';
  value: string;
}

export interface FieldSelector {
  requirements: FieldRequirement[];
}

/** Splits on a separator that is not escaped with a backslash. */
function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) { cur += s[i] + s[i + 1]; i++; continue; }
    if (s[i] === sep) { parts.push(cur); cur = ''; continue; }
    cur += s[i];
  }
  parts.push(cur);
  return parts;
}

function unescapeFieldValue(v: string, whole: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '\\') {
      const n = v[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=') throw new StoreError('BadRequest', `invalid field selector "${whole}": invalid escape sequence`);
      out += n;
      i++;
    } else if (v[i] === ',' || v[i] === '=') {
      throw new StoreError('BadRequest', `invalid field selector "${whole}": unescaped "${v[i]}" in value`);
    } else {
      out += v[i];
    }
  }
  return out;
}

/** Parses `f=v`, `f==v`, `f!=v` joined by commas; `\,`, `\=` and `\\` escape inside values. */
export function parseFieldSelector(s: string | undefined): FieldSelector {
  const requirements: FieldRequirement[] = [];
  if (!s || !s.trim()) return { requirements };
  for (const part of splitUnescaped(s, ',')) {
    const m = /^([^=!\\]*?)\s*(!=|==|=)(.*)$/s.exec(part);
    const field = m?.[1].trim();
    if (!m || !field) throw new StoreError('BadRequest', `invalid field selector "${s}": "${part}" is not field=value, field==value or field!=value`);
    requirements.push({ field, operator: m[2] === '!=' ? 'NotEquals' : 'Equals', value: unescapeFieldValue(m[3], s) });
  }
  return { requirements };
}

/** The fields the Kubernetes API server lets clients select on, per kind. */
export function selectableFields(type: ResourceType): string[] {
  // a cluster-scoped kind has no namespace field (ObjectMetaFieldsSet with hasNamespaceField false)
  const common = type.namespaced ? ['metadata.name', 'metadata.namespace'] : ['metadata.name'];
  if (type.group === '' && type.kind === 'Secret') return [...common, 'type'];
  if (type.group === '' && type.kind === 'Event') {
    return [...common, 'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
      'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'];
  }
  if (isNamespaceType(type)) return [...common, 'status.phase'];
  return common;
}

/** Parses and checks the fields against the kind: an unsupported field is BadRequest (400). */
export function parseFieldSelectorFor(type: ResourceType, s: string | undefined): FieldSelector {
  const sel = parseFieldSelector(s);
  const allowed = selectableFields(type);
  for (const r of sel.requirements) {
    if (!allowed.includes(r.field)) {
      throw new StoreError('BadRequest', `field label not supported: ${r.field}`);
    }
  }
  return sel;
}

function fieldValue(obj: KubeObject, field: string): string {
  if (field === 'source') {
    const src = (obj as { source?: { component?: string } }).source;
    return src?.component ?? '';
  }
  let cur: unknown = obj;
  for (const p of field.split('.')) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
  return cur === undefined || cur === null ? '' : String(cur);
}

export function matchesFields(sel: FieldSelector, obj: KubeObject): boolean {
  return sel.requirements.every((r) => {
    const v = fieldValue(obj, r.field);
    return r.operator === 'Equals' ? v === r.value : v !== r.value;
  });
}
