// What the Kubernetes API server does to an object before it is stored: kind and name checks,
// generated names, label, finalizer and owner reference validation, Secret stringData and
// validation, the Namespace strategy. Kept apart from the storage code so the rules read as one
// list.
import { randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, Secret } from '../../api/meta.ts';
import { allowsUnconditionalUpdate, apiVersionOf, isNamespaceType, type ResourceType } from '../../api/resources.ts';
import { dns1123LabelError, dns1123SubdomainError, qualifiedNameError } from '../../api/names.ts';
import { labelKeyProblem, labelValueProblem } from '../selectors.ts';
import { StoreError, invalidObjectError, type StatusCause } from '../store.ts';
import { Errors, GoLiteral, goStringSlice, mapKey } from '../../api/validation/field-errors.ts';
import { byCodeUnits } from '../../api/ordering.ts';

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

/** kube's rest.Update: a kind whose strategy does not allow unconditional updates needs the resourceVersion it replaces. */
export function checkUnconditionalUpdate(type: ResourceType, obj: KubeObject): void {
  if (obj.metadata.resourceVersion || allowsUnconditionalUpdate(type)) return;
  throw invalidObjectError(type, obj.metadata.name ?? '', [{ field: 'metadata.resourceVersion', value: new GoLiteral('0x0'), message: 'must be specified for an update', reason: 'FieldValueInvalid' }]);
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

/** A Namespace's name is a DNS-1123 label, any other a subdomain; the refusal gives kube's rule, which kubectl prints. */
export function checkName(type: ResourceType, name: string): void {
  const problem = isNamespaceType(type) ? dns1123LabelError(name) : dns1123SubdomainError(name);
  if (problem !== undefined) throw invalidObjectError(type, name, [{ field: 'metadata.name', value: name, message: problem, reason: 'FieldValueInvalid' }]);
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

/**
 * A patch may not rename or move the object it patches: kube-apiserver's checkName after the
 * patch is applied (a 400), where quietly keeping the URL's name would report "patched" for a
 * change that never happened.
 */
export function checkPatchedIdentity(type: ResourceType, o: KubeObject, namespace: string | undefined, name: string): void {
  if (o.metadata.name !== undefined && o.metadata.name !== name) {
    throw new StoreError('BadRequest', `the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`);
  }
  if (type.namespaced && namespace && o.metadata.namespace !== undefined && o.metadata.namespace !== namespace) {
    throw new StoreError('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  }
}

/**
 * kube's ObjectMeta rules for finalizers and owner references (ValidateFinalizers,
 * ValidateOwnerReferences): qualified finalizer names, not orphan and foregroundDeletion
 * together, every reference complete, no Event as an owner, at most one controller.
 */
/**
 * Empty labels, annotations, finalizers and ownerReferences are not stored, as ObjectMeta's
 * omitempty leaves them out: `labels: {}` kept after create (or after the last label went)
 * made `kubectl diff` of the same file report a change.
 */
export function dropEmptyMetadata(obj: KubeObject): void {
  const meta = obj.metadata as Record<string, unknown>;
  for (const f of ['labels', 'annotations'] as const) {
    const v = meta[f];
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).length) delete meta[f];
  }
  for (const f of ['finalizers', 'ownerReferences'] as const) {
    const v = meta[f];
    if (Array.isArray(v) && !v.length) delete meta[f];
  }
}

export function checkFinalizersAndOwners(type: ResourceType, obj: KubeObject): void {
  const errs = new Errors();
  const finalizers: unknown[] = Array.isArray(obj.metadata.finalizers) ? obj.metadata.finalizers : [];
  for (const f of finalizers) {
    const problem = typeof f === 'string' ? qualifiedNameError(f) : 'must be a string';
    if (problem) errs.invalid('metadata.finalizers', f, problem);
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.invalid('metadata.finalizers', goStringSlice(finalizers.map(String)), 'finalizer orphan and foregroundDeletion cannot be both set');
  }
  let controller = '';
  for (const ref of Array.isArray(obj.metadata.ownerReferences) ? obj.metadata.ownerReferences : []) {
    const r = (ref ?? {}) as { apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean };
    const apiVersion = r.apiVersion ?? '';
    if (!apiVersion.split('/').pop()) errs.invalid('metadata.ownerReferences.apiVersion', apiVersion, 'version must not be empty');
    if (!r.kind) errs.invalid('metadata.ownerReferences.kind', r.kind ?? '', 'kind must not be empty');
    if (!r.name) errs.invalid('metadata.ownerReferences.name', r.name ?? '', 'name must not be empty');
    if (!r.uid) errs.invalid('metadata.ownerReferences.uid', r.uid ?? '', 'uid must not be empty');
    // an Event is deleted by its TTL, whatever it owned would go with it (kube's BannedOwners)
    if (apiVersion === 'v1' && r.kind === 'Event') errs.invalid('metadata.ownerReferences', new GoLiteral(`v1.OwnerReference{Kind:"Event", Name:${JSON.stringify(r.name ?? '')}}`), '/v1, Kind=Event is disallowed from being an owner');
    if (r.controller === true) {
      const here = `${r.kind}/${r.name}`;
      if (controller) errs.invalid('metadata.ownerReferences', new GoLiteral('[]v1.OwnerReference{...}'), `Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${here}`);
      else controller = here;
    }
  }
  if (errs.list.length) throw invalidObjectError(type, obj.metadata.name ?? '', errs.list);
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

const configKeyRule = 'a valid config key must consist of alphanumeric characters, \'-\', \'_\' or \'.\' (e.g. \'key.name\',  or \'KEY_NAME\',  or \'key-name\', regex used for validation is \'[-._a-zA-Z0-9]+\')';
/** a Secret's data, all keys together (kube's MaxSecretSize) */
const maxSecretBytes = 1024 * 1024;

/** kube's IsConfigMapKey: a data key becomes a file name where the Secret is mounted. */
function configKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push('must be no more than 253 characters');
  if (!/^[-._a-zA-Z0-9]+$/.test(key)) problems.push(configKeyRule);
  if (key === '.') problems.push('must not be \'.\'');
  else if (key === '..') problems.push('must not be \'..\'');
  else if (key.startsWith('..')) problems.push('must not start with \'..\'');
  return problems;
}

/**
 * kube-apiserver's ValidateSecret (and ValidateSecretUpdate with the stored one): data keys,
 * the 1 MiB limit, each type's required keys, the type immutable, and an immutable Secret's data
 * and flag. Throws a 422 naming every problem; data keys in order, where Go's map order is random.
 */
export function validateSecret(type: ResourceType, obj: KubeObject, old?: KubeObject): void {
  if (type.group !== '' || type.kind !== 'Secret') return;
  const s = obj as Secret;
  const errs = new Errors();
  if (old) {
    const o = old as Secret;
    if (s.type !== o.type) errs.invalid('type', s.type, 'field is immutable');
    if (o.immutable === true) {
      if (s.immutable !== true) errs.forbidden('immutable', 'field is immutable when `immutable` is set');
      if (!isDeepStrictEqual(s.data ?? {}, o.data ?? {})) errs.forbidden('data', 'field is immutable when `immutable` is set');
    }
  }
  const data = s.data ?? {};
  let bytes = 0;
  for (const key of Object.keys(data).sort(byCodeUnits)) {
    for (const problem of configKeyProblems(key)) errs.invalid(mapKey('data', key), key, problem);
    bytes += Buffer.byteLength(String(data[key] ?? ''), 'base64');
  }
  if (bytes > maxSecretBytes) errs.tooLong('data', maxSecretBytes);
  const has = (key: string) => Object.hasOwn(data, key);
  switch (s.type) {
    case 'kubernetes.io/service-account-token':
      if (!s.metadata.annotations?.['kubernetes.io/service-account.name']) errs.required(mapKey('metadata.annotations', 'kubernetes.io/service-account.name'));
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = s.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) {
        errs.required(mapKey('data', key));
        break;
      }
      try {
        const parsed: unknown = JSON.parse(Buffer.from(String(data[key]), 'base64').toString('utf8'));
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('json: cannot unmarshal into Go value of type map[string]interface {}');
      } catch (e) {
        errs.invalid(mapKey('data', key), '<secret contents redacted>', (e as Error).message);
      }
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) {
        errs.required(mapKey('data', 'username'));
        errs.required(mapKey('data', 'password'));
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (!data['ssh-privatekey']) errs.required(mapKey('data', 'ssh-privatekey'));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) errs.required(mapKey('data', 'tls.crt'));
      if (!has('tls.key')) errs.required(mapKey('data', 'tls.key'));
      break;
    default:
  }
  if (errs.list.length) throw invalidObjectError(type, s.metadata.name ?? '', errs.list);
}

/** metav1.Time and MicroTime: RFC 3339, seconds or fractions of them. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Leases and Events as kube-apiserver decodes and validates them: a value of the wrong type, or
 * a time that does not parse, cannot be decoded (400); then the validation rules (422). They were
 * stored as sent, and a Lease with a duration of "ten" reached the leader election.
 */
export function validateCoreKind(type: ResourceType, obj: KubeObject): void {
  const lease = type.group === 'coordination.k8s.io' && type.kind === 'Lease';
  const event = type.group === '' && type.kind === 'Event';
  if (!lease && !event) return;
  const o = obj as unknown as Record<string, unknown>;
  const undecodable = (why: string) => new StoreError('BadRequest', `${type.kind} in version "v1" cannot be handled as a ${type.kind}: ${why}`);
  const int32 = (v: unknown, path: string, struct: string) => {
    if (v !== undefined && v !== null && !(typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2 ** 31)) {
      throw undecodable(`json: cannot unmarshal ${typeof v === 'number' ? 'number' : typeof v} into Go struct field ${struct}.${path} of type int32`);
    }
  };
  const time = (v: unknown) => {
    if (v !== undefined && v !== null && !(typeof v === 'string' && RFC3339.test(v) && !Number.isNaN(Date.parse(v)))) throw undecodable(`parsing time ${JSON.stringify(String(v))}: not an RFC 3339 time`);
  };
  const errs = new Errors();
  if (lease) {
    const spec = (o.spec ?? {}) as Record<string, unknown>;
    int32(spec.leaseDurationSeconds, 'spec.leaseDurationSeconds', 'LeaseSpec');
    int32(spec.leaseTransitions, 'spec.leaseTransitions', 'LeaseSpec');
    time(spec.acquireTime);
    time(spec.renewTime);
    if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) errs.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0');
    if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) errs.invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0');
  } else {
    int32(o.count, 'count', 'Event');
    for (const f of ['firstTimestamp', 'lastTimestamp', 'eventTime']) time(o[f]);
    const involvedNs = (o.involvedObject as { namespace?: unknown } | undefined)?.namespace;
    if (typeof involvedNs === 'string' && involvedNs && involvedNs !== obj.metadata.namespace) errs.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace');
  }
  if (errs.list.length) throw invalidObjectError(type, obj.metadata.name ?? '', errs.list);
}

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
