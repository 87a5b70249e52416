// Storage-time defaulting, mirroring upstream: the few `default:` values cert-manager's CRDs carry
// (Gateway parentRefs' group and kind, imagePullSecrets' name), applied as kube-apiserver does, and
// its mutating webhook only stamps the requester identity onto new CertificateRequests. Everything
// else (issuerRef kind/group, rotationPolicy Always, duration 90d, key size) is a *runtime*
// default that controllers apply to a copy; the helpers below give them one definition.

import { parseDuration } from './duration.ts';
import { windowFieldNames } from './renewal-windows.ts';
import type { KubeObject, UserInfo } from './meta.ts';
import type { ResourceType } from './resources.ts';
import { schemasByKind } from './schema.ts';
import { withSchemaDefaults } from './schema-defaults.ts';
import type { CertificateSpec, CertificateStatus, IssuerRef, RenewalWindow } from './types.ts';
import { plainCopy } from './plain-copy.ts';

export interface DefaultingOptions {
  /** For a CertificateRequest create: stamped into spec.username/uid/groups/extra as upstream's webhook does. */
  requester?: UserInfo;
}

/**
 * `obj` with the CRD defaults applied, never modified: obj itself when none applies (nearly
 * every write), otherwise a copy that shares what the defaults leave alone. For admission, whose
 * store copies what it keeps: it no longer deep-copies every object to default a few (issue 17).
 */
export function withStorageDefaults<T extends KubeObject>(type: ResourceType, obj: T): T {
  const schema = type.group.endsWith('cert-manager.io') ? schemasByKind[type.kind] : undefined;
  return (schema ? withSchemaDefaults(schema, obj) : obj) as T;
}

/** Returns a new object with the storage-time defaults applied; the input is not modified. */
export function applyDefaults<T extends KubeObject>(type: ResourceType, obj: T, options: DefaultingOptions = {}): T {
  // the copy's own parts only: withStorageDefaults shares with what it is given
  const out = withStorageDefaults(type, plainCopy(obj));
  return options.requester ? withRequester(type, out, options.requester) : out;
}

/**
 * A new CertificateRequest with its creator's identity in spec.username/uid/groups/extra, as
 * cert-manager's mutating webhook stamps it (whatever the client sent: the identity must be the
 * authenticated one); `obj` itself for any other kind. Shares all but the spec with `obj`.
 */
export function withRequester<T extends KubeObject>(type: ResourceType, obj: T, user: UserInfo): T {
  if (type.group !== 'cert-manager.io' || type.kind !== 'CertificateRequest') return obj;
  const spec = { ...(obj.spec ?? {}) as Record<string, unknown> };
  spec.username = user.username;
  if (user.uid !== undefined) spec.uid = user.uid; else delete spec.uid;
  if (user.groups !== undefined) spec.groups = [...user.groups]; else delete spec.groups;
  if (user.extra !== undefined) spec.extra = plainCopy(user.extra); else delete spec.extra;
  return { ...obj, spec };
}

// ---------------------------------------------------------------------------------------------
// runtime defaults, read by controllers

export const defaultCertificateDurationMs = 2160 * 3_600_000;
export const minimumCertificateDurationMs = 3_600_000;
export const minimumRenewBeforeMs = 5 * 60_000;
export const defaultRotationPolicy = 'Always';
export const defaultIssuerKind = 'Issuer';
export const defaultIssuerGroup = 'cert-manager.io';

export function issuerRefKind(ref: IssuerRef): string {
  return ref.kind || defaultIssuerKind;
}

export function issuerRefGroup(ref: IssuerRef): string {
  return ref.group || defaultIssuerGroup;
}

/** True when two issuer references name the same issuer once empty kind/group are defaulted. */
export function sameIssuer(a: IssuerRef, b: IssuerRef): boolean {
  return a.name === b.name && issuerRefKind(a) === issuerRefKind(b) && issuerRefGroup(a) === issuerRefGroup(b);
}

export function rotationPolicyOf(spec: Pick<CertificateSpec, 'privateKey'>): 'Never' | 'Always' {
  return spec.privateKey?.rotationPolicy ?? defaultRotationPolicy;
}

/** The validity a Certificate or CertificateRequest asks for: spec.duration, else cert-manager's 90 days. */
export function durationMsOf(spec: { duration?: string }): number {
  return spec.duration ? parseDuration(spec.duration) : defaultCertificateDurationMs;
}

/** The failed-attempt counter: the seed's issuanceAttempts, else cert-manager's failedIssuanceAttempts. */
export function issuanceAttemptsOf(status: CertificateStatus | undefined): number | undefined {
  return status?.issuanceAttempts ?? status?.failedIssuanceAttempts;
}

/** A renewal window with the seed and cert-manager spellings folded into one shape. */
export interface NormalizedRenewalWindow {
  cron: string[];
  duration?: string;
  timeZone: string;
}

export function normalizeRenewalWindow(w: RenewalWindow): NormalizedRenewalWindow {
  // The spelling rule is the parser's (renewal-windows.ts), so this shape never disagrees with what the controller schedules.
  const { zoneField, durationField } = windowFieldNames(w as unknown as Record<string, unknown>);
  return {
    cron: typeof w.cron === 'string' ? [w.cron] : [...w.cron],
    duration: w[durationField],
    timeZone: w[zoneField] || 'UTC',
  };
}
