// authorization.k8s.io/v1 self-reviews for the embedded server. It has one credential, the
// token in the kubeconfig it writes, and no RBAC: whoever holds the token may do everything,
// and these answers say so. `kubectl auth can-i` and tools that check access before acting
// (Helm, Argo CD, Flux) ask through them.
import { StoreError } from '../store/store.ts';

export const authorizationGroup = 'authorization.k8s.io';
export const authorizationVersion = 'v1';
const apiVersion = `${authorizationGroup}/${authorizationVersion}`;

export const allowedReason = 'certsmith server: the access token in its kubeconfig may do everything (there is no RBAC on the embedded server)';

export const authorizationResources = [
  { name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] },
  { name: 'selfsubjectrulesreviews', singularName: 'selfsubjectrulesreview', namespaced: false, kind: 'SelfSubjectRulesReview', verbs: ['create'] },
];

function invalid(kind: string, field: string, message: string): StoreError {
  return new StoreError('Invalid', `${kind}.${authorizationGroup} "" is invalid: ${field}: ${message}`, [{ field, message, reason: 'FieldValueInvalid' }]);
}

function checkEnvelope(body: unknown, kind: string): Record<string, any> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new StoreError('BadRequest', `the request body must be a ${kind} object`);
  const b = body as Record<string, any>;
  if (b.apiVersion !== undefined && b.apiVersion !== apiVersion) throw new StoreError('BadRequest', `the API version in the data (${b.apiVersion}) does not match the expected API version (${apiVersion})`);
  if (b.kind !== undefined && b.kind !== kind) throw new StoreError('BadRequest', `the kind in the data (${b.kind}) does not match the expected kind (${kind})`);
  if (b.spec !== undefined && (b.spec === null || typeof b.spec !== 'object' || Array.isArray(b.spec))) throw invalid(kind, 'spec', 'must be an object');
  return b;
}

/** Answers a SelfSubjectAccessReview: the request, validated as kube-apiserver does, with status.allowed true. */
export function reviewAccess(body: unknown): Record<string, unknown> {
  const kind = 'SelfSubjectAccessReview';
  const b = checkEnvelope(body, kind);
  const spec = (b.spec ?? {}) as Record<string, unknown>;
  const hasResource = spec.resourceAttributes !== undefined && spec.resourceAttributes !== null;
  const hasNonResource = spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null;
  if (hasResource === hasNonResource) {
    throw invalid(kind, 'spec.resourceAttributes', 'exactly one of nonResourceAttributes or resourceAttributes must be specified');
  }
  return {
    kind, apiVersion,
    metadata: { ...(b.metadata && typeof b.metadata === 'object' ? b.metadata : {}), creationTimestamp: null },
    spec,
    status: { allowed: true, reason: allowedReason },
  };
}

/** Answers a SelfSubjectRulesReview: every verb on every resource and URL, in any namespace. */
export function reviewRules(body: unknown): Record<string, unknown> {
  const kind = 'SelfSubjectRulesReview';
  const b = checkEnvelope(body, kind);
  const spec = (b.spec ?? {}) as Record<string, unknown>;
  return {
    kind, apiVersion,
    metadata: { ...(b.metadata && typeof b.metadata === 'object' ? b.metadata : {}), creationTimestamp: null },
    spec,
    status: {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    },
  };
}
