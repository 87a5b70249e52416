// Field errors as the API server reports them (field.ErrorList): the error type, its text in a
// 422 Status, and the small path and value helpers every kind's rules share.
import { parseDuration } from '../duration.ts';
import type { ResourceType } from '../resources.ts';

export type FieldErrorReason = 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueDuplicate' | 'FieldValueTooLong';

export interface FieldError {
  /** Kubernetes field path, e.g. `spec.renewal.windows[0].cron[1]`. */
  field: string;
  message: string;
  reason: FieldErrorReason;
  /** The offending value, for Invalid/NotSupported/Duplicate messages. */
  value?: unknown;
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isStr = (v: unknown): v is string => typeof v === 'string';
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter(isStr) : []);
export const child = (p: string, k: string) => (p ? `${p}.${k}` : k);
export const index = (p: string, i: number) => `${p}[${i}]`;
export const mapKey = (p: string, k: string) => `${p}[${k}]`;

export class Errors {
  readonly list: FieldError[] = [];
  required(field: string, message = ''): void { this.list.push({ field, message, reason: 'FieldValueRequired' }); }
  invalid(field: string, value: unknown, message: string): void { this.list.push({ field, message, reason: 'FieldValueInvalid', value }); }
  forbidden(field: string, message: string): void { this.list.push({ field, message, reason: 'FieldValueForbidden' }); }
  notSupported(field: string, value: unknown, supported: readonly string[]): void {
    this.list.push({ field, message: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`, reason: 'FieldValueNotSupported', value });
  }
  duplicate(field: string, value: unknown): void { this.list.push({ field, message: '', reason: 'FieldValueDuplicate', value }); }
  tooLong(field: string, maxBytes: number): void { this.list.push({ field, message: `must have at most ${maxBytes} bytes`, reason: 'FieldValueTooLong' }); }
}

/** The message Kubernetes puts in a 422 Status: `Kind.group "name" is invalid: [path: Reason: msg, ...]`. */
export function invalidObjectMessage(type: ResourceType, name: string, errors: FieldError[]): string {
  const gk = type.group ? `${type.kind}.${type.group}` : type.kind;
  const parts = errors.map(fieldErrorText);
  const body = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return `${gk} ${JSON.stringify(name)} is invalid: ${body}`;
}

/** A value kube prints with Go's %#v, e.g. `[]string{"v2"}`: the literal is carried as written. */
export class GoLiteral {
  constructor(readonly text: string) {}
}

/** A list of strings as kube's messages print a Go slice of `type`. */
export const goStringSlice = (items: readonly string[], type = 'string') => new GoLiteral(`[]${type}{${items.map((s) => JSON.stringify(s)).join(', ')}}`);

export function fieldErrorText(e: FieldError): string {
  const v = e.value === undefined ? '' : e.value instanceof GoLiteral ? e.value.text
    : typeof e.value === 'string' ? JSON.stringify(e.value) : typeof e.value === 'object' ? '"object"' : String(e.value);
  switch (e.reason) {
    case 'FieldValueRequired': return `${e.field}: Required value${e.message ? `: ${e.message}` : ''}`;
    case 'FieldValueForbidden': return `${e.field}: Forbidden${e.message ? `: ${e.message}` : ''}`;
    case 'FieldValueNotSupported': return `${e.field}: Unsupported value: ${v}${e.message ? `: ${e.message}` : ''}`;
    case 'FieldValueDuplicate': return `${e.field}: Duplicate value: ${v}`;
    case 'FieldValueTooLong': return `${e.field}: Too long: ${e.message}`;
    default: return `${e.field}: Invalid value: ${v}${e.message ? `: ${e.message}` : ''}`;
  }
}

export function tryDuration(v: unknown, path: string, errs: Errors): number | undefined {
  if (!isStr(v)) return undefined;
  try {
    return parseDuration(v);
  } catch (err) {
    errs.invalid(path, v, (err as Error).message);
    return undefined;
  }
}
