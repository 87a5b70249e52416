// What the Kubernetes API server does to an object before it is stored: kind and name checks,
// generated names, label validation, Secret stringData. Kept apart from the storage code so
// the rules read as one list.
import { randomInt } from 'node:crypto';
import type { KubeObject, Secret } from '../../api/meta.ts';
import { apiVersionOf, type ResourceType } from '../../api/resources.ts';
import { dns1123LabelError, dns1123SubdomainError } from '../../api/names.ts';
import { labelKeyProblem, labelValueProblem } from '../selectors.ts';
import { StoreError, type StatusCause } from '../store.ts';


// the alphabet of Kubernetes' utilrand.String: no vowels, so generated names spell no words
const generatedNameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

export function generatedNameSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += generatedNameAlphabet[randomInt(generatedNameAlphabet.length)];
  return s;
}

export function qualifiedResource(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/** Fills apiVersion/kind when absent; a body of another kind is a BadRequest. */
export function checkKind(type: ResourceType, obj: KubeObject): void {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new StoreError('BadRequest', 'the body must be an object');
  const apiVersion = apiVersionOf(type);
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = apiVersion;
  if (obj.kind === undefined || obj.kind === '') obj.kind = type.kind;
  if (obj.apiVersion !== apiVersion || obj.kind !== type.kind) {
    throw new StoreError('BadRequest', `the body is ${obj.apiVersion}/${obj.kind}, expected ${apiVersion}/${type.kind}`);
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) throw new StoreError('BadRequest', 'metadata must be an object');
}

/** Namespace must be given for namespaced kinds and absent for cluster-scoped ones. */
export function checkNamespace(type: ResourceType, namespace: string | undefined): string {
  if (type.namespaced) {
    if (!namespace) throw new StoreError('BadRequest', `${qualifiedResource(type)} is namespaced: a namespace is required`);
    if (dns1123LabelError(namespace)) {
      throw new StoreError('Invalid', `metadata.namespace: Invalid value: "${namespace}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
        [{ field: 'metadata.namespace', message: 'invalid namespace name', reason: 'FieldValueInvalid' }]);
    }
    return namespace;
  }
  if (namespace) throw new StoreError('BadRequest', `${qualifiedResource(type)} is cluster-scoped: namespace "${namespace}" must not be set`);
  return '';
}

export function checkName(type: ResourceType, name: string): void {
  const label = type.group === '' && type.kind === 'Namespace';
  if ((label ? dns1123LabelError(name) : dns1123SubdomainError(name)) !== undefined) {
    throw new StoreError('Invalid', `${type.kind} "${name}" is invalid: metadata.name: Invalid value: "${name}": must be a lowercase RFC 1123 ${label ? 'label' : 'subdomain'}`,
      [{ field: 'metadata.name', message: `Invalid value: "${name}"`, reason: 'FieldValueInvalid' }]);
  }
}

export function checkLabels(type: ResourceType, obj: KubeObject): void {
  const causes: StatusCause[] = [];
  const labels = obj.metadata.labels;
  if (labels !== undefined && labels !== null) {
    if (typeof labels !== 'object' || Array.isArray(labels)) {
      causes.push({ field: 'metadata.labels', message: 'must be a map of strings', reason: 'FieldValueInvalid' });
    } else {
      for (const [k, v] of Object.entries(labels)) {
        const problem = labelKeyProblem(k) ?? (typeof v === 'string' ? labelValueProblem(v) : `label "${k}" must be a string`);
        if (problem) causes.push({ field: `metadata.labels`, message: problem, reason: 'FieldValueInvalid' });
      }
    }
  }
  if (causes.length) {
    throw new StoreError('Invalid', `${type.kind} "${obj.metadata.name}" is invalid: ${causes.map((c) => c.message).join('; ')}`, causes);
  }
}

/** Merges stringData into data (base64) and defaults the type, as the Secret REST strategy does. */
export function normalizeSecret(type: ResourceType, obj: KubeObject): void {
  if (type.group !== '' || type.kind !== 'Secret') return;
  const s = obj as Secret;
  if (s.stringData && typeof s.stringData === 'object') {
    s.data = { ...(s.data ?? {}) };
    for (const [k, v] of Object.entries(s.stringData)) s.data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  }
  delete s.stringData;
  if (!s.type) s.type = 'Opaque';
}

/** An immutable Secret's data and type cannot change (the object can still be deleted). */
export function checkSecretImmutable(type: ResourceType, old: KubeObject, next: KubeObject, equal: (a: unknown, b: unknown) => boolean): void {
  if (type.group !== '' || type.kind !== 'Secret') return;
  const o = old as Secret;
  const n = next as Secret;
  if (o.immutable === true && (!equal(o.data, n.data) || o.type !== n.type || n.immutable !== true)) {
    throw new StoreError('Invalid', `Secret "${o.metadata.name}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`,
      [{ field: 'data', message: 'field is immutable when `immutable` is set', reason: 'FieldValueForbidden' }]);
  }
}

const isNamespaceType = (type: ResourceType) => type.group === '' && type.kind === 'Namespace';
/** The label every namespace carries, equal to its name (kube's LabelMetadataName, GA in 1.22). */
export const metadataNameLabel = 'kubernetes.io/metadata.name';
/** The finalizer the namespace controller holds a namespace with until its content is gone. */
const kubernetesFinalizer = 'kubernetes';

/**
 * kube's Namespace strategy: the name label is forced to the name on every write (defaulting
 * and Canonicalize); on create `spec.finalizers` gains `kubernetes`, and an update keeps the
 * stored `spec.finalizers` (kube changes them only through the finalize subresource).
 */
export function prepareNamespace(type: ResourceType, obj: KubeObject, old?: KubeObject): void {
  if (!isNamespaceType(type) || !obj.metadata.name) return;
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [metadataNameLabel]: obj.metadata.name };
  const spec = (obj.spec !== null && typeof obj.spec === 'object' ? obj.spec : {}) as { finalizers?: unknown };
  if (old) {
    const oldFinalizers = (old.spec as { finalizers?: unknown } | undefined)?.finalizers;
    if (oldFinalizers === undefined) delete spec.finalizers;
    else spec.finalizers = oldFinalizers;
  } else {
    const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
    spec.finalizers = finalizers.includes(kubernetesFinalizer) ? finalizers : [...finalizers, kubernetesFinalizer];
  }
  obj.spec = spec;
}

/** NamespaceLifecycle's refusal of new content in a terminating namespace, in kube's words. */
export function namespaceTerminating(type: ResourceType, name: string, namespace: string): StoreError {
  return new StoreError('Forbidden', `${qualifiedResource(type)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }]);
}
