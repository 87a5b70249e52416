// The self-reviews of the embedded server: kinds that are answered, never stored. It has one
// credential, the token in the kubeconfig it writes, and no RBAC: whoever holds the token may
// do everything, and these answers say so. `kubectl auth can-i` and tools that check access
// before acting (Helm, Argo CD, Flux) ask authorization.k8s.io; `kubectl auth whoami` asks
// authentication.k8s.io who the token is.
import type { UserInfo } from '../api/meta.ts';
import { StoreError } from '../store/store.ts';

export const allowedReason = 'certsmith server: the access token in its kubeconfig may do everything (there is no RBAC on the embedded server)';

interface ReviewResource {
  name: string;
  singularName: string;
  namespaced: false;
  kind: string;
  verbs: ['create'];
  /** the answer to a POST of `body` by `user` */
  answer(body: unknown, user: UserInfo): Record<string, unknown>;
}

/** A group/version whose resources are all self-reviews. */
export interface ReviewAPI {
  group: string;
  version: string;
  resources: ReviewResource[];
}

const review = (kind: string, answer: ReviewResource['answer']): ReviewResource =>
  ({ name: `${kind.toLowerCase()}s`, singularName: kind.toLowerCase(), namespaced: false, kind, verbs: ['create'], answer });

export const reviewAPIs: ReviewAPI[] = [
  { group: 'authorization.k8s.io', version: 'v1', resources: [review('SelfSubjectAccessReview', reviewAccess), review('SelfSubjectRulesReview', reviewRules)] },
  { group: 'authentication.k8s.io', version: 'v1', resources: [review('SelfSubjectReview', reviewSelf)] },
];

export function reviewAPI(group: string, version: string): ReviewAPI | undefined {
  return reviewAPIs.find((a) => a.group === group && a.version === version);
}

/** A resource as discovery lists it. */
export function discoveryEntry({ answer: _answer, ...listed }: ReviewResource) {
  return listed;
}

function invalid(apiVersion: string, kind: string, field: string, message: string): StoreError {
  const group = apiVersion.split('/')[0];
  return new StoreError('Invalid', `${kind}.${group} "" is invalid: ${field}: ${message}`, [{ field, message, reason: 'FieldValueInvalid' }]);
}

function checkEnvelope(body: unknown, apiVersion: string, kind: string): Record<string, any> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new StoreError('BadRequest', `the request body must be a ${kind} object`);
  const b = body as Record<string, any>;
  if (b.apiVersion !== undefined && b.apiVersion !== apiVersion) throw new StoreError('BadRequest', `the API version in the data (${b.apiVersion}) does not match the expected API version (${apiVersion})`);
  if (b.kind !== undefined && b.kind !== kind) throw new StoreError('BadRequest', `the kind in the data (${b.kind}) does not match the expected kind (${kind})`);
  if (b.spec !== undefined && (b.spec === null || typeof b.spec !== 'object' || Array.isArray(b.spec))) throw invalid(apiVersion, kind, 'spec', 'must be an object');
  return b;
}

/** Answers a SelfSubjectAccessReview: the request, validated as kube-apiserver does, with status.allowed true. */
function reviewAccess(body: unknown): Record<string, unknown> {
  const kind = 'SelfSubjectAccessReview';
  const apiVersion = 'authorization.k8s.io/v1';
  const b = checkEnvelope(body, apiVersion, kind);
  const spec = (b.spec ?? {}) as Record<string, unknown>;
  const hasResource = spec.resourceAttributes !== undefined && spec.resourceAttributes !== null;
  const hasNonResource = spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null;
  if (hasResource === hasNonResource) {
    throw invalid(apiVersion, kind, 'spec.resourceAttributes', 'exactly one of nonResourceAttributes or resourceAttributes must be specified');
  }
  return {
    kind, apiVersion,
    metadata: { ...(b.metadata && typeof b.metadata === 'object' ? b.metadata : {}), creationTimestamp: null },
    spec,
    status: { allowed: true, reason: allowedReason },
  };
}

/** Answers a SelfSubjectRulesReview: every verb on every resource and URL, in any namespace. */
function reviewRules(body: unknown): Record<string, unknown> {
  const kind = 'SelfSubjectRulesReview';
  const apiVersion = 'authorization.k8s.io/v1';
  const b = checkEnvelope(body, apiVersion, kind);
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

/** Answers a SelfSubjectReview: who the request authenticated as. */
function reviewSelf(body: unknown, user: UserInfo): Record<string, unknown> {
  const kind = 'SelfSubjectReview';
  const apiVersion = 'authentication.k8s.io/v1';
  const b = checkEnvelope(body, apiVersion, kind);
  return {
    kind, apiVersion,
    metadata: { ...(b.metadata && typeof b.metadata === 'object' ? b.metadata : {}), creationTimestamp: null },
    status: { userInfo: { ...user } },
  };
}
