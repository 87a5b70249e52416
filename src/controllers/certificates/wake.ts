// Which changes wake which certificate controller (issue 17: about 50 reconciles per issuance,
// because every controller woke for every write to a Certificate, its Secrets and its requests).
// Each controller gets a set of pure predicates over what changed; watchCertificateGraph (gather.ts)
// asks them before enqueueing. A predicate says yes whenever a field its controller reads changed
// in a way the controller could act on; it may say yes too often, never too rarely. Deleting a
// Certificate always wakes everyone. Bookkeeping (resourceVersion, managedFields) never counts.
import { getCondition, isTrue } from '../../api/conditions.ts';
import type { Secret } from '../../api/meta.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { rotationPolicyOf } from '../../api/defaults.ts';
import { ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION } from '../../api/annotations.ts';
import { revisionOf } from '../../shared/revisions.ts';
import { isFinished } from './requestmanager/requestmanager.ts';

export interface CertificateWakes {
  /** a Certificate appeared (created, or listed at start); targetSecret is its cached Secret, if any */
  added(crt: CertificateObj, targetSecret: Secret | undefined): boolean;
  changed(old: CertificateObj, crt: CertificateObj): boolean;
  /** crt's spec.secretName Secret was added (old undefined), changed, or deleted (next undefined) */
  targetSecret(crt: CertificateObj, old: Secret | undefined, next: Secret | undefined): boolean;
  /** a next-private-key Secret controlled by crt */
  nextKeySecret(crt: CertificateObj, old: Secret | undefined, next: Secret | undefined): boolean;
  /** a CertificateRequest controlled by crt */
  request(crt: CertificateObj, old: CertificateRequestObj | undefined, next: CertificateRequestObj | undefined): boolean;
}

/** Every change wakes: the behaviour before predicates, for controllers that read everything. */
export const wakeOnEverything: CertificateWakes = {
  added: () => true, changed: () => true, targetSecret: () => true, nextKeySecret: () => true, request: () => true,
};

const READINESS_CONDITIONS = new Set(['Ready', 'RenewalDisabled', 'RenewalConfigInvalid', 'RenewalWindow']);

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function isIssuing(crt: CertificateObj): boolean {
  return isTrue(crt.status?.conditions, 'Issuing');
}

function isReady(crt: CertificateObj): boolean {
  return isTrue(crt.status?.conditions, 'Ready');
}

function nextKeyName(crt: CertificateObj): string | undefined {
  return crt.status?.nextPrivateKeySecretName;
}

/** What people and other tools ask of a Certificate: everything but status and write bookkeeping. */
function intent(crt: CertificateObj): unknown[] {
  const m = crt.metadata;
  return [m.generation, m.labels, m.annotations, m.ownerReferences, m.finalizers, m.deletionTimestamp, crt.spec];
}

/** The Certificate without the fields readiness derives from the Secret (trigger and issuing write them computed by the same function). */
function withoutReadiness(crt: CertificateObj): unknown[] {
  const { notBefore: _nb, notAfter: _na, renewalTime: _rt, renewal: _r, conditions, ...rest } = crt.status ?? {};
  return [intent(crt), rest, conditions?.filter((c) => !READINESS_CONDITIONS.has(c.type))];
}

/**
 * Whether a Secret's content changed: data, type, labels, annotations, owners. A Secret cached as
 * metadata only hides its data, so any new version of it counts as changed.
 */
export function secretChanged(old: Secret | undefined, next: Secret | undefined): boolean {
  if (!old || !next) return true;
  if (!old.data || !next.data) return old.metadata.resourceVersion !== next.metadata.resourceVersion;
  const view = (s: Secret) => [s.type, s.data, s.metadata.labels, s.metadata.annotations, s.metadata.ownerReferences, s.metadata.deletionTimestamp];
  return !same(view(old), view(next));
}

/** Whether a request's spec or metadata changed (added and deleted count); status is left out. */
export function requestIntentChanged(old: CertificateRequestObj | undefined, next: CertificateRequestObj | undefined): boolean {
  if (!old || !next) return true;
  const view = (r: CertificateRequestObj) => [r.metadata.labels, r.metadata.annotations, r.metadata.ownerReferences, r.metadata.deletionTimestamp, r.spec];
  return !same(view(old), view(next));
}

function requestChanged(old: CertificateRequestObj | undefined, next: CertificateRequestObj | undefined): boolean {
  return requestIntentChanged(old, next) || !same(old!.status, next!.status);
}

/**
 * Trigger: never acts while Issuing is True, and reads neither the next private key nor the
 * readiness fields; needs the issuance ending (to schedule the renewal), spec and Secret edits.
 */
export const triggerWakes: CertificateWakes = {
  added: () => true,
  changed: (old, crt) => !isIssuing(crt) && !same(withoutReadiness(old), withoutReadiness(crt)),
  targetSecret: (crt, old, next) => !isIssuing(crt) && secretChanged(old, next),
  nextKeySecret: () => false,
  request: (crt, old, next) => !isIssuing(crt) && requestIntentChanged(old, next),
};

/**
 * Key manager: acts while Issuing is True (one next key, named in status) and when it ends
 * (delete the next key); a Certificate neither issuing nor naming a next key has nothing for it.
 */
export const keyManagerWakes: CertificateWakes = {
  added: (crt) => isIssuing(crt) || nextKeyName(crt) !== undefined,
  changed: (old, crt) => (isIssuing(old) || isIssuing(crt) || nextKeyName(old) !== undefined || nextKeyName(crt) !== undefined) &&
    !same([intent(old), isIssuing(old), nextKeyName(old)], [intent(crt), isIssuing(crt), nextKeyName(crt)]),
  nextKeySecret: (crt, old, next) => {
    // deleted after issuing ended: the key manager's own clean-up
    if (!next) return isIssuing(crt) || nextKeyName(crt) !== undefined;
    // added while issuing and none named yet: the key manager's own, named by the status write
    // that follows in the same reconcile (which is retried if that write fails)
    if (!old) return !(isIssuing(crt) && nextKeyName(crt) === undefined);
    return secretChanged(old, next);
  },
  // read only to reuse the key (rotationPolicy Never) when no next key exists yet
  targetSecret: (crt, old, next) => isIssuing(crt) && nextKeyName(crt) === undefined && rotationPolicyOf(crt.spec) === 'Never' && secretChanged(old, next),
  request: () => false,
};

/**
 * Request manager: acts only while Issuing is True and a next key is named; reads the spec, the
 * Issuing condition, the revision and failure count, the named key's Secret and its requests'
 * spec and outcome (finished or not).
 */
export const requestManagerWakes: CertificateWakes = {
  added: (crt) => isIssuing(crt),
  changed: (old, crt) => {
    if (!isIssuing(crt) || nextKeyName(crt) === undefined) return false;
    const view = (c: CertificateObj) => [intent(c), getCondition(c.status?.conditions, 'Issuing'), nextKeyName(c), c.status?.revision,
      c.status?.issuanceAttempts, c.status?.failedIssuanceAttempts, c.status?.lastFailureTime];
    return !same(view(old), view(crt));
  },
  nextKeySecret: (crt, old, next) => isIssuing(crt) && (next ?? old)!.metadata.name === nextKeyName(crt) && secretChanged(old, next),
  targetSecret: () => false,
  request: (crt, old, next) => isIssuing(crt) &&
    (requestIntentChanged(old, next) || isFinished(old!) !== isFinished(next!) || old!.status?.failureTime !== next!.status?.failureTime),
};

/**
 * Issuing: while Issuing is True, acts on a request's outcome (its status), on a changed next
 * key and, for a temporary certificate, on the Secret; once Issuing ends, keeps the Secret's
 * extra outputs and template metadata in line with the spec (upkeep).
 */
export const issuingWakes: CertificateWakes = {
  // upkeep needs a Secret; issuing needs a status
  added: (crt, secret) => crt.status !== undefined || secret !== undefined,
  changed: (old, crt) => (isIssuing(old) && !isIssuing(crt)) ||
    !same([intent(old), old.status?.revision, old.status?.issuanceAttempts, old.status?.failedIssuanceAttempts],
      [intent(crt), crt.status?.revision, crt.status?.issuanceAttempts, crt.status?.failedIssuanceAttempts]),
  targetSecret: (crt, old, next) => (!isIssuing(crt) || crt.metadata.annotations?.[ISSUE_TEMPORARY_CERTIFICATE_ANNOTATION] === 'true') && secretChanged(old, next),
  nextKeySecret: (crt, old, next) => isIssuing(crt) && (next ?? old)!.metadata.name === nextKeyName(crt) && secretChanged(old, next),
  // a new request has no outcome yet: its status write wakes issuing
  request: (crt, old, next) => isIssuing(crt) && (!old ? !!next?.status?.conditions?.length : !next || requestChanged(old, next)),
};

/**
 * Readiness: derives Ready, notBefore/notAfter/renewalTime from the Secret and the current
 * revision's request. The trigger and issuing write those fields computed by the same function
 * in the writes that change Issuing, so those writes need no second look; the ARI answer
 * (status.acme) and the spec change the renewal time. A new notAfter does need one: readiness
 * schedules its look at expiry from it (and, with renewal windows, counts the renewal as
 * deferred or bypassed), with no other write to wake it if the next renewal fails.
 */
export const readinessWakes: CertificateWakes = {
  added: () => true,
  changed: (old, crt) => !same([intent(old), old.status?.acme, old.status?.notAfter], [intent(crt), crt.status?.acme, crt.status?.notAfter]) ||
    (!!crt.spec.renewal?.windows?.length && old.status?.renewalTime !== crt.status?.renewalTime),
  targetSecret: (_crt, old, next) => secretChanged(old, next),
  nextKeySecret: () => false,
  request: (crt, old, next) => {
    const current = crt.status?.revision;
    return current !== undefined && (revisionOf((old ?? next)!) === current || revisionOf((next ?? old)!) === current) && requestIntentChanged(old, next);
  },
};

/** Revision manager: prunes requests of a Ready Certificate beyond revisionHistoryLimit. */
export const revisionManagerWakes: CertificateWakes = {
  added: (crt) => isReady(crt),
  changed: (old, crt) => isReady(crt) &&
    !same([isReady(old), old.status?.revision, old.spec.revisionHistoryLimit], [true, crt.status?.revision, crt.spec.revisionHistoryLimit]),
  targetSecret: () => false,
  nextKeySecret: () => false,
  // a deleted request only shortens the list
  request: (crt, old, next) => isReady(crt) && next !== undefined && requestIntentChanged(old, next),
};

/** Everything that changed, for Certificates `applies` says a controller serves (e.g. ACME issuers with ARI). */
export function wakesWhen(applies: (crt: CertificateObj) => boolean): CertificateWakes {
  return {
    added: (crt) => applies(crt),
    changed: (old, crt) => (applies(old) || applies(crt)) && !same(withoutBookkeeping(old), withoutBookkeeping(crt)),
    targetSecret: (crt, old, next) => applies(crt) && secretChanged(old, next),
    nextKeySecret: () => false,
    request: () => false,
  };
}

function withoutBookkeeping(crt: CertificateObj): unknown[] {
  return [intent(crt), crt.status];
}
