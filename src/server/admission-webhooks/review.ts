// The AdmissionReview v1 exchange (admission.k8s.io/v1): the request kube-apiserver sends and
// the checks it makes on the answer (webhook/request/admissionreview.go). Pure.
import type { KubeObject, UserInfo } from '../../api/meta.ts';
import type { AdmissionOperation } from './matching.ts';

/** Everything the review's request carries about one write. */
export interface ReviewInput {
  uid: string;
  group: string;
  version: string;
  kind: string;
  resource: string;
  subresource: string;
  name: string;
  namespace: string;
  operation: AdmissionOperation;
  userInfo: UserInfo;
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun: boolean;
  /** CreateOptions, UpdateOptions, PatchOptions or DeleteOptions (meta.k8s.io/v1) */
  options: Record<string, unknown>;
}

/**
 * What the request says about the write besides its uid, objects and options: what kube's
 * CreateAdmissionRequest gives matchConditions as `request`.
 */
export function requestAttributes(r: Omit<ReviewInput, 'uid' | 'object' | 'oldObject' | 'options'>): Record<string, unknown> {
  const kind = { group: r.group, version: r.version, kind: r.kind };
  const resource = { group: r.group, version: r.version, resource: r.resource };
  return {
    kind, resource,
    ...(r.subresource ? { subResource: r.subresource } : {}),
    requestKind: kind, requestResource: resource,
    ...(r.subresource ? { requestSubResource: r.subresource } : {}),
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
    operation: r.operation,
    userInfo: r.userInfo,
    dryRun: r.dryRun,
  };
}

export function admissionReview(r: ReviewInput): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: r.uid,
      ...requestAttributes(r),
      object: r.object ?? null,
      oldObject: r.oldObject ?? null,
      options: r.options,
    },
  };
}

/** The answer was not a usable AdmissionReview: a call failure (failurePolicy decides). */
export class InvalidResponse extends Error {}

export interface ReviewStatus {
  code?: number;
  reason?: string;
  message?: string;
  details?: unknown;
}

export interface ReviewOutcome {
  allowed: boolean;
  status?: ReviewStatus;
  /** JSON patch operations (already decoded from base64) */
  patch?: unknown[];
  warnings: string[];
}

/** Checks the answer as kube-apiserver's VerifyAdmissionResponse does. */
export function reviewOutcome(body: unknown, uid: string, mutating: boolean): ReviewOutcome {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new InvalidResponse('received invalid webhook response: the body is not an AdmissionReview object');
  const b = body as Record<string, any>;
  if (b.apiVersion !== 'admission.k8s.io/v1' || b.kind !== 'AdmissionReview') {
    throw new InvalidResponse(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(b.apiVersion ?? '')}, Kind=${String(b.kind ?? '')}`);
  }
  const res = b.response;
  if (!res || typeof res !== 'object' || Array.isArray(res)) throw new InvalidResponse('webhook response was absent');
  if (res.uid !== uid) throw new InvalidResponse(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(res.uid ?? '')}`);
  if (typeof res.allowed !== 'boolean') throw new InvalidResponse('received invalid webhook response: response.allowed is not a boolean');
  const warnings = Array.isArray(res.warnings) ? res.warnings.filter((w: unknown): w is string => typeof w === 'string') : [];
  const status = res.status && typeof res.status === 'object' && !Array.isArray(res.status) ? res.status as ReviewStatus : undefined;
  let patch: unknown[] | undefined;
  if (res.patch !== undefined && res.patch !== null && res.patch !== '') {
    if (!mutating) throw new InvalidResponse('validating webhook may not return response.patch');
    if (res.patchType !== 'JSONPatch') throw new InvalidResponse(`expected patchType "JSONPatch", got ${JSON.stringify(res.patchType ?? '')}`);
    if (typeof res.patch !== 'string') throw new InvalidResponse('received invalid webhook response: response.patch is not base64 text');
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(res.patch, 'base64').toString('utf8'));
    } catch (e) {
      throw new InvalidResponse(`received invalid webhook response: response.patch is not a base64 JSON patch: ${(e as Error).message}`);
    }
    if (!Array.isArray(ops)) throw new InvalidResponse('received invalid webhook response: response.patch is not a JSON patch (an array of operations)');
    patch = ops;
  } else if (res.patchType !== undefined && res.patchType !== null && res.patchType !== '') {
    throw new InvalidResponse('webhook returned response.patchType but not response.patch');
  }
  return { allowed: res.allowed, status, patch, warnings };
}

/** kube's webhookerrors.ToStatusErr: the message, code (400 at least) and reason of a denial. */
export function denialStatus(webhook: string, status: ReviewStatus | undefined): { code: number; reason: string; message: string; details?: unknown } {
  const deniedBy = `admission webhook ${JSON.stringify(webhook)} denied the request`;
  const s = status ?? {};
  const code = typeof s.code === 'number' && Number.isInteger(s.code) && s.code >= 400 && s.code <= 599 ? s.code : 400;
  const message = typeof s.message === 'string' && s.message ? `${deniedBy}: ${s.message}`
    : typeof s.reason === 'string' && s.reason ? `${deniedBy}: ${s.reason}`
      : `${deniedBy} without explanation`;
  return { code, reason: typeof s.reason === 'string' ? s.reason : '', message, ...(s.details !== undefined ? { details: s.details } : {}) };
}
