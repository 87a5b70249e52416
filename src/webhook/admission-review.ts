// cert-manager's validating and mutating admission as a pure function: an AdmissionReview
// (admission.k8s.io/v1) in, the HTTP answer out. The rules are src/api's (the ones the embedded
// server applies in process): checkObjectUpdate, applyDefaults, validate. Nothing here decides
// what is valid; this file only translates between those functions and the review's wire shape.
import type { KubeObject, UserInfo } from '../api/meta.ts';
import { resourceTypes, type ResourceType } from '../api/resources.ts';
import { applyDefaults } from '../api/defaults.ts';
import { validate, invalidObjectMessage, fieldErrorText } from '../api/validation.ts';
import { checkObjectUpdate, checkValueShape } from '../store/object-checks.ts';
import { StoreError } from '../store/store.ts';
import { diffToJSONPatch } from './json-patch-diff.ts';

export type AdmissionMode = 'validate' | 'mutate';

export const admissionReviewAPIVersion = 'admission.k8s.io/v1';

/** The cert-manager groups, as in the webhook configurations of deploy/webhook.yaml. */
const handledGroups = new Set(['cert-manager.io', 'acme.cert-manager.io']);

export interface AdmissionStatus {
  code: number;
  reason?: string;
  message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { field: string; message: string; reason?: string }[] };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patchType?: 'JSONPatch';
  /** base64 of the RFC 6902 patch */
  patch?: string;
  warnings?: string[];
}

/**
 * The HTTP answer: a review (200) once the request carries a uid to answer to; before that
 * (not JSON, not an AdmissionReview v1, no uid) a 400 with a text message, since there is no
 * review to put a refusal in.
 */
export type AdmissionAnswer =
  | { httpStatus: 200; review: { apiVersion: string; kind: 'AdmissionReview'; response: AdmissionResponse } }
  | { httpStatus: 400; message: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function badRequest(message: string): AdmissionAnswer {
  return { httpStatus: 400, message };
}

function answer(response: AdmissionResponse): AdmissionAnswer {
  return { httpStatus: 200, review: { apiVersion: admissionReviewAPIVersion, kind: 'AdmissionReview', response } };
}

function denied(uid: string, status: AdmissionStatus): AdmissionAnswer {
  return answer({ uid, allowed: false, status });
}

/**
 * The kind the review is about: request.kind (the object's group/version/kind) first, else
 * request.resource (group/version/resource). Only v1 of the cert-manager groups is handled.
 */
export function handledTypeOf(request: Record<string, unknown>): ResourceType | undefined {
  const kind = isObj(request.kind) ? request.kind : undefined;
  const resource = isObj(request.resource) ? request.resource : undefined;
  const byKind = kind && resourceTypes.find((t) => t.group === kind.group && t.version === kind.version && t.kind === kind.kind);
  const type = byKind || (resource && resourceTypes.find((t) => t.group === resource.group && t.version === resource.version && t.plural === resource.resource));
  return type && handledGroups.has(type.group) ? type : undefined;
}

function requesterOf(userInfo: unknown): UserInfo | undefined {
  if (!isObj(userInfo) || typeof userInfo.username !== 'string') return undefined;
  const groups = Array.isArray(userInfo.groups) ? userInfo.groups.filter((g): g is string => typeof g === 'string') : undefined;
  const extra = isObj(userInfo.extra)
    ? Object.fromEntries(Object.entries(userInfo.extra).filter(([, v]) => Array.isArray(v)).map(([k, v]) => [k, (v as unknown[]).filter((s): s is string => typeof s === 'string')]))
    : undefined;
  return {
    username: userInfo.username,
    ...(typeof userInfo.uid === 'string' && userInfo.uid !== '' ? { uid: userInfo.uid } : {}),
    ...(groups?.length ? { groups } : {}),
    ...(extra && Object.keys(extra).length ? { extra } : {}),
  };
}

/** A refusal when `value` nests too deeply or holds a string that is not well-formed Unicode. */
function shapeProblem(uid: string, what: string, value: unknown): AdmissionAnswer | undefined {
  try {
    checkValueShape(value);
    return undefined;
  } catch (e) {
    if (!(e instanceof StoreError)) throw e;
    return denied(uid, { code: e.code, reason: e.reason, message: `request.${what}: ${e.message}` });
  }
}

/** Answers one AdmissionReview for /validate or /mutate. `body` is the parsed JSON of the request. */
export function reviewAdmission(mode: AdmissionMode, body: unknown): AdmissionAnswer {
  if (!isObj(body)) return badRequest('malformed AdmissionReview: the body must be a JSON object');
  if (body.apiVersion !== admissionReviewAPIVersion || body.kind !== 'AdmissionReview') {
    return badRequest(`malformed AdmissionReview: expected apiVersion "${admissionReviewAPIVersion}" and kind "AdmissionReview", got apiVersion ${JSON.stringify(body.apiVersion ?? null)} and kind ${JSON.stringify(body.kind ?? null)} (only admissionReviewVersions ["v1"] is served)`);
  }
  const request = body.request;
  if (!isObj(request)) return badRequest('malformed AdmissionReview: request is missing or not an object');
  const uid = request.uid;
  if (typeof uid !== 'string' || uid === '') return badRequest('malformed AdmissionReview: request.uid is missing or not a string');

  const operation = request.operation;
  if (operation === 'DELETE' || operation === 'CONNECT') return answer({ uid, allowed: true });
  if (operation !== 'CREATE' && operation !== 'UPDATE') {
    return denied(uid, { code: 400, reason: 'BadRequest', message: `request.operation ${JSON.stringify(operation ?? null)} is not one of CREATE, UPDATE, DELETE, CONNECT` });
  }
  const type = handledTypeOf(request);
  // a kind this webhook does not own: not its business, as upstream's webhook lets it pass
  if (!type) return answer({ uid, allowed: true });

  const object = request.object;
  if (!isObj(object)) return denied(uid, { code: 400, reason: 'BadRequest', message: `request.object is missing or not an object (${operation} of ${type.kind})` });
  const oldObject = request.oldObject;
  if (operation === 'UPDATE' && !isObj(oldObject)) {
    return denied(uid, { code: 400, reason: 'BadRequest', message: `request.oldObject is missing or not an object: an UPDATE of ${type.kind} needs it for the immutability rules` });
  }
  // before anything recursive (the copy, defaulting, validation) touches them: no depth of
  // nesting a client sends can overflow the stack
  const shape = shapeProblem(uid, 'object', object) ?? (operation === 'UPDATE' ? shapeProblem(uid, 'oldObject', oldObject) : undefined);
  if (shape) return shape;
  const obj = structuredClone(object) as KubeObject;
  const old = operation === 'UPDATE' ? structuredClone(oldObject) as KubeObject : undefined;
  if (!isObj(obj.metadata)) return denied(uid, { code: 400, reason: 'BadRequest', message: 'request.object.metadata is missing or not an object' });

  if (mode === 'mutate') {
    // upstream's mutating webhook stamps the creator's identity onto a new CertificateRequest
    const requester = operation === 'CREATE' ? requesterOf(request.userInfo) : undefined;
    const defaulted = applyDefaults(type, obj, requester ? { requester } : {});
    const ops = diffToJSONPatch(object, defaulted);
    if (ops.length === 0) return answer({ uid, allowed: true });
    return answer({ uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
  }

  const name = String(obj.metadata.name ?? (typeof request.name === 'string' ? request.name : undefined) ?? obj.metadata.generateName ?? '');
  try {
    checkObjectUpdate(type, obj, old);
  } catch (e) {
    if (!(e instanceof StoreError)) throw e;
    return denied(uid, { code: e.code, reason: e.reason, message: e.message });
  }
  const errors = validate(type, obj, old);
  if (errors.length === 0) return answer({ uid, allowed: true });
  return denied(uid, {
    code: 422,
    reason: 'Invalid',
    message: invalidObjectMessage(type, name, errors),
    details: {
      name, group: type.group, kind: type.kind,
      // each cause carries its field apart, as metav1.StatusCause does
      causes: errors.map((e) => {
        const text = fieldErrorText(e);
        return { field: e.field, message: text.startsWith(`${e.field}: `) ? text.slice(e.field.length + 2) : text, reason: e.reason };
      }),
    },
  });
}
