// The fieldValidation query parameter and what it does with unknown and duplicate fields.
import type http from 'node:http';
import type { ResourceType } from '../../api/resources.ts';
import { duplicateFields, parseFieldValidation, type FieldValidation } from '../../api/unknown-fields.ts';
import { HttpError } from './responses.ts';
import { addWarning, headerQuoted } from '../warnings.ts';

export function fieldValidationOf(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  const mode = parseFieldValidation(v);
  if (!mode) throw new HttpError(400, 'BadRequest', `fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`);
  return mode;
}

/**
 * Unknown and duplicate fields as kube-apiserver treats them: Strict refuses the write with its
 * strict decoding error (`decodePrefix` is what kube says before it when a body fails to
 * decode), Warn sends each problem as a Warning header (code 299, as kubectl prints them),
 * Ignore says nothing. The unknown fields are already pruned from what will be stored.
 */
export function enforceFieldValidation(mode: FieldValidation, problems: string[], res: http.ServerResponse, decodePrefix = '') {
  if (!problems.length || mode === 'Ignore') return;
  if (mode === 'Strict') throw new HttpError(400, 'BadRequest', `${decodePrefix}strict decoding error: ${problems.join(', ')}`);
  // through the request's recorder, so that admission webhooks' warnings are added beside these
  for (const p of problems) if (!addWarning(p)) res.appendHeader('Warning', `299 - ${headerQuoted(p)}`);
}

const jsonPatchOpFields = new Set(['op', 'path', 'value', 'from']);

/** kube's complaints about the operations of a JSON patch themselves: unknown members of an operation, duplicate ones. */
export function jsonPatchProblems(ops: unknown, text: string): string[] {
  const out = duplicateFields(text).map((p) => `json patch duplicate field "${p}"`);
  if (Array.isArray(ops)) {
    ops.forEach((op, i) => {
      if (op && typeof op === 'object' && !Array.isArray(op)) {
        for (const k of Object.keys(op)) if (!jsonPatchOpFields.has(k)) out.push(`json patch unknown field "[${i}].${k}"`);
      }
    });
  }
  return out;
}

/** What kube-apiserver says before a decoding error of a body of this kind. */
export function decodePrefix(type: ResourceType): string {
  return `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: `;
}
